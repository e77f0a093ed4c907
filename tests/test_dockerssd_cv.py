"""dockerssd: leave-one-anchor-out refits (models/dockerssd/cv.py) and the out-of-fit errors."""

from __future__ import annotations

import pytest

from dse import registry
from dse.claims import error_pct, evaluate_claims
from models.dockerssd import calibration, cv

CLAIMS = registry.model_dir("dockerssd-isp") / "claims.yaml"
#: out-of-fit error (%) of each anchor with its constant at the prior (calibration.priors) and the
#: others refitted; dse validate dockerssd --cv prints the same numbers
OUT_OF_FIT_PCT = {
    "dfullos-vs-pispv": -109.3,   # os_cost_scale 1: a 9% gap between two near-equal latencies flips sign
    "dnaive-vs-dfullos": 3.6,     # the copy over a PCIe 3.0 x4-class link
    "dvirtfw-lbaset": -57.9,      # 8.9-us handshake prior vs 26 us fitted
    "dvirtfw-kernelctx": 121.0,   # 5.9-us round-trip prior vs 3.1 us fitted
    "llm-long-seq-limit": -12.2,  # swap fault 1.86 us: one block I/O per 8-page readahead + mm work
}


@pytest.fixture(scope="module")
def anchors():
    return {r.id: r for r in evaluate_claims(CLAIMS) if r.kind == "anchor"}


def test_anchor_labels(anchors):
    assert set(anchors) == set(OUT_OF_FIT_PCT) == set(calibration.ANCHOR_PARAM)
    echoes = {r.id for r in evaluate_claims(CLAIMS) if r.kind == "echo"}
    assert echoes == {"llm-dn-vs-hn", "llm-short-seq", "llm-kv-per-seq"}


def test_without_exclusion_the_fit_is_the_shipped_defaults():
    isp = registry.get("dockerssd-isp").param_map()
    for k, v in calibration.fit_isp().items():
        assert isp[k].default == pytest.approx(v, rel=0.01), k


def test_excluded_constant_is_held_at_its_prior():
    pri = calibration.priors()
    for a in calibration.ISP_ANCHORS:
        got = calibration.fit_isp(exclude=frozenset({a}))
        assert got[calibration.ANCHOR_PARAM[a]] == pri[calibration.ANCHOR_PARAM[a]]
    assert calibration.fit_llm(exclude=frozenset({calibration.LLM_ANCHOR})) == {"swap_fault_us": pytest.approx(4.5 / 8 + 1.3)}


@pytest.mark.parametrize("anchor", sorted(OUT_OF_FIT_PCT))
def test_out_of_fit_error(anchors, anchor):
    value = cv.left_out(anchor)
    assert error_pct(anchors[anchor].expected, value) == pytest.approx(OUT_OF_FIT_PCT[anchor], abs=1.0)


def test_unknown_anchor_is_refused():
    with pytest.raises(KeyError):
        cv.left_out("intro-vs-host")
