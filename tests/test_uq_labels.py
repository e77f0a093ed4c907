"""`dse uq` and `dse sensitivity` on a labelled metric (espresso's bottleneck): shares of
each label, never percentiles of the codes."""

from __future__ import annotations

import json

import pytest


def test_uq_gives_each_labels_share_of_the_draws(cli):
    code, out, err = cli("uq", "espresso", "--samples", "512", "--json")
    assert code == 0, err
    b = json.loads(out)["metrics"]["bottleneck_code"]
    assert b["p50"] is None and set(b["shares"]) == {"processor/host", "flash", "link", "rated data path", "queue depth"}
    assert sum(b["shares"].values()) == pytest.approx(1.0)
    assert max(b["shares"].values()) < 1.0  # the bottleneck moves with the uncertain inputs


def test_sensitivity_of_a_label_is_refused_in_one_line(cli):
    code, _, err = cli("sensitivity", "espresso", "--metric", "bottleneck_code")
    assert code == 2 and "is a label" in err and err.count("\n") == 1
