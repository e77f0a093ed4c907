"""Every claims file at once: headline claims hold except the documented misses, every
miss says why, and every anchor can be refitted without itself (dse validate --cv)."""

from __future__ import annotations

import pytest

from dse.claims import claims_files, evaluate_claims, load_claims
from dse.crossval import cv_module

FILES = claims_files()
#: Headline claims outside tolerance, each with its reason in its note (closing notes of
#: the issues list them); one that starts passing must leave this list.
KNOWN_HEADLINE_MISSES = {
    ("cxl-gpu", "ds_vs_sr_compute"), ("cxl-gpu", "ds_vs_sr_load"), ("espresso", "breakeven-cxl-premium"),
    ("expand", "abs-graph-9x"), ("iks", "temporal-enns-overhead"), ("iks", "rag-throughput-vs-hnsw"),
    ("mhj", "tpcds_max_vs_smj"), ("ncs", "upgrade-16pct"), ("rdio", "deferred_parity_gain"),
}


@pytest.fixture(scope="module")
def results() -> dict[str, list]:
    return {str(f): evaluate_claims(f) for _, f in FILES}


@pytest.mark.parametrize("path", [str(f) for _, f in FILES], ids=[n for n, _ in FILES])
def test_headline_claims_hold_except_the_documented_misses(results: dict[str, list], path: str) -> None:
    for r in results[path]:
        if not r.headline or r.kind == "echo":
            continue
        if (r.model, r.id) in KNOWN_HEADLINE_MISSES:
            assert not r.passed, f"{r.model}:{r.id} passes now: take it off KNOWN_HEADLINE_MISSES"
            assert len(r.note) > 40, f"{r.model}:{r.id} misses without a reason in its note"
        else:
            assert r.passed, f"{r.model}:{r.id} = {r.value:.4g}, paper {r.expected} ({r.error_pct:+.1f}%)"


@pytest.mark.parametrize("path", [str(f) for _, f in FILES], ids=[n for n, _ in FILES])
def test_every_miss_says_why_and_every_anchor_can_be_left_out(results: dict[str, list], path: str) -> None:
    for r in results[path]:
        if not r.passed:
            assert r.note.strip(), f"{r.model}:{r.id} is outside tolerance with no note"
        if r.kind == "anchor":
            assert cv_module(r.model) is not None, f"{r.model}:{r.id} is an anchor but its package has no cv.py"


def test_the_known_misses_are_headline_claims_that_exist() -> None:
    ids = {(c.model or load_claims(f).model, c.id) for _, f in FILES for c in load_claims(f).claims if c.headline}
    assert KNOWN_HEADLINE_MISSES <= ids
