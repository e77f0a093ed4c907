"""ginkgo against the article's figures (shared/research/ginkgo.md): Fig. 5 (miss ratio, double
reads and AMAT per scheme and workload), the SRAM-size study, and every claim as model over
paper.  The article states only a few of Fig. 5's values in its text (``PAPER``)."""

from __future__ import annotations

from typing import Any

import numpy as np

SCHEMES = ("alloy", "unison", "ginkgo")
#: Double-read fractions the article states (L1926, L1928), percent.
PAPER = [
    {"scheme": "unison", "workload": "btree", "sram_kib": 64, "double_read_pct": 50.92},
    {"scheme": "unison", "workload": "pr", "sram_kib": 64, "double_read_pct": 18.29},
    {"scheme": "unison", "workload": "btree", "sram_kib": 16, "double_read_pct": 60.64},
    {"scheme": "unison", "workload": "pr", "sram_kib": 16, "double_read_pct": 18.28},
    {"scheme": "ginkgo", "workload": "btree", "sram_kib": 16, "double_read_pct": 8.72},
]
SRAM_KIB = [4, 8, 16, 32, 64, 128, 256, 512, 1024]


def _model() -> Any:
    from dse import registry

    return registry.get("ginkgo")


def _claim_rows() -> list[dict[str, Any]]:
    from dse import registry
    from dse.claims import evaluate_claims

    return [{"claim": r.id, "kind": "headline" if r.headline else "other", "model_over_paper": r.value / float(r.expected)}
            for r in evaluate_claims(registry.model_dir("ginkgo") / "claims.yaml") if not isinstance(r.expected, tuple) and r.expected]


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    m = _model()
    rows = []
    for w in ("btree", "pr"):
        for s in SCHEMES:
            r = m.point(scheme=s, workload=w)
            rows += [{"workload": w, "scheme": s, "metric": "AMAT (ns)", "value": r["amat_ns"]},
                     {"workload": w, "scheme": s, "metric": "miss ratio (%)", "value": 100 * r["miss_frac"]},
                     {"workload": w, "scheme": s, "metric": "double reads (%)", "value": 100 * r["double_read_frac"]}]
    fig5 = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("scheme:N", title=None), y=alt.Y("value:Q", title=None), color="scheme:N",
        column=alt.Column("workload:N"), row=alt.Row("metric:N"),
    ).resolve_scale(y="independent")

    sweep = []
    for w in ("btree", "pr"):
        for s in ("unison", "ginkgo"):
            out = m.run({"scheme": s, "workload": w, "mc_sram_kib": np.asarray(SRAM_KIB, dtype=float)})
            sweep += [{"sram_kib": k, "series": f"{s} {w}", "double_read_pct": 100 * float(v), "source": "model"}
                      for k, v in zip(SRAM_KIB, out["double_read_frac"])]
    sweep += [{"sram_kib": p["sram_kib"], "series": f"{p['scheme']} {p['workload']}", "double_read_pct": p["double_read_pct"],
               "source": "paper"} for p in PAPER]
    base = alt.Chart(alt.Data(values=sweep)).encode(
        x=alt.X("sram_kib:Q", scale=alt.Scale(type="log", base=2), title="MC SRAM (KiB)"),
        y=alt.Y("double_read_pct:Q", title="double reads (% of requests)"), color="series:N")
    sram = base.transform_filter("datum.source == 'model'").mark_line() + base.transform_filter(
        "datum.source == 'paper'").mark_point(size=100, filled=True, shape="diamond")
    claims = alt.Chart(alt.Data(values=_claim_rows())).mark_bar().encode(
        y=alt.Y("claim:N", sort=None, title=None), x=alt.X("model_over_paper:Q", title="model / paper"), color="kind:N")
    return [
        ("Fig. 5: AMAT, miss ratio and double reads per scheme (model)", fig5),
        ("Metadata SRAM size against double reads (lines: model; diamonds: the article)", sram),
        ("Every claim: model over paper", claims),
    ]
