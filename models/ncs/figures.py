"""The ncs model against the article's figures (Fig 1, Fig 5a/b, Fig 6d) for the dashboard."""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.units import DAYS_PER_YEAR

#: Values the article states in its text (digest section 4): the figures themselves are not
#: in the digest, so these points stand for them.
PAPER_POINTS = {
    "fleet_saving_pct": (21.1, "L549"),
    "saving_45d_pct": (40.8, "L545"),
    "coverage_pct": (78.0, "L415"),
    "baseline_coverage_pct": (50.0, "L413"),
    "upgraded_pct": (16.0, "L553"),
    "crossover_interval_days": (4.0, "L547"),
    "restore_serial_x": (1.63, "L577"),
    "restore_piped_x": (1.63 * (1 - 0.36), "L577"),
}
INTERVALS_DAYS = np.geomspace(0.25, 1000.0, 160)
TIER_LINES = ("frequent", "infrequent", "archive_instant")


def _interval_records(model: Any) -> list[dict[str, Any]]:
    rows = []
    for design in ("baseline", "ncs"):
        for tier in ("auto",) + TIER_LINES:
            out = model.run({"design": design, "tier": tier, "access_interval_days": INTERVALS_DAYS})
            label = ("Baseline" if design == "baseline" else "NCS") + (" Pareto" if tier == "auto" else f" in {tier}")
            for d, c, t in zip(INTERVALS_DAYS, out["tco_usd_per_gb_year"], out["tier_code"]):
                rows.append({"interval_days": float(d), "usd_per_gb_year": float(c), "line": label,
                             "pareto": tier == "auto", "tier_code": int(t)})
    return rows


def figures() -> list[tuple[str, Any]]:
    from models.ncs.model import Ncs

    model = Ncs()
    rows = _interval_records(model)
    return [
        interval_tco_figure(rows),
        tier_strip_figure(rows),
        headline_figure(model),
        *restore_figures(model),
        view_cdf_figure(),
    ]


def interval_tco_figure(rows: list[dict[str, Any]]) -> tuple[str, Any]:
    """Fig 5(b): yearly cost per GB against the access interval, per tier and the Paretos."""
    import altair as alt

    x_enc = alt.X("interval_days:Q", scale=alt.Scale(type="log"), title="access interval (days)")
    y_enc = alt.Y("usd_per_gb_year:Q", scale=alt.Scale(type="log"), title="TCO (US$ per GB of HR video per year)")
    per_tier = alt.Chart(alt.Data(values=[r for r in rows if not r["pareto"]])).mark_line(strokeDash=[4, 3], opacity=0.6).encode(
        x=x_enc, y=y_enc, color=alt.Color("line:N", title="one tier"))
    paretos = alt.Chart(alt.Data(values=[r for r in rows if r["pareto"]])).mark_line(strokeWidth=3).encode(
        x=x_enc, y=y_enc, strokeDash=alt.StrokeDash("line:N", title="Pareto (cheapest tier)"))
    lines = alt.layer(per_tier, paretos).resolve_scale(color="independent")
    cross = alt.Chart(alt.Data(values=[{"x": PAPER_POINTS["crossover_interval_days"][0], "what": "article: crossover at 4 days (L547)"}])).mark_rule(
        color="black", strokeDash=[2, 2]).encode(x="x:Q", tooltip="what:N")
    return ("Fig 5(b): Baseline vs NCS TCO over the access interval (model lines; dotted rule: the article's 4-day crossover)",
            (lines + cross).properties(width=560, height=320))


def tier_strip_figure(rows: list[dict[str, Any]]) -> tuple[str, Any]:
    """The tier chosen at each interval by the two Paretos."""
    import altair as alt

    from models.ncs import tiers

    names = list(tiers.TIERS)
    chosen = [{"interval_days": r["interval_days"], "design": r["line"].split()[0], "tier": names[r["tier_code"]]}
              for r in rows if r["pareto"]]
    strip = alt.Chart(alt.Data(values=chosen)).mark_tick(thickness=3, size=30).encode(
        x=alt.X("interval_days:Q", scale=alt.Scale(type="log"), title="access interval (days)"),
        y=alt.Y("design:N", title=""),
        color=alt.Color("tier:N", title="cheapest tier"),
    )
    return ("Tier chosen by each Pareto over the access interval (S3 Standard / Standard-IA / Glacier IR)",
            strip.properties(width=560, height=90))


def headline_figure(model: Any) -> tuple[str, Any]:
    """Fig 1 / Fig 5: the headline percentages, model vs article."""
    import altair as alt

    from models.ncs import video

    ncs, bas = model.point(design="ncs"), model.point(design="baseline")
    d45 = model.point(design="ncs", access_interval_days=45, sr_bitrate_saving_frac=video.SR_BITRATE_SAVING_MAX_FRAC)
    pairs = [
        ("fleet TCO saving (%)", ncs["fleet_saving_pct"], "fleet_saving_pct"),
        ("saving at 45 days, best content (%) (fit anchor)", d45["tco_saving_pct"], "saving_45d_pct"),
        ("videos NCS covers (%)", ncs["coverage_pct"], "coverage_pct"),
        ("videos multi-tier covers (%)", bas["coverage_pct"], "baseline_coverage_pct"),
        ("videos upgraded a tier (%)", ncs["upgraded_pct"], "upgraded_pct"),
    ]
    bars = []
    for label, value, key in pairs:
        claim = f"{label} [{PAPER_POINTS[key][1]}]"
        bars.append({"claim": claim, "source": "model", "value": float(value)})
        bars.append({"claim": claim, "source": "article", "value": PAPER_POINTS[key][0]})
    return ("Fig 1 / Fig 5: headline percentages, model vs article",
            alt.Chart(alt.Data(values=bars)).mark_bar().encode(
                y=alt.Y("claim:N", title=""), yOffset="source:N", x=alt.X("value:Q", title="%"),
                color=alt.Color("source:N", title="")).properties(width=480, height=260))


def restore_figures(model: Any) -> list[tuple[str, Any]]:
    """Fig 6(d): restore latency of the 10-min 4K video over the baseline, and against subvideo size."""
    import altair as alt

    serial = model.point(design="ncs", video_min=10, pipelining=False)["restore_vs_baseline_x"]
    piped = model.point(design="ncs", video_min=10)["restore_vs_baseline_x"]
    lat = [
        {"case": "Baseline (HR)", "source": "model", "x": 1.0}, {"case": "Baseline (HR)", "source": "article", "x": 1.0},
        {"case": "NCS, no pipelining", "source": "model", "x": float(serial)},
        {"case": "NCS, no pipelining", "source": "article", "x": PAPER_POINTS["restore_serial_x"][0]},
        {"case": "NCS, pipelined", "source": "model", "x": float(piped)},
        {"case": "NCS, pipelined", "source": "article", "x": PAPER_POINTS["restore_piped_x"][0]},
    ]
    sizes = np.geomspace(5.0, 400.0, 60)
    sv = model.run({"design": "ncs", "video_min": 10, "subvideo_mb": sizes})["restore_vs_baseline_x"]
    return [
        ("Fig 6(d): restore time over the baseline's retrieval, 10-min 4K video (both NCS bars are fit anchors)",
         alt.Chart(alt.Data(values=lat)).mark_bar().encode(
             x=alt.X("case:N", title="", sort=None), xOffset="source:N", y=alt.Y("x:Q", title="x baseline"),
             color="source:N").properties(width=360, height=240)),
        ("Restore time against subvideo size (10-min 4K video): small subvideos pay the per-GET latency, large ones pipeline less",
         alt.Chart(alt.Data(values=[{"subvideo_mb": float(s), "x": float(v)} for s, v in zip(sizes, sv)])).mark_line().encode(
             x=alt.X("subvideo_mb:Q", scale=alt.Scale(type="log"), title="minimum subvideo size (MB)"),
             y=alt.Y("x:Q", title="restore time / baseline")).properties(width=420, height=220)),
    ]


def view_cdf_figure() -> tuple[str, Any]:
    """Fig 1: share of videos below a view count, the two fitted distributions and the article's points."""
    import altair as alt

    from models.ncs import popularity

    views = np.geomspace(0.01, 1e4, 200)
    cdf_rows = []
    for name, (median, sigma) in popularity.POPULARITY.items():
        F = popularity.cdf(views, np.log(median), sigma)
        cdf_rows += [{"views_per_year": float(v), "share_pct": 100.0 * float(f), "distribution": name} for v, f in zip(views, F)]
    pts = [{"views_per_year": popularity.BASELINE_POINT_VIEWS_PER_YEAR, "share_pct": 50.0, "what": "0.85 views/month: 50% (L413)"},
           {"views_per_year": DAYS_PER_YEAR / PAPER_POINTS["crossover_interval_days"][0], "share_pct": 78.0,
            "what": "91 views/year: 78% (L415)"}]
    curve = alt.Chart(alt.Data(values=cdf_rows)).mark_line().encode(
        x=alt.X("views_per_year:Q", scale=alt.Scale(type="log"), title="annual views"),
        y=alt.Y("share_pct:Q", title="videos with fewer views (%)"), color=alt.Color("distribution:N", title=""))
    dots = alt.Chart(alt.Data(values=pts)).mark_point(color="black", size=60, filled=True).encode(
        x="views_per_year:Q", y="share_pct:Q", tooltip="what:N")
    return ("Fig 1: view distribution of the fleet (lognormal fits; the default passes through both points) and the article's coverage points",
            (curve + dots).properties(width=480, height=260))
