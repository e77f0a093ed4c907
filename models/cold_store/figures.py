"""The cold-store baseline against public reference points, for the dashboard (no article)."""

from __future__ import annotations

from typing import Any

import numpy as np

#: Public reference points (claims.yaml): a disk-based cloud's price and the drives alone.
B2_USD_PER_TB_MONTH = (5.0, "Backblaze B2 US$0.005/GB-month (disk-based cloud, with margin)")
STORED_TB = np.geomspace(10.0, 1e6, 41)


def _cost_records(model: Any) -> list[dict[str, Any]]:
    from models.cold_store.model import MEDIA  # noqa: PLC0415

    rows = []
    for media in MEDIA:
        out = model.run({"media": media, "stored_tb": STORED_TB})
        for tb, usd in zip(STORED_TB, out["usd_per_work"]):
            rows.append({"stored_tb": float(tb), "usd_per_tb_month": float(usd), "media": media})
    return rows


def _latency_records(model: Any) -> list[dict[str, Any]]:
    from models.cold_store.model import MEDIA  # noqa: PLC0415

    out = model.run({"media": list(MEDIA)})
    return [{"media": m, "usd_per_tb_month": float(u), "restore_latency_s": float(s), "power_w": float(w)}
            for m, u, s, w in zip(MEDIA, out["usd_per_work"], out["restore_latency_s"], out["power_w"])]


def figures() -> list[tuple[str, Any]]:
    import altair as alt  # noqa: PLC0415

    from models.cold_store.model import ColdStore  # noqa: PLC0415

    model = ColdStore()
    figs: list[tuple[str, Any]] = []

    rows = _cost_records(model)
    lines = alt.Chart(alt.Data(values=rows)).mark_line(strokeWidth=2).encode(
        x=alt.X("stored_tb:Q", scale=alt.Scale(type="log"), title="data stored (TB)"),
        y=alt.Y("usd_per_tb_month:Q", scale=alt.Scale(type="log"), title="US$ per TB-month (5 years, 1% restored a month)"),
        color=alt.Color("media:N", title="media"),
        tooltip=["media:N", "stored_tb:Q", "usd_per_tb_month:Q"],
    )
    b2 = alt.Chart(alt.Data(values=[{"y": B2_USD_PER_TB_MONTH[0], "what": B2_USD_PER_TB_MONTH[1]}])).mark_rule(
        color="black", strokeDash=[2, 2]).encode(y="y:Q", tooltip="what:N")
    figs.append(("Cost per TB-month against capacity: self-hosted HDD and tape pay their fixed servers, library and rack "
                 "back with scale (tape below HDD from a few PB); S3 tiers are flat (dotted rule: a disk cloud's price)",
                 (lines + b2).properties(width=560, height=320)))

    pts = _latency_records(model)
    scatter = alt.Chart(alt.Data(values=pts)).mark_point(filled=True, size=120).encode(
        x=alt.X("usd_per_tb_month:Q", scale=alt.Scale(type="log"), title="US$ per TB-month (10 PB, 5 years)"),
        y=alt.Y("restore_latency_s:Q", scale=alt.Scale(type="log"), title="restore latency of a 1 GB object (s)"),
        color=alt.Color("media:N", title="media"),
        tooltip=["media:N", "usd_per_tb_month:Q", "restore_latency_s:Q", "power_w:Q"],
    )
    labels = scatter.mark_text(align="left", dx=8).encode(text="media:N")
    figs.append(("Cost against restore latency at 10 PB: HDD seconds, tape minutes, Glacier Flexible / Deep Archive hours",
                 (scatter + labels).properties(width=560, height=320)))
    return figs
