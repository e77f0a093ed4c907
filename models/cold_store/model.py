"""cold-store: a baseline for keeping cold data -- self-hosted HDD or tape, or an S3-class tier.

No article: a reference point that the cold-storage family's architectures (ncs, ...) are
compared with.  Defaults come from the cost block's dated price tables
(``models/blocks/prices/components.csv`` for drives, servers, tape, rack space;
``object_storage.csv`` for the S3 tiers) or are stated assumptions.

Mechanism, per ``media``:

    hdd      raw TB = stored TB x redundancy (erasure code, 1.25 = 8+2); nearline drives of
             ``hdd_capacity_tb`` in 60-bay storage servers (Backblaze Storage Pod class), at
             least one code stripe of drives.  Power: every drive spinning (~7 W) + each
             server's own.
             Restore: one seek and the object streamed from disk -- seconds.
    tape     raw TB on LTO-9 cartridges (18 TB native; video and encrypted data do not
             compress); a library of rack-sized frames (slots and drive bays per frame) with
             enough drives for the restore traffic at ``tape_drive_max_util_frac``.  Power:
             frames and drives idle, plus the drives' busy share at active power; cartridges
             on the shelf draw nothing.  Restore: robot move + load + locate + read -- minutes.
    s3_*     the cost block's object-storage bill (storage with minimum duration, retrieval,
             requests, optional egress) over ``years``; no capex and no power of ours -- the
             whole bill is opex.  Restore: the tier's first-byte latency (hours for Glacier
             Flexible / Deep Archive) + the object at one S3 connection's rate.

Family ``cold-storage``: work = TB-months stored, so ``usd_per_work`` is $ per TB-month.
``capex_usd`` and ``power_w`` cover the self-hosted hardware; rack space (self-hosted) and a
cloud tier's whole bill are ``opex_usd_per_year``, which the engine adds to ``tco_usd``.  The
hardware is bought once (the engine's convention: a longer period adds running costs only), so
a period longer than the media's service life (``hdd_life_years``, ``tape_refresh_years``) is
infeasible rather than silently free of a second purchase.
"""

from __future__ import annotations

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import DAYS_PER_MONTH, GB, MB, S_PER_HOUR, TB
from models.blocks import cost

MONTHS_PER_YEAR = 12.0
S_PER_MONTH = DAYS_PER_MONTH * 24.0 * S_PER_HOUR
GB_PER_TB = TB / GB

SELF_HOSTED = ("hdd", "tape")
#: media label -> the cost block's object-storage tier (S3 list prices, us-east-1).
CLOUD_TIERS: dict[str, str] = {
    "s3_frequent": "frequent",
    "s3_infrequent": "infrequent",
    "s3_archive_instant": "archive_instant",
    "s3_archive_flexible": "archive_flexible",
    "s3_deep_archive": "deep_archive",
}
MEDIA = SELF_HOSTED + tuple(CLOUD_TIERS)
#: S3 Standard is cheaper per GB above 500 TB a month (price table row ``frequent_500tb``);
#: the whole volume is priced at the marginal rate (an approximation of the tiered bill).
FREQUENT_500TB_ABOVE_TB = 500.0

_TIER_NAMES = cost.storage_tier_names("aws")
_TIERS = cost.object_storage_tiers("aws")
_FIRST_BYTE_S = {t.tier: t.first_byte_latency_s for t in _TIERS}


def _price(item: str) -> tuple[float, str]:
    p = cost.component_price(item)
    return p.value, f"cost block prices/components.csv {item} ({p.date}): {p.source}"


_HDD_USD_PER_TB, _HDD_USD_SRC = _price("hdd_nearline_usd_per_tb")
_HDD_W, _HDD_W_SRC = _price("hdd_nearline_power_w")
_SRV_USD, _SRV_USD_SRC = _price("storage_server_60bay")
_SRV_W, _SRV_W_SRC = _price("storage_server_60bay_power_w")
_CART_USD, _CART_USD_SRC = _price("lto9_cartridge")
_DRV_USD, _DRV_USD_SRC = _price("lto9_drive_library")
_FRAME_USD, _FRAME_USD_SRC = _price("tape_library_frame")
_DRV_IDLE_W, _DRV_IDLE_W_SRC = _price("lto9_drive_power_idle_w")
_DRV_ACT_W, _DRV_ACT_W_SRC = _price("lto9_drive_power_active_w")
_FRAME_W, _FRAME_W_SRC = _price("tape_library_frame_power_w")
_RACK_USD, _RACK_USD_SRC = _price("colocation_rack_usd_per_month")


class ColdStore(Model):
    name = "cold-store"
    version = "1"
    summary = "Baseline cold storage: self-hosted HDD (erasure-coded) or LTO-9 tape library, or an S3-class tier; $/TB-month, power, restore latency"
    source = "no article: public prices and datasheets (cost block price tables, dated rows)"
    variant_param = "media"
    family = "cold-storage"
    boundary = (
        "capex_usd and power_w: the self-hosted drives, storage servers, tape cartridges, tape drives and library "
        "frames, bought once; rack space and a cloud tier's whole bill "
        "(storage, retrieval, requests, egress) are opex_usd_per_year; staff, network and software are outside"
    )
    params = (
        Param("media", "hdd", "assumption: self-hosted HDD, the usual cold tier; sweep against tape and the S3 tiers",
              choices=MEDIA, doc="hdd | tape | an S3 tier (cost block object_storage.csv)"),
        *knob_params("cold-storage"),
        Param("redundancy_x", 1.25,
              "assumption: an 8+2 erasure code (1.25x raw per usable TB), a common wide-stripe choice (Backblaze Vaults use "
              "17+3 = 1.18x); applies to hdd and tape (2.0 = two tape copies); S3 prices include the provider's",
              bounds=(1.0, 4.0), doc="raw TB bought per TB stored"),
        Param("object_mb", 1000.0, "assumption: cold archives hold large objects (video files, tar bundles) of about 1 GB",
              bounds=(0.1, 1e6), doc="object size: request counts and the restore read time"),
        # --- HDD
        Param("hdd_capacity_tb", 22.0, "nearline 20-24 TB class (Backblaze qualified 20-22 TB drives in 2023; 24 TB shipping)",
              bounds=(1.0, 40.0)),
        Param("hdd_usd_per_tb", _HDD_USD_PER_TB, _HDD_USD_SRC, bounds=(1.0, 200.0), doc="drive price per TB"),
        Param("hdd_power_w", _HDD_W, _HDD_W_SRC, bounds=(0.5, 20.0), doc="average wall power per drive (always spinning)"),
        Param("hdd_life_years", 5.0, "assumption: five-year warranty and service life of nearline drives; a longer period is infeasible",
              bounds=(1.0, 15.0)),
        Param("ec_stripe_drives", 10.0, "assumption: an 8+2 stripe spans 10 drives; the fewest drives a store can have",
              bounds=(1.0, 60.0), integer=True),
        Param("bays_per_server", 60.0, "Backblaze Storage Pod 6.0: 60 drives in a 4U server (backblaze.com blog, 2016-04-25)",
              bounds=(4.0, 120.0), integer=True),
        Param("server_usd", _SRV_USD, _SRV_USD_SRC, bounds=(0.0, 1e5), doc="storage server without drives"),
        Param("server_power_w", _SRV_W, _SRV_W_SRC, bounds=(0.0, 2000.0), doc="server power, drives excluded"),
        Param("servers_per_rack", 10.0, "assumption: ten 4U servers and a top-of-rack switch fill a 42U rack",
              bounds=(1.0, 20.0), integer=True),
        Param("hdd_first_byte_s", 0.05, "assumption: a seek and half a rotation (~12 ms) plus the object store's software and network path",
              bounds=(0.001, 60.0)),
        Param("hdd_stream_mbps", 250.0, "assumption: sustained sequential rate of a 20+ TB nearline drive (about 250-280 MB/s on datasheets)",
              bounds=(10.0, 10000.0), doc="restore read rate of one object"),
        # --- tape
        Param("tape_cartridge_tb", 18.0, "LTO-9: 18 TB native per cartridge (LTO Program, 2020-09-09 specification release)",
              bounds=(1.0, 100.0), doc="native capacity; video and encrypted data do not compress"),
        Param("tape_cartridge_usd", _CART_USD, _CART_USD_SRC, bounds=(1.0, 1000.0)),
        Param("tape_drive_usd", _DRV_USD, _DRV_USD_SRC, bounds=(100.0, 1e5)),
        Param("tape_drive_mbps", 400.0, "LTO-9 full-height drives: 400 MB/s native (LTO-9 launch coverage, e.g. cxp.com.au 2021)",
              bounds=(10.0, 2000.0)),
        Param("tape_min_drives", 4.0, "assumption: at least four drives for concurrent restores, writes and migration",
              bounds=(1.0, 1000.0), integer=True),
        Param("tape_drive_max_util_frac", 0.5, "assumption: restores may use half of the drive time; writes, migration and bursts get the rest",
              bounds=(0.05, 1.0)),
        Param("library_frame_usd", _FRAME_USD, _FRAME_USD_SRC, bounds=(0.0, 1e6), doc="frame with robot and slots, drives excluded"),
        Param("library_slots_per_frame", 1584.0, "IBM Diamondback library: 1,584 LTO slots in one frame (ibm.com/docs/en/diamondback, Frames)",
              bounds=(10.0, 10000.0), integer=True),
        Param("library_drives_per_frame", 14.0, "IBM Diamondback library: up to 14 drives in one frame (ibm.com/docs/en/diamondback, Frames)",
              bounds=(1.0, 64.0), integer=True),
        Param("library_frame_power_w", _FRAME_W, _FRAME_W_SRC, bounds=(0.0, 5000.0)),
        Param("tape_drive_idle_power_w", _DRV_IDLE_W, _DRV_IDLE_W_SRC, bounds=(0.0, 200.0)),
        Param("tape_drive_active_power_w", _DRV_ACT_W, _DRV_ACT_W_SRC, bounds=(0.0, 200.0)),
        Param("tape_refresh_years", 7.0,
              "assumption: LTO-9 drives read only LTO-8/9 media (cxp.com.au, 2021), so data moves forward about every "
              "other generation (~7 years); a longer period is infeasible (a migration is not modeled)", bounds=(1.0, 30.0)),
        Param("tape_robot_s", 10.0, "assumption: the TS4500's typical cartridge move is under 3 s (IBM TS4500 guide); ~10 s with "
              "high-density slot shuffles and a queue at the robot", bounds=(0.0, 600.0)),
        Param("tape_load_s", 16.0, "IBM TS2290 (LTO-9) user manual: nominal load-to-ready 16 s for an initialized cartridge",
              bounds=(0.0, 600.0)),
        Param("tape_locate_s", 65.0, "IBM TS2290 (LTO-9) user manual: average space-record time from load point 65 s",
              bounds=(0.0, 600.0)),
        # --- facilities and cloud
        Param("rack_usd_per_month", _RACK_USD, _RACK_USD_SRC, bounds=(0.0, 20000.0), doc="colocation space per rack (opex)"),
        Param("cloud_stream_mbps", 87.5, "AWS S3 performance guidelines: 85-90 MB/s per connection (as the ncs model)",
              bounds=(1.0, 10000.0)),
        Param("cloud_egress_usd_per_gb", 0.0,
              "assumption: restores are read inside the cloud region; AWS internet egress is US$0.09/GB (datacate.net, colocation vs cloud, 2026)",
              bounds=(0.0, 1.0)),
    )
    metrics = (
        Metric("restore_latency_s", "min", "request to the last byte of one restored object"),
        Metric("opex_usd_per_year", "min", "rack space (self-hosted) or the cloud tier's bill, per year (in tco_usd)"),
        Metric("capex_usd_per_tb", None, "capex per TB stored"),
        Metric("raw_tb", None, "capacity bought (redundancy included; cloud: the stored TB)"),
        Metric("drives_count", None, "HDDs (hdd) or tape drives (tape)"),
        Metric("cartridges_count", None, "LTO cartridges (tape)"),
        Metric("servers_count", None, "storage servers (hdd) or library frames (tape)"),
        Metric("racks_count", None, "racks of colocation space"),
        Metric("restore_mbps", None, "restore traffic, MB/s averaged over the month"),
        Metric("drive_util_frac", None, "busy share of the tape drives from restores (tape)"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        ones = np.ones(p.n)
        stored_tb = p.stored_tb * ones
        years = p.years * ones
        is_hdd = (p.is_("media", "hdd") * ones) > 0
        is_tape = (p.is_("media", "tape") * ones) > 0
        is_cloud = ~(is_hdd | is_tape)
        raw_tb = np.where(is_cloud, stored_tb, stored_tb * p.redundancy_x)
        restore_mbps = stored_tb * p.restores_per_tb_month * (TB / MB) / S_PER_MONTH

        # --- HDD: drives in storage servers, bought once (see the infeasible periods below)
        n_hdd = np.maximum(np.ceil(raw_tb / p.hdd_capacity_tb - 1e-9), p.ec_stripe_drives)
        n_srv = np.ceil(n_hdd / p.bays_per_server)
        hdd_capex = n_hdd * p.hdd_capacity_tb * p.hdd_usd_per_tb + n_srv * p.server_usd
        hdd_power = n_hdd * p.hdd_power_w + n_srv * p.server_power_w
        hdd_racks = np.ceil(n_srv / p.servers_per_rack)
        hdd_latency = p.hdd_first_byte_s + p.object_mb / p.hdd_stream_mbps

        # --- tape: cartridges in library frames, drives sized for the restore traffic
        n_cart = np.ceil(raw_tb / p.tape_cartridge_tb - 1e-9)
        n_drv = np.maximum(p.tape_min_drives, np.ceil(restore_mbps / (p.tape_drive_mbps * p.tape_drive_max_util_frac) - 1e-9))
        util = restore_mbps / (n_drv * p.tape_drive_mbps)
        n_frames = np.maximum(np.ceil(n_cart / p.library_slots_per_frame - 1e-9), np.ceil(n_drv / p.library_drives_per_frame - 1e-9))
        tape_capex = n_cart * p.tape_cartridge_usd + n_drv * p.tape_drive_usd + n_frames * p.library_frame_usd
        tape_power = n_frames * p.library_frame_power_w + n_drv * (
            p.tape_drive_idle_power_w + util * (p.tape_drive_active_power_w - p.tape_drive_idle_power_w))
        tape_latency = p.tape_robot_s + p.tape_load_s + p.tape_locate_s + p.object_mb / p.tape_drive_mbps

        # --- cloud tier: the whole bill over the period is opex
        tier = p.pick("media", {m: _TIER_NAMES.index(CLOUD_TIERS.get(m, "frequent")) for m in MEDIA}) * np.ones(p.n, dtype=np.int64)
        tier = np.where((tier == _TIER_NAMES.index("frequent")) & (stored_tb > FREQUENT_500TB_ABOVE_TB),
                        _TIER_NAMES.index("frequent_500tb"), tier)
        months = years * MONTHS_PER_YEAR
        size_gb = stored_tb * GB_PER_TB
        objects = stored_tb * (TB / MB) / p.object_mb
        bill = cost.object_storage_cost_usd(size_gb, months, p.restores_per_tb_month * ones, tier, objects=objects)
        bill = bill + size_gb * p.restores_per_tb_month * months * p.cloud_egress_usd_per_gb
        first_byte = np.asarray([_FIRST_BYTE_S[t] for t in _TIER_NAMES])[tier]
        cloud_latency = first_byte + p.object_mb / p.cloud_stream_mbps

        # --- the chosen media
        capex = np.where(is_hdd, hdd_capex, np.where(is_tape, tape_capex, 0.0))
        power = np.where(is_hdd, hdd_power, np.where(is_tape, tape_power, 0.0))
        racks = np.where(is_hdd, hdd_racks, np.where(is_tape, n_frames, 0.0))
        opex = np.where(is_cloud, bill / years, racks * p.rack_usd_per_month * MONTHS_PER_YEAR)
        latency = np.where(is_hdd, hdd_latency, np.where(is_tape, tape_latency, cloud_latency))
        return {
            "infeasible": {
                "period outlives the drives (years > hdd_life_years); a second purchase is not modeled": is_hdd & (years > p.hdd_life_years),
                "period outlives the tape generation (years > tape_refresh_years); a migration is not modeled":
                    is_tape & (years > p.tape_refresh_years),
            },
            "work_per_s": stored_tb / S_PER_MONTH,
            "capex_usd": capex,
            "power_w": power,
            "opex_usd_per_year": opex,
            "restore_latency_s": latency,
            "capex_usd_per_tb": capex / stored_tb,
            "raw_tb": raw_tb,
            "drives_count": np.where(is_hdd, n_hdd, np.where(is_tape, n_drv, 0.0)),
            "cartridges_count": np.where(is_tape, n_cart, 0.0),
            "servers_count": np.where(is_hdd, n_srv, np.where(is_tape, n_frames, 0.0)),
            "racks_count": racks,
            "restore_mbps": restore_mbps,
            "drive_util_frac": np.where(is_tape, util, 0.0),
        }
