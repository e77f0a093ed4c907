"""Infeasible design points: ``feasible = false`` with a reason, never a silent NaN or inf.

Every registered model is fuzzed within its declared bounds and choices; a point whose
metrics hold a NaN or inf the model does not declare meaningful must be marked infeasible
by the model itself (not by the engine's safety net), and no RuntimeWarning may escape.
Then the engine mechanism, the sweeps' ``reason`` column, Optuna's FAIL, the CLI's strict
JSON, and each named NaN/inf source that used to be silent.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import polars as pl
import pytest

from dse import registry
from dse.bench import random_inputs
from dse.model import UNDECLARED, Batch, Metric, Model, Param, parse_assignments
from models.blocks import link

FUZZ_POINTS = 3000
#: Share of the points at each bound of a continuous parameter (exact edges such as
#: read_frac = 0 or vh_redirect_frac = 1 are where divisions by zero hide).
EDGE_FRAC = 0.1


def _fuzz_points(model: Model, n: int, seed: int) -> dict[str, np.ndarray]:
    """``n`` seeded points uniform within every parameter's bounds or choices, with a share
    of each continuous parameter pinned to its bounds."""
    cols = random_inputs(model, n, seed=seed)
    rng = np.random.default_rng([seed, 1])
    for p in model.params:
        if p.choices is None and p.bounds is not None:
            u = rng.random(n)
            cols[p.name] = np.where(u < EDGE_FRAC, p.bounds[0], np.where(u > 1 - EDGE_FRAC, p.bounds[1], cols[p.name]))
    return cols


def _strict_json(text: str):
    """json.loads that refuses NaN / Infinity (which Python's json would accept)."""

    def refuse(const: str):
        raise ValueError(f"non-standard JSON constant {const}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("name", registry.names())
def test_every_nonfinite_point_is_declared_infeasible(name):
    model = registry.get(name)
    cols = _fuzz_points(model, FUZZ_POINTS, seed=2024)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a divide-by-zero or invalid-value RuntimeWarning fails
        ev = model.run_full(cols, checked=True)
    undeclared = [r for r in ev.reasons if UNDECLARED in r]
    assert not undeclared, f"{name}: NaN/inf the model does not declare: {undeclared}"
    for m in model.metrics:
        v = ev.metrics[m.name]
        bad = (np.isnan(v) & (not m.nan_means)) | (np.isinf(v) & (not m.inf_means))
        assert not (bad & ev.feasible).any(), f"{name}.{m.name}: non-finite at a feasible point"
    assert (ev.reason[~ev.feasible] >= 0).all() and (ev.reason[ev.feasible] == -1).all()


# ----------------------------------------------------------------------------- the mechanism
class _Toy(Model):
    name = "toy"
    params = (Param("x", 1.0, "test", bounds=(0.0, 10.0)), Param("mode", "a", "test", choices=("a", "b")))
    metrics = (Metric("y"), Metric("z", nan_means="mode b"), Metric("w", inf_means="x = 0"))
    eval_chunk = 4  # several slices per run: the reason codes must agree across them

    def evaluate(self, p: Batch) -> dict:
        x = np.broadcast_to(p.x, (p.n,))
        y = np.where(x > 3, np.nan, x)
        y = np.where(x == 2, np.nan, np.where(x == 1.5, np.inf, y))  # undeclared
        with np.errstate(divide="ignore"):
            w = 1.0 / x
        return {
            "infeasible": {"x above 5": x > 5, "x above 3": x > 3, "never": np.asarray(False)},
            "y": y,
            "z": np.where(p.is_("mode", "b"), np.nan, 1.0),
            "w": w,
        }


def test_run_full_declared_reasons_first_wins_then_safety_net():
    m = _Toy()
    x = np.array([1.0, 6.0, 4.0, 2.0, 1.5, 0.0, 7.0, 3.0, 9.0, 1.0])
    mode = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    ev = m.run_full({"x": x, "mode": mode}, checked=True)
    got = [ev.reason_of(i) for i in range(len(x))]
    assert got == [
        None, "x above 5", "x above 3", f"y is not a number {UNDECLARED}", f"y is infinite {UNDECLARED}",
        None, "x above 5", None, "x above 5", None,  # x = 0: w = inf declared; mode b: z = NaN declared
    ]
    assert ev.feasible.tolist() == [g is None for g in got]
    assert ev.reason.dtype == np.int32 and "never" not in ev.reasons
    plain = m.run({"x": x, "mode": mode}, checked=True)  # run: the same metrics, nothing else
    assert set(plain) == {"y", "z", "w"}
    for k, v in plain.items():
        np.testing.assert_array_equal(v, ev.metrics[k])


def test_a_negated_python_bool_mask_is_refused():
    class Bad(_Toy):
        def evaluate(self, p):
            out = super().evaluate(p)
            out["infeasible"] = {"oops": ~True}  # -2: every point would read as infeasible
            return out

    with pytest.raises(TypeError, match="not bool"):
        Bad().run_full({"x": 1.0})


# ----------------------------------------------------------------------------- named cases
def test_cxl_gpu_capacity_and_gds_on_dram():
    from models.cxl_gpu import model as cg

    m = registry.get("cxl-gpu")
    ev = m.run_full({"design": ["cxl", "gds", "cxl", "uvm"], "media": ["dram", "dram", "dram", "dram"],
                     "working_set_gib": [8192.0, 80.0, 80.0, 80.0], "ep_capacity_gib": [16.0, 512.0, 512.0, 512.0]})
    assert [ev.reason_of(i) for i in range(4)] == [cg.NO_FIT, cg.GDS_NEEDS_SSD, None, None]
    # UVM has no CXL round trip: NaN by design, the point stays feasible
    assert np.isnan(ev.metrics["cxl_round_trip_ns"][3]) and np.isfinite(ev.metrics["slowdown_x"][3])


def test_espresso_no_borrower_and_all_writes_redirected():
    from models.espresso import model as es

    m = registry.get("espresso")
    assert m.run_full({"lenders": 12, "jbof_ssds": 12}).reason_of(0) == es.NO_BORROWER
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # used to raise ten divide-by-zero warnings
        ev = m.run_full({"design": "vh_ideal", "read_frac": 0.0, "vh_redirect_frac": 1.0})
    assert ev.reason_of(0) == es.NO_BORROWER_WORK and np.isnan(ev.metrics["data_end_iops"][0])


def test_espresso_loaded_latency_is_finite_below_saturation():
    """load_frac is a fraction of saturation: the M/M/c processor station must saturate at
    the same load as x_sat.  With one own core and one lender the rounded server count
    (2 for 1.7 cores of capacity) used to put rho above 1 at load_frac 0.99 (+inf)."""
    m = registry.get("espresso")
    kw = {"design": "proch", "cores_per_ssd": 1, "lenders": 1, "workload": "micro", "pattern": "random", "io_size_kib": 4.0}
    lat = m.run({**kw, "load_frac": [0.5, 0.9, 0.95, 0.99]})["loaded_latency_us"]
    assert np.all(np.isfinite(lat)) and np.all(np.diff(lat) > 0)
    cols = random_inputs(m, 4000, seed=7)
    cols["load_frac"] = np.full(4000, 0.99)
    ev = m.run_full(cols, checked=True)
    assert np.isfinite(ev.metrics["loaded_latency_us"][ev.feasible]).all()


def test_iks_capacity_generator_and_hnsw_passages():
    from models.iks import model as ik

    m = registry.get("iks")
    assert m.run_full({"corpus_gb": 8000.0}).reason_of(0) == ik.NO_FIT
    # a batch whose prompts overflow the GPUs runs in waves of smaller batches (iks/rag.py),
    # so it is feasible and takes longer than half of it, never a silent spill
    big, half = (m.point(batch=b, pipeline="llama3_8b") for b in (256, 128))
    assert m.run_full({"batch": 256, "pipeline": "llama3_8b"}).feasible[0]
    assert big["gen_ms"] >= half["gen_ms"]
    # HNSW sends top_k x hnsw_docs_x = 105 passages: inside the generation table now, and the
    # query embedding never depended on K
    ev = m.run_full({"retriever": "cpu_hnsw", "top_k": 100})
    assert ev.feasible[0] and np.isfinite(ev.metrics["retrieval_ms"][0]) and np.isfinite(ev.metrics["rag_qps"][0])


def test_cxl_expander_68b_flit_at_pcie6_and_the_label_68b():
    m = registry.get("cxl-expander")
    ev = m.run_full({"link_gen": ["pcie5", "pcie6", "pcie6"], "flit_mode": ["68B", "68B", "256B"]})
    assert [ev.reason_of(i) for i in range(3)] == [None, link.NO_68B_FLIT_REASON, None]
    # '68B' is one of flit_mode's choices: the label, not 68 bytes
    assert parse_assignments(["flit_mode=68B"], m.param_map()) == {"flit_mode": "68B"}
    from dse.space import load_space

    space = load_space(registry.project_root() / "spaces" / "cxl_expander.toml")
    assert "flit" in space.constraints  # the shipped space rules the combination out


def test_cli_eval_accepts_68b_and_prints_strict_json_for_an_infeasible_point(cli):
    code, out, err = cli("eval", "cxl-expander", "flit_mode=68B")
    assert code == 0 and "feasible: yes" in out, err
    code, out, _ = cli("eval", "cxl-expander", "retimers=3ns")
    assert code == 2
    code, out, _ = cli("eval", "cxl-expander", "link_gen=pcie6", "flit_mode=68B", "--json")
    d = _strict_json(out)
    assert code == 0 and d["feasible"] is False and d["reason"] == link.NO_68B_FLIT_REASON
    assert d["idle_read_latency_ns"] is None  # NaN -> null
    code, out, _ = cli("eval", "cxl-gpu", "design=gds", "media=dram")
    assert code == 0 and "feasible: no" in out and "GPUDirect Storage" in out


@pytest.mark.parametrize("args", [("models",), ("describe", "cxl-gpu"), ("validate", "cxl-expander"),
                                  ("eval", "espresso", "lenders=12", "jbof_ssds=12")])
def test_cli_json_outputs_are_strict(cli, args):
    code, out, _ = cli(*args, "--json")
    assert code in (0, 1)
    _strict_json(out)


def test_jsonsafe_turns_non_finite_into_null():
    from dse import jsonsafe

    d = _strict_json(jsonsafe.dumps({"a": float("nan"), "b": np.float64(np.inf), "c": np.array([1.0, -np.inf]), 3: (1, "x")}))
    assert d == {"a": None, "b": None, "c": [1.0, None], "3": [1, "x"]}


# ----------------------------------------------------------------------------- sweeps
FLIT_SPACE = """
model = "cxl-expander"
description = "flit modes across link generations"
[knobs]
link_gen = ["pcie5", "pcie6"]
flit_mode = ["68B", "256B"]
lanes = [4, 16]
offered_load_frac = { range = [0.1, 0.9], steps = 5 }
[objectives]
loaded_read_latency_ns = "min"
bw_gbps = "max"
[constraints]
slo = "loaded_read_latency_ns <= 180"
flit = "not (link_gen == 'pcie6' and flit_mode == '68B')"
[sweep]
trials = 40
seed = 1
"""


def test_grid_sweep_writes_feasible_and_reason(space_file, tmp_path):
    from dse.sweep.run import SweepOptions, run_sweep

    res = run_sweep(space_file(FLIT_SPACE), SweepOptions(out=tmp_path / "g", progress=False))
    pts = pl.read_parquet(res.path / "points.parquet")
    assert pts.height == 40 and pts.schema["reason"] in (pl.Categorical, pl.Enum, pl.Utf8, pl.String)
    assert (pts["feasible"] == pts["reason"].is_null()).all()
    bad = pts.filter((pl.col("link_gen") == "pcie6") & (pl.col("flit_mode") == "68B"))
    assert bad.height == 10 and (bad["reason"].cast(pl.Utf8) == link.NO_68B_FLIT_REASON).all()  # the model's reason wins
    slow = pts.filter(~pl.col("ok_slo") & pl.col("ok_flit"))
    assert slow.height and (slow["reason"].cast(pl.Utf8) == "constraint slo").all()
    assert res.manifest["rows"]["feasible"] == int(pts["feasible"].sum())


def test_optuna_tells_infeasible_trials_fail(space_file, tmp_path):
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend
    from optuna.trial import TrialState

    from dse.sweep.run import SweepOptions, run_sweep

    res = run_sweep(space_file(FLIT_SPACE), SweepOptions(strategy="optuna", trials=40, batch=20, out=tmp_path / "o", progress=False))
    storage = JournalStorage(JournalFileBackend(str(res.path / "study.journal")))
    (summary,) = optuna.get_all_study_summaries(storage)
    trials = optuna.load_study(study_name=summary.study_name, storage=storage).get_trials(deepcopy=False)
    impossible = [t for t in trials if t.params["link_gen"] == "pcie6" and t.params["flit_mode"] == "68B"]
    assert impossible and all(t.state == TrialState.FAIL for t in impossible)
    assert all(t.state == TrialState.COMPLETE for t in trials if t not in impossible)
