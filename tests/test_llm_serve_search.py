"""The serving layer's speculative searches (models/blocks/llm/serving.py: ``bisect``,
``golden_max``, ``tree_leaf``) give bit for bit what the plain step-by-step loops give --
also where the predicate is not monotone (rounding noise on a flat rate curve) -- and the
llm-serve model's results do not depend on how many steps one stacked call unrolls."""

from __future__ import annotations

import numpy as np
import pytest

from dse import bench, registry
from models.blocks.llm import serving

INVPHI = (np.sqrt(5.0) - 1.0) / 2.0  # the golden-section ratio, as serving.py computes it


def plain_bisect(below, lo, hi, steps):
    """The loop ``bisect`` unrolls: one midpoint per step."""
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        right = below(mid[None])[0]
        lo, hi = np.where(right, mid, lo), np.where(right, hi, mid)
    return lo, hi


def plain_golden(lam, a, b, steps):
    """The loop ``golden_max`` unrolls, then the midpoint and its rate."""
    for _ in range(steps):
        c = b - INVPHI * (b - a)
        d = a + INVPHI * (b - a)
        lam_c, lam_d = lam(np.stack([c, d])[:, None])[:, 0]
        left = lam_c >= lam_d
        b, a = np.where(left, d, b), np.where(left, a, c)
    mid = 0.5 * (a + b)
    return mid, lam(mid[None, None])[0, 0]


def _same(x, y) -> bool:
    return np.shape(x) == np.shape(y) and np.array_equal(x, y, equal_nan=True)


@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 4), (300,), (5000,)])
@pytest.mark.parametrize("steps", [0, 1, 9, 40])
def test_bisect_equals_the_loop(shape, steps) -> None:
    rng = np.random.default_rng(len(shape) * 100 + steps)
    lo = np.zeros(shape)
    hi = rng.uniform(0.5, 3000.0, shape)
    root = hi * rng.uniform(-0.1, 1.1, shape)
    noise = 1e-3 * hi  # a band where the predicate flips back and forth, as rounding does

    def monotone(x):
        return x < root

    def noisy(x):
        return np.where(np.abs(x - root) < noise, np.sin(x * 1e7) > 0, x < root)

    for below in (monotone, noisy, lambda x: np.sin(x * 37.0) > 0.3):
        got = serving.bisect(below, lo, hi, steps)
        want = plain_bisect(below, lo, hi, steps)
        assert all(_same(g, w) for g, w in zip(got, want))


@pytest.mark.parametrize("shape", [(), (1,), (5,), (2, 3), (200,), (5000,)])
@pytest.mark.parametrize("steps", [0, 1, 6, 20])
def test_golden_max_equals_the_loop(shape, steps) -> None:
    rng = np.random.default_rng(len(shape) * 10 + steps)
    a = rng.uniform(0.0, 10.0, shape)
    b = a + rng.uniform(0.0, 100.0, shape)
    peak = a + (b - a) * rng.uniform(-0.2, 1.2, shape)

    def unimodal(x):
        return -((x - peak) ** 2)

    def flat_top(x):  # equal rates over a plateau: ties decide the walk
        return -np.maximum(np.abs(x - peak) - 5.0, 0.0)

    for lam in (unimodal, flat_top, lambda x: np.cos(x)):
        got = serving.golden_max(lam, a, b, steps)
        want = plain_golden(lam, a, b, steps)
        assert all(_same(g, w) for g, w in zip(got, want))


@pytest.mark.parametrize("grid", [False, True])
def test_tree_leaf_is_the_walk(grid) -> None:
    rng = np.random.default_rng(1)
    for depth in range(1, 9):
        second = rng.random(((1 << depth) - 1, 50)) < 0.5
        leaf = serving.tree_leaf(second, depth, grid)
        for col in range(second.shape[1]):
            node, first, j = 0, 0, 0  # level-order node; grid: bracket [first, first + 2**(depth - level))
            for level in range(depth):
                span = 1 << (depth - level)
                pos = first + span // 2 - 1 if grid else (1 << level) - 1 + node
                go = bool(second[pos, col])
                j |= go << (depth - 1 - level) if grid else go << level
                first += span // 2 if go else 0
                node += go << level
            assert leaf[col] == j


def _model_points(n: int, seed: int) -> dict[str, np.ndarray]:
    model = registry.get("llm-serve")
    cols = bench.random_inputs(model, n, seed=seed)
    rng = np.random.default_rng(seed)
    cols["model_params_b"] = rng.uniform(1.0, 40.0, n)  # mostly feasible: the searches run
    cols["output_tokens"] = np.round(rng.uniform(16.0, 4000.0, n))
    cols["context_tokens"] = cols["output_tokens"] + np.round(rng.uniform(100.0, 30000.0, n))
    mode = rng.integers(0, 3, n)  # closed loop, offered rate, share of capacity (some at 1: saturation)
    cols["concurrency"] = np.where(mode == 0, np.round(np.exp(rng.uniform(0.0, 9.0, n))), 0.0)
    cols["request_rate_per_s"] = np.where(mode == 1, np.exp(rng.uniform(-3.0, 5.0, n)), 0.0)
    cols["load_frac"] = np.where(rng.random(n) < 0.3, 1.0, cols["load_frac"])
    return cols


def test_model_results_equal_plain_loops_and_any_depth(monkeypatch) -> None:
    model = registry.get("llm-serve")
    cols = _model_points(400, 7)
    fast = model.run(cols, checked=True)
    assert np.mean(fast["batch"] > 0) > 0.3  # the searches ran on these
    singles = [model.run({k: v[i] for k, v in cols.items()}, checked=True) for i in range(0, 400, 20)]
    monkeypatch.setattr(serving, "bisect", plain_bisect)
    monkeypatch.setattr(serving, "golden_max", plain_golden)
    slow = model.run(cols, checked=True)
    for key in fast:
        assert _same(fast[key], slow[key]), key
    for i, one in zip(range(0, 400, 20), singles):
        for key in one:
            assert np.allclose(one[key], slow[key][i], rtol=1e-12, atol=0.0, equal_nan=True), key
    monkeypatch.undo()
    monkeypatch.setattr(serving, "BISECT_DEPTH", 3)
    monkeypatch.setattr(serving, "GOLDEN_DEPTH", 1)
    other = model.run(cols, checked=True)
    for key in fast:
        assert _same(fast[key], other[key]), key
