"""Model against ExPAND's figures: Fig. 1a (effectiveness sweep vs LocalDRAM), Fig. 3a
(prefetchers per workload vs NoPrefetch), Fig. 4e/f (back-end media and switch levels).
The article's values are the ones its text quotes (research/cxl-prefetch.md §4)."""

from __future__ import annotations

from typing import Any

import numpy as np

PAPER_SPEEDUP = {"graph": 9.0, "spec": 14.7}


def _rows() -> dict[str, Any]:
    from dse import registry
    from models.expand.model import GRAPH, WORKLOADS

    m = registry.get("expand")
    eff = np.linspace(0.0, 1.0, 21)
    f1a = []
    for w in GRAPH:
        s = m.run({"design": "ideal", "workload": w, "effectiveness_frac": eff})["slowdown_vs_local_x"]
        f1a += [{"effectiveness_pct": 100 * float(e), "workload": w, "slowdown_vs_local_x": float(v)} for e, v in zip(eff, s)]
    f3a = []
    for d in ("rule1", "rule2", "ml1", "ml2", "expand"):
        s = m.run({"design": d, "workload": list(WORKLOADS)})["speedup_vs_nopf_x"]
        f3a += [{"workload": w, "design": d, "speedup_vs_nopf_x": float(v)} for w, v in zip(WORKLOADS, s)]
    f4f = []
    for media in ("znand", "pmem", "dram"):
        for lv in range(5):
            t = m.run({"design": "expand", "workload": list(WORKLOADS), "media": media, "switch_levels": lv})["time_ns_per_kinst"]
            f4f.append({"media": media, "switch_levels": lv, "time_ns_per_kinst": float(np.exp(np.mean(np.log(t))))})
    return {"f1a": f1a, "f3a": f3a, "f4f": f4f}


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    r = _rows()
    f1a = alt.Chart(alt.Data(values=r["f1a"])).mark_line().encode(
        x=alt.X("effectiveness_pct:Q", title="prefetch effectiveness (coverage = accuracy, %)"),
        y=alt.Y("slowdown_vs_local_x:Q", scale=alt.Scale(type="log"), title="time / LocalDRAM (log)"), color="workload:N",
    ).properties(width=420, height=260, title="Fig. 1a (model): paper anchors 4.5x slower at 80%, 3.9x faster at 100%")
    anchors = alt.Chart(alt.Data(values=[{"effectiveness_pct": 80, "y": 4.5}, {"effectiveness_pct": 100, "y": 1 / 3.9}])).mark_point(
        shape="diamond", size=120, color="black").encode(x="effectiveness_pct:Q", y="y:Q")
    f3a = alt.Chart(alt.Data(values=r["f3a"])).mark_bar().encode(
        x=alt.X("workload:N", sort=None), xOffset="design:N",
        y=alt.Y("speedup_vs_nopf_x:Q", title="speedup over NoPrefetch"), color="design:N",
    ).properties(width=720, height=260, title="Fig. 3a (model): paper means ExPAND 9.0x graph, 14.7x SPEC; ML 4.4x")
    refs = alt.Chart(alt.Data(values=[{"y": 9.0, "label": "paper ExPAND graph 9.0x"}, {"y": 14.7, "label": "paper ExPAND SPEC 14.7x"}])).mark_rule(
        strokeDash=[4, 4]).encode(y="y:Q", tooltip="label:N")
    f4f = alt.Chart(alt.Data(values=r["f4f"])).mark_line(point=True).encode(
        x=alt.X("switch_levels:O"), y=alt.Y("time_ns_per_kinst:Q", title="time per 1000 instructions (ns, geo-mean)"), color="media:N",
    ).properties(width=420, height=260, title="Fig. 4e/f (model): back-end media and switch levels")
    return [("Fig. 1a: effectiveness sweep", f1a + anchors), ("Fig. 3a: prefetchers", f3a + refs), ("Fig. 4e/f: media and switches", f4f)]
