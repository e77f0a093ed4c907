"""The calibration page marks the reference rows outside each fit's range (drawn hollow and
grey, with a legend entry), lists them with their error, and says why they are outside."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

from dse.dashboard.calibration import OUTSIDE, OUTSIDE_COLOR, calibration_page, outside_fit


@pytest.fixture(scope="module")
def page():
    p = calibration_page()
    assert p is not None
    return p


def _layers(spec):
    """Every unit spec with a mark, anywhere in a (v/h)concat / layer tree."""
    if isinstance(spec, dict):
        if "mark" in spec:
            yield spec
        for key in ("layer", "vconcat", "hconcat", "concat"):
            for sub in spec.get(key, []):
                yield from _layers(sub)


def _chart(page, title_start):
    for _, spec in page.specs:
        t = spec.get("title")
        if isinstance(t, str) and t.startswith(title_start):
            return spec
    raise AssertionError(f"no chart titled {title_start!r}")


def _not_counted(block):
    if block == "dram":
        from models.blocks import dram_fit

        df = dram_fit.with_rule(dram_fit.load_reference())
    else:
        from models.blocks import flash_fit

        df = flash_fit.with_rule(flash_fit.load_reference())
    return df, ~df["counted"].to_numpy()


@pytest.mark.parametrize("block", ["dram", "flash"])
def test_outside_rows_are_the_rows_the_fit_does_not_count(block):
    df, out_mask = _not_counted(block)
    out = outside_fit(block)
    assert out.height == int(out_mask.sum()) > 0
    assert out["why"].str.len_chars().min() > 0
    assert "no latency" not in out["why"].to_list()


def test_flash_steady_state_gc_runs_are_outside_and_several_times_off():
    out = outside_fit("flash")
    gc = out.filter(out["run"].str.starts_with("espresso_tlc steady") & out["why"].str.contains("GC activity"))
    assert gc.height >= 8
    ratio = gc["ratio"].to_numpy()
    assert np.all(ratio < 0.5), "the GC runs are the ones the model reads several times too low"
    # steady-state runs without GC (read-only) stay inside the fit
    df, out_mask = _not_counted("flash")
    steady_in = (df["device_state"] == "steady").to_numpy() & ~out_mask
    assert steady_in.any()


@pytest.mark.parametrize("title, block, mode", [("DRAM:", "dram", None), ("SSD:", "flash", "closed_loop_qd")])
def test_charts_draw_outside_rows_hollow_grey_with_a_legend_entry(page, title, block, mode):
    spec = _chart(page, title)
    layers = list(_layers(spec))
    hollow = [u for u in layers if isinstance(u["mark"], dict) and u["mark"].get("filled") is False]
    assert hollow, "no hollow layer"
    for u in hollow:
        assert u["mark"].get("color") == OUTSIDE_COLOR
        shape = u["encoding"]["shape"]
        assert shape["scale"]["domain"] == [OUTSIDE]
    drawn = [r for u in hollow for r in u["data"]["values"]]
    assert all(r["fit"] == OUTSIDE for r in drawn)
    out = outside_fit(block)
    if mode:
        out = out.filter(out["mode"] == mode)
    assert len(drawn) == out.height
    # the coloured reference points are the rows the fit covers only
    filled = [u for u in layers if isinstance(u["mark"], dict) and u["mark"].get("filled") is True
              or u["mark"] == "circle" or (isinstance(u["mark"], dict) and u["mark"].get("type") == "circle")]
    key = "latency_ns" if block == "dram" else "latency_us"
    inside = {round(r[key], 6) for u in filled for r in u["data"]["values"] if r.get(key) is not None}
    assert inside
    assert not inside & {round(v, 6) for v in out["reference"].to_list()}


@pytest.mark.parametrize("block, n_min", [("DRAM", 100), ("FLASH", 25)])
def test_outside_rows_are_listed_with_their_error_and_why(page, block, n_min):
    text = page.render([])
    m = re.search(rf"<h2>{block}: reference runs outside the fitted range \((\d+)\)</h2>", text)
    assert m, f"no table heading for {block}"
    n = int(m.group(1))
    assert n >= n_min
    after = text[m.end():]
    assert after.lstrip().startswith('<p class="note">Why: ')
    table = html.unescape(after[: after.index("</table>")])
    assert table.count("<tr>") == n + 1  # header + one row per run
    assert "model error" in table and "why outside" in table
    if block == "FLASH":
        assert "espresso_tlc steady random 16K r0% QD 1" in table
        assert "GC activity" in table and "open loop at or above the closed-loop maximum" in table
        assert re.search(r"-6\d%", table), "the steady-state GC rows' error (model ~3x low)"
    else:
        assert "saturated run" in table and "90% of the group's saturation bandwidth" in table
