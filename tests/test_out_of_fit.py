"""Out-of-fit error of every anchor refitted from a-priori values (cv.py of packages whose
constants each pin one anchor): the numbers `dse validate NAME --cv` reports, pinned so a
change in a model or a prior shows here."""

from __future__ import annotations

import importlib

import pytest

from dse.claims import error_pct, load_claims

#: package -> anchor -> out-of-fit error (%) with its constant at the a-priori value.
OUT_OF_FIT = {
    # calibration.prior: firmware 0 ns, BAR = one PCIe round trip + firmware, expander share 1,
    # SSD DRAM 0.1 % of flash, BF hit share 1
    "cxl_ssd": {"apex_worst_cxl_vs_dram": -25.6, "apex_worst_pcie_vs_cxl": -20.9, "access_reduction_avg": 38.2,
                "highmiss_speedup": -6.1, "stream_assd_vs_ssd_1t": 50.0},
    # calibration.PRIORS: CPI 1.0, Zipf skew 1.0, residual 1.0, timely share 1.0
    "expand": {"f1a-perfect": -35.2, "f1a-slow": -27.9, "ml-vs-nopf": 137.2, "expand-range-top": -84.1},
}
CASES = [(pkg, cid) for pkg, table in OUT_OF_FIT.items() for cid in sorted(table)]


@pytest.mark.parametrize(("pkg", "cid"), CASES, ids=[f"{p}:{c}" for p, c in CASES])
def test_left_out_error(pkg: str, cid: str) -> None:
    cv = importlib.import_module(f"models.{pkg}.cv")
    expected = {c.id: c.expected for c in load_claims(cv.CLAIMS_PATH).claims}[cid]
    assert error_pct(expected, cv.left_out(cid)) == pytest.approx(OUT_OF_FIT[pkg][cid], abs=1.0)


@pytest.mark.parametrize("pkg", sorted(OUT_OF_FIT))
def test_anchor_kinds_match_calibration(pkg: str) -> None:
    cv = importlib.import_module(f"models.{pkg}.cv")
    calibration = importlib.import_module(f"models.{pkg}.calibration")
    kinds = {c.id: c.kind for c in load_claims(cv.CLAIMS_PATH).claims}
    assert {k for k, v in kinds.items() if v == "anchor"} == set(calibration.ANCHOR_OF.values()) == set(OUT_OF_FIT[pkg])
