"""ncs: Neural Cloud Storage -- cold videos kept at low resolution, restored by super-resolution.

Source: Lim et al., "Efficient Disaggregated Cloud Storage for Cold Videos With Neural
Enhancement", IEEE Micro 2025 (digest shared/research/ncs.md; line numbers Lnnn below are the
digest's references into the article).

Mechanism, per video (digest M1-M3):

    store      the HR original (baseline) or an LR copy (NCS) in an S3 tier:
               size x $/GB-month x 12, at least the tier's minimum duration   (cost block)
    access     each view reads the stored file: size x $/GB retrieved + GET fees
               NCS also restores it on a GPU spot instance: SR inference on anchor frames
               + lossless packing of the restored anchors, billed per busy second
    TCO/year   storage + views x (retrieval + SR) + amortized DNN training (L432-436)

The baseline places the HR file in its cheapest tier of the tier set ("Baseline Pareto",
L539); NCS places the LR file in its cheapest tier (``placement``).  Restore latency: see
``restore``.  Fleet metrics average over a lognormal of annual views in closed form
(``popularity``, ``fleet``).  ``dse optimize ncs-tiers`` assigns tiers per popularity bucket
under fleet availability / latency targets (``optimize``).

Family ``cold-storage`` (common metrics): the unit of work is a TB-month of HR video kept
(``stored_tb`` of originals; NCS keeps them as LR copies it can restore).  ``stored_tb`` /
``restores_per_tb_month`` describe a fleet: ``stored_tb`` / HR size videos whose annual views
average ``12 x restores_per_tb_month`` (one restore = one view of a whole video), spread with
the ``popularity`` shape (its sigma; the median is set by that mean).  For the family columns
these knobs win over the per-video ``access_interval_days`` and ``popularity_scale_x``, and
``years`` over ``horizon_years``; the article's own metrics keep those.  The fleet's yearly
bill (fleet metrics' rule: NCS only where it pays, the design's cheapest tier of the set) is
``opex_usd_per_year``; NCS owns no hardware (S3 + GPU spot instances), so ``capex_usd`` =
``power_w`` = 0.  ``restore_latency_s`` is the article's per-video latency.

Fitted constants (``calibration``): SR and pack stage times (to Fig 6d), GPU busy fraction
(to the best content's 40.8% saving at 45 days, Fig 5a, L545).  Everything else comes from the
article, the cost block's dated price tables, or a stated assumption.  The defaults describe
the typical video (half the article's "up to 15%" SR-aware bitrate saving, ``video``) over the
issue's view distribution through the article's coverage points (``popularity``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import BITS_PER_BYTE, DAYS_PER_MONTH, DAYS_PER_YEAR, GB, MB, S_PER_HOUR, TB
from models.ncs import calibration as cal
from models.ncs import placement, popularity, restore, tiers, video

S_PER_MIN = 60.0
DESIGNS = ("baseline", "ncs")
TIER_CHOICES = ("auto",) + tiers.TIERS
_PIXEL_SCALE = {k: float(video.pixel_scale(v)) for k, v in video.RESOLUTION_PIXELS.items()}
_SIZE_SCALE = {k: v**video.SIZE_PIXEL_EXPONENT for k, v in _PIXEL_SCALE.items()}  # HR size over 2160p's
_HR_BITRATE_MBIT_S = video.HR_MB_PER_MIN_2160P * BITS_PER_BYTE / S_PER_MIN
#: Assumption: one fine-tuning run of the ~100 KB EDSR-style DNN per cluster takes about one
#: GPU-hour (no figure in the article; training is excluded from its TCO, L535).
CLUSTER_TRAIN_GPU_H = 1.0
#: 40 sports videos formed 6 clusters of 4-8 videos (L559).
CLUSTER_VIDEOS = 40.0 / 6.0
S_PER_MONTH = DAYS_PER_MONTH * 24.0 * S_PER_HOUR
#: Floor of the family's mean views a year (a lognormal needs a positive mean).
MIN_FLEET_VIEWS_PER_YEAR = 1e-9


class Ncs(Model):
    name = "ncs"
    version = "1"
    summary = "Neural cloud storage for cold videos: LR storage + SR restore, tier choice, TCO, restore latency"
    source = "Lim et al., IEEE Micro 2025 (NCS; HotStorage'23 'Neural cloud storage'); digest shared/research/ncs.md"
    variant_param = "design"
    family = "cold-storage"
    boundary = (
        "NCS owns no hardware: capex_usd = power_w = 0; the fleet's S3 bill (storage, retrieval) and the GPU spot "
        "instances that restore videos (and amortized DNN training where include_training) are opex_usd_per_year"
    )
    params = (
        Param("design", "ncs", "article: Baseline (HR in the best S3 tier, L539) vs NCS", choices=DESIGNS),
        Param("access_interval_days", 45.0, "Fig 5(a) compares TCO at a 45-day access interval (L545)", bounds=(1e-5, 36500.0),
              doc="days between views of the video (365.25 / views per year)"),
        Param("video_min", 1.0, "evaluation clips are one minute long (L535)", bounds=(0.1, 600.0)),
        Param("resolution", "2160p", "evaluation videos are 2160p (L535)", choices=video.RESOLUTIONS, doc="HR resolution"),
        Param("hr_2160p_bitrate_mbit_s", _HR_BITRATE_MBIT_S, "703 MB for a 10-min 4K video (L577)", bounds=(1.0, 200.0),
              doc="HR bitrate at 2160p; other resolutions scale with pixels^0.30 (video.py)"),
        Param("downscale_x", video.FHD_DOWNSCALE_X, "4K -> FHD, the article's example (L451)", bounds=(1.0, 4.0),
              doc="HR/LR side ratio (2 = 4K to FHD); SR quality is not modeled"),
        Param("sr_aware_encoding", True, "NCS encodes the LR copy SR-aware (L563)", choices=(True, False)),
        Param("sr_bitrate_saving_frac", video.SR_BITRATE_SAVING_FRAC,
              "up to 15% lower bitrate at equal SR quality (L563); assumption: the typical video gets half of it "
              "(video.py; 0.15 = the best content)", bounds=(0.0, 0.5)),
        Param("sr_aware_decoding", True, "NCS picks anchor frames and per-frame DNN complexity (L573)", choices=(True, False)),
        Param("sr_inference_saving_frac", cal.SR_INFERENCE_SAVING_FRAC, "SR-aware decoding cuts inference 62% vs naive SR (L573)",
              bounds=(0.0, 0.95)),
        Param("sr_time_vs_playback_x", cal.SR_S_PER_MIN / S_PER_MIN, "fitted to Fig 6(d) (+63% / -36%, L577), see calibration.py",
              bounds=(0.0, 10.0), doc="SR stage seconds per second of 2160p video (SR-aware decoding on)"),
        Param("pack_time_vs_playback_x", cal.PACK_S_PER_MIN / S_PER_MIN, "fitted to Fig 6(d) (+63% / -36%, L577), see calibration.py",
              bounds=(0.0, 10.0), doc="pack stage (lossless anchors + mux) seconds per second of 2160p video"),
        Param("gpu_usd_per_hour", cal.GPU_USD_PER_HOUR, "g6e.xlarge spot US$0.185/h (L539; cost block instances.csv)",
              bounds=(0.01, 20.0)),
        Param("gpu_busy_frac", cal.GPU_BUSY_FRAC, "fitted to Fig 5(a): best content saves 40.8% at 45 days (L545), see calibration.py",
              bounds=(0.01, 1.0),
              doc="share of billed GPU-instance time spent restoring"),
        Param("tier", "auto", "auto = cheapest tier of the tier set, as the article's Pareto (L539)", choices=TIER_CHOICES),
        Param("tier_set", "instant", "digest section 7.1: S3 Standard / Standard-IA / Glacier Instant Retrieval",
              choices=tiers.TIER_SET_NAMES, doc="tiers that 'auto' and the fleet metrics choose from"),
        Param("frequent_volume", "over_500tb", "the article's Frequent price US$0.021 is S3 Standard over 500 TB/month (L413)",
              choices=tiers.FREQUENT_VOLUMES),
        Param("storage_price_scale", 1.0, "cost block prices as dated; 1 = list price", bounds=(0.1, 10.0)),
        Param("retrieval_price_scale", 1.0, "cost block prices as dated; 1 = list price", bounds=(0.1, 10.0)),
        Param("request_fees", False, "the article's TCO counts storage and retrieval only; request fees excluded (digest section 7.7)",
              choices=(True, False), doc="add S3 PUT/GET fees (per object, per subvideo GET) to the per-video cost"),
        Param("horizon_years", 1.0, "assumption: one year, the article's annual view counts (digest section 7.7)",
              bounds=(0.1, 10.0), doc="storage period; minimum-duration charges and training are spread over it"),
        Param("pipelining", True, "NCS restores in pipelined subvideos (L519-L523)", choices=(True, False)),
        Param("subvideo_mb", cal.SUBVIDEO_MB, "minimum subvideo size 100 MB (L577)", bounds=(1.0, 10000.0)),
        Param("storage_stream_mbps", cal.STREAM_MBPS, "AWS S3 performance guidelines: 85-90 MB/s per connection",
              bounds=(1.0, 10000.0)),
        Param("popularity", popularity.DEFAULT_POPULARITY,
              "issue 7: heavy-tailed (lognormal) fit through the article's coverage points, 50% at 0.85 views/month "
              "(L413) and 78% at 91 views/year (L415); alternative: sigma from McGrady's view concentration (L403)",
              choices=popularity.POPULARITY_NAMES),
        Param("popularity_scale_x", 1.0, "1 = the fitted distribution", bounds=(0.01, 100.0),
              doc="multiplies every video's annual views"),
        Param("top_video_frac", popularity.FACTS["top_video_frac"],
              "McGrady et al. 2023 via the article: the most popular 3.67% of videos (L403)", bounds=(1e-6, 0.999),
              doc="popularity skew statistic: the share of videos whose view share top_view_share_frac reports"),
        Param("include_training", False, "the article excludes clustering/training from TCO (L535)", choices=(True, False)),
        Param("cluster_train_gpu_h", CLUSTER_TRAIN_GPU_H, "assumption: ~1 GPU-hour to fine-tune a ~100 KB DNN per cluster",
              bounds=(0.0, 1000.0)),
        Param("cluster_videos_count", CLUSTER_VIDEOS, "40 videos in 6 clusters (L559)", bounds=(1.0, 1e7)),
        *knob_params("cold-storage"),
    )
    metrics = (
        Metric("tco_usd_per_year", "min", "the video's yearly cost under this design and tier"),
        Metric("baseline_tco_usd_per_year", None, "baseline (HR, cheapest tier of the set) yearly cost"),
        Metric("tco_saving_pct", "max", "saving against the baseline, %"),
        Metric("tco_usd_per_gb_year", None, "yearly cost per GB of HR video"),
        Metric("storage_usd_per_year", None, "storage part"),
        Metric("retrieval_usd_per_year", None, "retrieval part"),
        Metric("request_usd_per_year", None, "PUT/GET fees"),
        Metric("sr_usd_per_year", None, "GPU restore part"),
        Metric("training_usd_per_year", None, "amortized DNN training part"),
        Metric("tier_code", None, "storage tier used (ncs.tiers.TIERS)", labels=tiers.TIERS),
        Metric("availability_pct", "max", "design availability of the tier used"),
        Metric("restore_latency_s", "min", "request to restored video"),
        Metric("baseline_latency_s", None, "baseline retrieval of the HR file"),
        Metric("restore_vs_baseline_x", None, "restore latency over the baseline's"),
        Metric("fetch_s", None, "storage read of the stored file, one GET"),
        Metric("stored_mb", None, "size of the stored file"),
        Metric("upgradable", None, "1 if NCS in a tier of better service costs no more than the baseline"),
        Metric("fleet_tco_usd_per_year", "min", "mean yearly cost per video over the fleet (NCS only where it pays)"),
        Metric("fleet_saving_pct", "max", "fleet TCO saving against the baseline, %"),
        Metric("top_view_share_frac", None,
               "skew of the view distribution: share of all views the top top_video_frac of videos get (popularity model)"),
        Metric("views_gini", None, "Gini coefficient of annual views over videos (popularity model; 1 = all views on one video)"),
        Metric("coverage_pct", "max", "videos that gain: NCS cheaper than baseline (ncs) / not in the hottest tier (baseline), %"),
        Metric("upgraded_pct", "max", "videos NCS can move to a tier of better service at no extra cost, %"),
        Metric("crossover_interval_days", None, "access interval above which NCS is cheaper (inf: NCS never pays)",
               inf_means="NCS never pays: no access interval makes it cheaper"),
        Metric("crossover_views_per_year", None, "views a year below which NCS is cheaper (inf: at any view rate)",
               inf_means="NCS is cheaper at every view rate (a restore costs no more than a view saves)"),
        Metric("breakeven_views_per_year", None, "views a year below which the baseline leaves the hottest tier"),
        Metric("opex_usd_per_year", "min", "family: the stored_tb fleet's yearly bill (S3 + GPU restores), in tco_usd"),
        Metric("fleet_videos_count", None, "family: videos in stored_tb of HR video"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        v = _point_columns(p)
        v.update(_video_sizes(p, v))
        v.update(_restore_work(p, v))
        v.update(_tier_options(p, v))
        v.update(_video_cost(p, v))
        v.update(_latency(p, v))
        v.update(_family_fleet(p, v))
        ones, is_ncs, pl, sigma = v["ones"], v["is_ncs"], v["pl"], v["sigma"]
        cost, baseline_usd, latency, base_lat = v["cost"], v["baseline_usd"], v["latency"], v["base_lat"]
        fleet_cost = v["fleet_cost"]
        return {
            "tco_usd_per_year": cost,
            "baseline_tco_usd_per_year": baseline_usd,
            "tco_saving_pct": 100.0 * (1.0 - cost / baseline_usd),
            "tco_usd_per_gb_year": cost / v["hr_gb"],
            "storage_usd_per_year": v["storage"],
            "retrieval_usd_per_year": v["retrieval"],
            "request_usd_per_year": v["requests"],
            "sr_usd_per_year": v["sr_year"],
            "training_usd_per_year": v["training"],
            "tier_code": v["tier"].astype(np.float64),
            "availability_pct": placement.AVAILABILITY[v["tier"]],
            "restore_latency_s": latency,
            "baseline_latency_s": base_lat,
            "restore_vs_baseline_x": latency / base_lat,
            "fetch_s": v["fetch"],
            "stored_mb": v["stored_mb"],
            "upgradable": v["upgradable"],
            "fleet_tco_usd_per_year": fleet_cost,
            "fleet_saving_pct": 100.0 * (1.0 - fleet_cost / pl["fleet_baseline_usd"]),
            "top_view_share_frac": popularity.top_view_share(p.top_video_frac, sigma) * ones,
            "views_gini": popularity.gini(sigma) * ones,
            "coverage_pct": 100.0 * np.where(is_ncs, pl["ncs_share"], pl["multitier_share"]),
            "upgraded_pct": 100.0 * np.where(is_ncs, pl["upgraded_share"], 0.0),
            "crossover_interval_days": v["crossover_days"],
            "crossover_views_per_year": pl["n_hi"],
            "breakeven_views_per_year": pl["breakeven_views"],
            "work_per_s": p.stored_tb / S_PER_MONTH * ones,
            "capex_usd": 0.0 * ones,
            "power_w": 0.0 * ones,
            "opex_usd_per_year": v["fleet_opex"],
            "fleet_videos_count": v["videos"],
        }


def _col(x: np.ndarray | float, ones: np.ndarray) -> np.ndarray:
    """``x`` as a float column of the batch length."""
    return np.asarray(x, dtype=np.float64) * ones


def _point_columns(p: Batch) -> dict[str, np.ndarray]:
    """The batch's shape: a column of ones, the frequent-tier volume, tier set and design as columns."""
    n_pts = p.n
    ones = np.ones(n_pts)
    return {
        "ones": ones,
        "vol": np.asarray(p.frequent_volume, dtype=np.int64) * np.ones(n_pts, dtype=np.int64),
        "tset": np.asarray(p.tier_set, dtype=np.int64) * np.ones(n_pts, dtype=np.int64),
        "is_ncs": p.is_("design", "ncs") * ones > 0,
    }


def _video_sizes(p: Batch, v: dict[str, Any]) -> dict[str, np.ndarray]:
    """HR and LR file sizes of the video (video.py; L451, L563, L577)."""
    ones = v["ones"]
    pix = p.pick("resolution", _PIXEL_SCALE)  # HR pixels over 2160p
    hr_mb = p.video_min * (S_PER_MIN / BITS_PER_BYTE) * p.hr_2160p_bitrate_mbit_s * p.pick("resolution", _SIZE_SCALE) * ones
    saving = np.where(p.is_("sr_aware_encoding", True), p.sr_bitrate_saving_frac, 0.0)
    r = video.lr_size_ratio(p.downscale_x, saving) * ones
    lr_mb = hr_mb * r
    hr_gb = hr_mb * (MB / GB)
    return {"pix": pix, "hr_mb": hr_mb, "r": r, "lr_mb": lr_mb, "hr_gb": hr_gb}


def _restore_work(p: Batch, v: dict[str, Any]) -> dict[str, np.ndarray]:
    """Restore work per access: SR and pack GPU time, its price, amortized training (restore.py; calibration.py)."""
    ones = v["ones"]
    playback_s = p.video_min * S_PER_MIN * v["pix"]
    naive = np.where(p.is_("sr_aware_decoding", True), 1.0, 1.0 / (1.0 - p.sr_inference_saving_frac))
    sr_s = p.sr_time_vs_playback_x * playback_s * naive * ones
    pack_s = p.pack_time_vs_playback_x * playback_s * ones
    sr_usd_per_view = (sr_s + pack_s) / p.gpu_busy_frac * p.gpu_usd_per_hour / S_PER_HOUR
    train_usd = np.where(p.is_("include_training", True), p.cluster_train_gpu_h * p.gpu_usd_per_hour / p.cluster_videos_count / p.horizon_years, 0.0) * ones
    return {"sr_s": sr_s, "pack_s": pack_s, "sr_usd_per_view": sr_usd_per_view, "train_usd": train_usd}


def _tier_options(p: Batch, v: dict[str, Any]) -> dict[str, Any]:
    """Tier placement per tier set (placement.py): cheapest tier of each design, upgrades, fleet sums."""
    ones = v["ones"]
    views = (DAYS_PER_YEAR / p.access_interval_days) * ones
    piped = p.is_("pipelining", True)
    gets = np.where(piped, restore.subvideos(v["lr_mb"], p.subvideo_mb), 1.0)  # GETs per NCS view
    median, sigma = (p.pick("popularity", {k: x[i] for k, x in popularity.POPULARITY.items()}) for i in (0, 1))
    mu = np.log(median * p.popularity_scale_x) * ones
    fees = np.where(p.is_("request_fees", True), 1.0, 0.0) * ones
    pl = placement.by_tier_set(
        v["tset"], v["vol"], v["hr_gb"], v["r"], views, gets, fees, v["sr_usd_per_view"] * ones, v["train_usd"],
        _col(p.storage_price_scale, ones), _col(p.retrieval_price_scale, ones), _col(p.horizon_years, ones), mu,
        sigma * ones,
    )
    return {"views": views, "piped": piped, "gets": gets, "sigma": sigma, "fees": fees, "pl": pl}


def _video_cost(p: Batch, v: dict[str, Any]) -> dict[str, np.ndarray]:
    """The video's yearly cost in its tier (given, or the design's cheapest): storage, retrieval, requests, SR, training."""
    is_ncs, pl, views, fees = v["is_ncs"], v["pl"], v["views"], v["fees"]
    fixed = np.asarray(p.tier, dtype=np.int64) - 1
    tier = np.where(fixed >= 0, fixed, np.where(is_ncs, pl["ncs_auto"], pl["base_auto"]))
    stored_mb = np.where(is_ncs, v["lr_mb"], v["hr_mb"])
    stored_gb = stored_mb * (MB / GB)
    storage = stored_gb * placement.storage_usd_per_gb_year(tier, v["vol"] * (tier == placement.FREQUENT), p.horizon_years) * p.storage_price_scale
    retrieval = stored_gb * placement.RETRIEVE[tier] * p.retrieval_price_scale * views
    requests = fees * (views * np.where(is_ncs, v["gets"], 1.0) * placement.GET[tier] + placement.PUT[tier] / p.horizon_years)
    sr_year = np.where(is_ncs, views * v["sr_usd_per_view"], 0.0)
    training = np.where(is_ncs, v["train_usd"], 0.0)
    return {
        "tier": tier, "baseline_usd": pl["baseline_usd"], "stored_mb": stored_mb, "storage": storage,
        "retrieval": retrieval, "requests": requests, "sr_year": sr_year, "training": training,
        "cost": storage + retrieval + requests + sr_year + training, "upgradable": pl["upgradable"] * is_ncs,
    }


def _latency(p: Batch, v: dict[str, Any]) -> dict[str, np.ndarray]:
    """Restore latency of the design and the baseline, and the stored file's fetch time (restore.py)."""
    hr_mb, tier, pl = v["hr_mb"], v["tier"], v["pl"]
    first_byte = placement.FIRST_BYTE[tier]
    base_lat = restore.baseline_latency_s(hr_mb, p.storage_stream_mbps, placement.FIRST_BYTE[pl["base_auto"]])
    ncs_lat = restore.ncs_latency_s(v["lr_mb"], v["sr_s"], v["pack_s"], p.storage_stream_mbps, first_byte, p.subvideo_mb,
                                    v["piped"])
    latency = np.where(v["is_ncs"], ncs_lat, restore.baseline_latency_s(hr_mb, p.storage_stream_mbps, first_byte))
    fetch = restore.fetch_s(v["stored_mb"], p.storage_stream_mbps, first_byte)
    return {"base_lat": base_lat, "latency": latency, "fetch": fetch}


def _family_fleet(p: Batch, v: dict[str, Any]) -> dict[str, np.ndarray]:
    """Fleet over the view distribution (fleet.py, NCS only where it pays) and the family's stored_tb fleet."""
    ones, is_ncs, pl, sigma = v["ones"], v["is_ncs"], v["pl"], v["sigma"]
    fleet_cost = np.where(is_ncs, pl["fleet_ncs_usd"], pl["fleet_baseline_usd"])
    with np.errstate(divide="ignore"):
        crossover_days = DAYS_PER_YEAR / pl["n_hi"]
    fleet_views = np.maximum(p.restores_per_tb_month * popularity.MONTHS_PER_YEAR, MIN_FLEET_VIEWS_PER_YEAR) * ones
    fam_mu = np.log(fleet_views) - 0.5 * sigma * sigma  # lognormal with this mean
    fam_train = np.where(p.is_("include_training", True), p.cluster_train_gpu_h * p.gpu_usd_per_hour / p.cluster_videos_count / p.years, 0.0) * ones
    fam = placement.by_tier_set(
        v["tset"], v["vol"], v["hr_gb"], v["r"], fleet_views, v["gets"], v["fees"], v["sr_usd_per_view"] * ones,
        fam_train, _col(p.storage_price_scale, ones), _col(p.retrieval_price_scale, ones), _col(p.years, ones), fam_mu,
        sigma * ones,
    )
    videos = p.stored_tb * (TB / MB) / v["hr_mb"]
    fleet_opex = videos * np.where(is_ncs, fam["fleet_ncs_usd"], fam["fleet_baseline_usd"])
    return {"fleet_cost": fleet_cost, "crossover_days": crossover_days, "videos": videos, "fleet_opex": fleet_opex}
