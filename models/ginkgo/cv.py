"""Leave-one-anchor-out refits of the ginkgo model (``dse validate ginkgo --cv``).

Each anchor of claims.yaml is refitted out (calibration.fit(exclude=...)) and the claim is
evaluated with the refitted constants:

* the three AMAT targets (gain_vs_alloy_5ns, gain_vs_unison_5ns, amat_pr_unison_higher)
  solve two data skews and the double-read cost; with one left out the cost stays at its
  a-priori one-row-miss value (100 ns, digest §7) and the two skews come from the other two;
* a Unison / Ginkgo double-read anchor of one workload takes the other workload's
  metadata-locality exponent;
* Unison's tag bytes per DRAM block, derived from BTree's 512 MB, come from PR's 256 MB
  (L1920) instead.

The data and metadata skews are a per-workload table (``model.FITTED``, not parameters), so
they are swapped in for the one evaluation and restored in ``finally``.
"""

from __future__ import annotations

import copy

from dse.claims import claim_value
from dse.units import GIB, MIB
from models.ginkgo import calibration as cal
from models.ginkgo import model as gm

CLAIMS_PATH = cal.HERE / "claims.yaml"
#: Unison's measured metadata per workload, MiB (L1920), and its DRAM cache (1/4 of CXL, L1910).
UNISON_META_MIB = {"btree": 512.0, "pr": 256.0}


def unison_tag_b(exclude: frozenset[str] = frozenset()) -> float:
    """Tag bytes per 64 B DRAM block: from BTree's total, or PR's when BTree's is left out."""
    w = "pr" if "metadata_unison_btree" in exclude else "btree"
    dram_b = float(cal.workloads()[w]["cxl_capacity_gib"]) * GIB * cal.DRAM_TO_CXL
    return UNISON_META_MIB[w] * MIB / (dram_b / cal.BLOCK_B)


def left_out(anchor_id: str) -> float:
    """The model's value of ``anchor_id`` with every constant refitted without it."""
    ex = frozenset({anchor_id})
    refit = cal.fit(exclude=ex)
    saved = copy.deepcopy(gm.FITTED)
    try:
        for w, d in refit.items():
            gm.FITTED[w].update(d)
        overrides = {"meta_read_ns": refit["global"]["meta_read_ns"], "unison_tag_b": unison_tag_b(ex)}
        return claim_value(CLAIMS_PATH, anchor_id, overrides={"ginkgo": overrides})
    finally:
        for w, d in saved.items():
            gm.FITTED[w].clear()
            gm.FITTED[w].update(d)
