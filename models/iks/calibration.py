"""The fitted constant of the IKS device model: eta, the achieved fraction of peak channel
bandwidth during an ENNS pass.

The article never states eta (digest §7 ambiguity 5).  It is fitted to one number only,
Table 1's solo ENNS search time (313 ms: 256-GB corpus, batch 16, all 64 channels, no
co-runner): ``eta = S / (channels x peak x (T - T_fixed))`` with the model's own fixed
terms (offload tax and top-K merge).  The solo column (time and QPS) is therefore an
anchor; the spatial column (612 ms, 26.1 q/s on 32 channels next to Memcached) is a
prediction of the 1 / channels scaling and of the channel isolation.  ``eta_per_row``
reports the eta each row alone would give (their spread is the 612 / 313 = 1.955
against 2.0 residual).

Emulation caveat (digest §7): eta describes the DDR5-4000 emulation platform, not a real
LPDDR5X device; the dram block's sustainable stream fraction of a real x16 LPDDR5X-8533
channel is reported alongside (``dram_stream_frac``) for comparison.
"""

from __future__ import annotations

from functools import cache

from dse.units import NS_PER_MS, NS_PER_S
from models.iks import device, enns, offload
from models.iks.rag import read_csv


#: The Table 1 column eta is fitted to (see the module docstring).
FIT_ROW = "solo"


@cache
def table1() -> list[dict[str, float]]:
    """Table 1 rows as numbers (see ``table1.csv``)."""
    rows = []
    for r in read_csv("table1.csv"):
        rows.append({k: (float(v) if k not in ("column", "source") else v) for k, v in r.items()})
    return rows


#: Claims that are the solo column's one measurement (time, and batch / time): leaving either
#: out leaves the solo column out, and eta comes from the other column (cv.py).
SOLO_CLAIMS = frozenset({"t1-solo-search-ms", "t1-solo-qps"})


def fit_eta(*, dim: float, elem_b: float, top_k: float, interface: int, gen: int, lanes: float,
            tech: str = "lpddr5x_8533", exclude: frozenset[str] = frozenset()) -> dict[str, float]:
    """Fit eta to Table 1's solo search time; also returns the eta of every row.

    ``exclude``: claim ids left out; with the solo column's claims left out, eta is fitted to
    the spatial column (612 ms on 32 channels) instead."""
    peak = device.tech_table()["rows"][tech]["peak_gbps"]
    etas, rows = [], table1()
    for r in rows:
        nmas = enns.active_nmas(r["enns_channels"])
        ctx = offload.context_b(r["batch"], dim, elem_b)
        res = offload.result_b(r["batch"], top_k, nmas)
        fixed_s = float(offload.tax_ns(interface, ctx, res, gen, lanes)) / NS_PER_S
        fixed_s += float(r["batch"] * nmas * top_k * enns.MERGE_NS_PER_ENTRY) / NS_PER_S
        t_s = r["search_ms"] * NS_PER_MS / NS_PER_S
        etas.append(r["corpus_gb"] / (r["enns_channels"] * peak * (t_s - fixed_s)))
    row = "spatial" if exclude & SOLO_CLAIMS else FIT_ROW
    eta = etas[[r["column"] for r in rows].index(row)]
    return {
        "eta": eta,
        "eta_per_row": tuple(float(e) for e in etas),
        "dram_stream_frac": device.tech_table()["rows"][tech]["stream_sat_gbps"] / peak,
    }
