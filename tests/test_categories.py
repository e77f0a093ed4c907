"""Named categories: labels, never bare codes (issue 19 item 3).

Categorical metrics (``Metric(labels=...)``) arrive in results as dictionary columns of their
labels and are queried by label; whole-number knobs are stored as int64; ``Batch.code``
names a label's code; the iks model compares labels, and its results did not move.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dse import registry
from dse.errors import DseError
from dse.model import Batch, Metric, Param

ESPRESSO_LABELS = ("processor/host", "flash", "link", "rated data path", "queue depth")


@pytest.fixture(scope="module")
def espresso_study(tmp_path_factory) -> Path:
    from dse.sweep.run import SweepOptions, run_sweep

    out = tmp_path_factory.mktemp("espresso") / "res"
    space = registry.project_root() / "spaces" / "espresso.toml"
    return run_sweep(space, SweepOptions(out=out, strategy="random", trials=64, progress=False)).path


@pytest.fixture(scope="module")
def iks_study(tmp_path_factory) -> Path:
    from dse.sweep.run import SweepOptions, run_sweep

    out = tmp_path_factory.mktemp("iks") / "res"
    space = registry.project_root() / "spaces" / "iks.toml"
    return run_sweep(space, SweepOptions(out=out, strategy="random", trials=64, progress=False)).path


# ----------------------------------------------------------------------------- declarations
def test_labelled_metric_declarations():
    m = registry.get("espresso").metric_map()["bottleneck_code"]
    assert m.categorical and m.labels == ESPRESSO_LABELS and m.direction is None
    from models.ncs.tiers import TIERS

    assert registry.get("ncs").metric_map()["tier_code"].labels == TIERS
    assert list(m.label(np.array([1.0, np.nan, 4.0]))) == ["flash", None, "queue depth"]
    with pytest.raises(ValueError, match="no direction"):
        Metric("x_code", "min", labels=("a", "b"))
    with pytest.raises(ValueError, match="distinct"):
        Metric("x_code", None, labels=("a", "a"))


def test_whole_number_params():
    assert Param("lanes", 16, "s", choices=(4, 8, 16)).whole
    assert Param("n", 3, "s", bounds=(1, 9), integer=True).whole
    assert not Param("x_gb", 1.0, "s", choices=(0.5, 1.0)).whole
    assert not Param("on", True, "s", choices=(True, False)).whole  # a label, not a number
    assert not Param("x_gb", 1.0, "s", bounds=(0.0, 2.0)).whole


def test_batch_code_names_a_label_and_refuses_an_unknown_one():
    model = registry.get("iks")
    b = Batch({"tenancy": np.array([0, 1, 2, 1])}, model.param_map(), 4)
    assert b.code("tenancy", "spatial") == 1
    assert list(b.is_("tenancy", "spatial")) == [False, True, False, True]
    with pytest.raises(DseError, match="tenancy='spacial' is not allowed; allowed: one of solo, spatial, temporal"):
        b.code("tenancy", "spacial")
    with pytest.raises(DseError, match="not a parameter with choices"):
        b.code("corpus_gb", "big")


def test_a_labelled_metric_is_never_an_objective(space_file):
    from dse.space import load_space

    text = (registry.project_root() / "spaces" / "espresso.toml").read_text()
    text = text.replace('usd_per_work = "min"', 'bottleneck_code = "min"')
    with pytest.raises(DseError, match="objectives.bottleneck_code.*categorical metric"):
        load_space(space_file(text, "esp.toml"))


# ----------------------------------------------------------------------------- results files
def test_categorical_metric_is_a_dictionary_of_labels(espresso_study):
    for name in ("points.parquet", "pareto.parquet"):
        t = pq.read_table(espresso_study / name)
        col = t.column("bottleneck_code")
        assert pa.types.is_dictionary(col.type), name
        assert set(col.to_pylist()) <= set(ESPRESSO_LABELS)
        assert pa.types.is_dictionary(t.column("design").type)  # categorical knobs stay dictionaries
    # the labels are the model's codes: the same points evaluated again agree
    t = pq.read_table(espresso_study / "points.parquet")
    from dse.space import load_space
    from dse.sweep.evaluate import sample_inputs

    space = load_space(registry.project_root() / "spaces" / "espresso.toml")
    inputs = sample_inputs(space, "random", 0, 0, 64)
    codes = space.model.run({**space.fixed, **inputs}, checked=True)["bottleneck_code"]
    assert t.column("bottleneck_code").to_pylist() == [ESPRESSO_LABELS[int(c)] for c in codes]


def test_whole_number_knobs_are_int64(iks_study, espresso_study):
    t = pq.read_table(iks_study / "points.parquet")
    for name in ("lanes", "elem_b", "batch", "embed_dim", "n_devices", "enns_channels"):
        assert t.schema.field(name).type == pa.int64(), name
    assert t.schema.field("corpus_gb").type == pa.float64()  # a continuous parameter listed as ints
    assert pa.types.is_dictionary(t.schema.field("retriever").type)
    assert set(t.column("lanes").to_pylist()) <= {8, 16}
    e = pq.read_table(espresso_study / "points.parquet")
    assert e.schema.field("cores_per_ssd").type == pa.int64()


def test_query_compares_labels_and_prints_whole_numbers(cli, espresso_study, iks_study):
    t = pq.read_table(espresso_study / "points.parquet").to_pydict()
    want = sum(1 for b, f in zip(t["bottleneck_code"], t["feasible"]) if b == "queue depth" and f)
    code, out, _ = cli("query", espresso_study, "--where", 'bottleneck_code == "queue depth"',
                       "--columns", "design,bottleneck_code", "--top", "0", "--format", "csv")
    assert code == 0
    rows = out.strip().splitlines()
    assert rows[0] == "design,bottleneck_code" and len(rows) - 1 == want > 0
    assert all(r.endswith(",queue depth") for r in rows[1:])
    code, out, _ = cli("query", iks_study, "--columns", "lanes,corpus_gb", "--all", "--top", "3", "--format", "csv")
    assert code == 0
    lanes = [r.split(",")[0] for r in out.strip().splitlines()[1:]]
    assert lanes and set(lanes) <= {"8", "16"}  # not 8.0


def test_eval_prints_the_label(cli):
    code, out, _ = cli("eval", "espresso", "--json")
    assert code == 0
    assert json.loads(out)["bottleneck_code"] in ESPRESSO_LABELS
    code, out, _ = cli("eval", "ncs")
    assert code == 0 and "tier_code" in out and "infrequent" in out


def test_constraints_compare_a_labelled_metric_by_label():
    from dse.sweep.evaluate import constraint_masks, label_env

    model = registry.get("espresso")
    env = {"bottleneck_code": np.array([0.0, 1.0, np.nan])}
    assert list(label_env(model, env, {"bottleneck_code"})["bottleneck_code"]) == ["processor/host", "flash", None]

    class Space:  # the two fields constraint_masks reads
        pass

    from dse.expr import Expr

    s = Space()
    s.model, s.constraint_names = model, {"bottleneck_code"}
    s.constraints = {"not_flash": Expr('bottleneck_code != "flash"', what="constraint")}
    ok = constraint_masks(s, {}, env, 3)["not_flash"]
    assert list(ok) == [True, False, True]


def test_dashboard_colours_by_a_labelled_metric_without_a_label_knob(espresso_study):
    import polars as pl

    from dse.dashboard import charts

    from dse.store import read_manifest

    knobs = list(read_manifest(espresso_study)["knobs"])
    front = pl.read_parquet(espresso_study / "points.parquet").filter(pl.col("feasible"))
    labelled = charts.label_metrics(front.schema, knobs)
    assert labelled == ["bottleneck_code"]
    front = front.with_columns(pl.col("bottleneck_code").cast(pl.String))
    if front["bottleneck_code"].n_unique() > 1:
        assert charts.color_knob(front, ["cores_per_ssd", *labelled]) == "bottleneck_code"
    assert charts.color_knob(front.with_columns(pl.col("design").cast(pl.String)), ["design", *labelled]) == "design"


# ----------------------------------------------------------------------------- iks: same results
def named_inputs(model, n: int, seed: int) -> dict[str, np.ndarray]:
    """Random points with one stream per parameter name (the order of ``params`` may change)."""
    cols: dict[str, np.ndarray] = {}
    for p in model.params:
        rng = np.random.default_rng([seed, zlib.crc32(p.name.encode())])
        if p.choices is not None:
            idx = rng.integers(0, len(p.choices), n)
            cols[p.name] = idx.astype(np.int64) if p.categorical else np.asarray(p.choices, dtype=np.float64)[idx]
        elif p.bounds is not None:
            v = rng.uniform(p.bounds[0], p.bounds[1], n)
            cols[p.name] = np.round(v) if p.integer else v
    return cols


#: iks on ``named_inputs(model, 4096, 19)`` before the named-category change (sum of the
#: finite values, count of the others), under the shipped calibration: the change (labels
#: instead of codes, channel_split in stages, work skipped where no point reads it) kept
#: every result.  A deliberate model change regenerates these numbers.
IKS_DIGEST = {
    "search_ms": (300635.33113589184, 3899),
    "enns_qps": (25297.67946483784, 3899),
    "memory_ms": (233403.9066837767, 3899),
    "compute_ms": (106149.89425600332, 3899),
    "enns_overhead_pct": (395.3164324704877, 3899),
    "offload_us": (656048.6204454855, 0),
    "context_kb": (8283730.673264137, 0),
    "int_bw_gbps": (3915520.4376068376, 0),
    "ext_bw_gbps": (224250.09230769234, 0),
    "int_ext_bw_x": (110128.87008547009, 0),
    "tenant_p50_us": (9664030.000469387, 3899),
    "tenant_p99_us": (10300103.748052776, 3899),
    "tenant_rps_x": (196.65449307847865, 3899),
    "tenant_util_frac": (25.676220950291132, 3899),
    "retrieval_ms": (1391190440.244554, 1322),
    "gen_ms": (29634417.83521719, 362),
    "ttft_ms": (1397066898.227373, 1684),
    "ttft_retrieval_ms": (1391190440.244554, 1322),
    "prefill_ms": (16916748.84786553, 362),
    "decode_ms": (12717668.987351656, 362),
    "hnsw_ef_used": (61236988.84285155, 0),
    "rag_qps": (125348.1449544167, 1684),
    "retrieval_share_frac": (1538.5373904040318, 1684),
    "free_capacity_gb": (186849437.87512022, 3899),
    "device_usd": (88515168.522304, 0),
    "rag_power_w": (11966163.503464531, 1684),
    "cost_per_mquery_usd": (1427342027.820959, 1684),
    "query_latency_ms": (1391189263.6376982, 1322),
    "recall_frac": (3413.7252884420905, 0),
    "iks_count": (192556.0, 1322),
    "host_count": (9.880540920255397e+17, 1322),
    "host_dram_gib": (5.290714718755081e+21, 1322),
    "work_per_s": (169039853022598.25, 1322),
    "capex_usd": (2.2965787980122695e+22, 1322),
    "power_w": (1.2911386964123126e+21, 1322),
    "tco_usd": (5.4131963989554764e+23, 1322),
    "usd_per_work": (9.082211348451013e+18, 1322),
}
IKS_FEASIBLE = 2275


def test_iks_results_did_not_move():
    model = registry.get("iks")
    ev = model.run_full(named_inputs(model, 4096, 19), checked=True)
    assert int(ev.feasible.sum()) == IKS_FEASIBLE
    for k, (total, nonfinite) in IKS_DIGEST.items():
        v = ev.metrics[k]
        fin = np.isfinite(v)
        assert int((~fin).sum()) == nonfinite, k
        assert float(np.sum(v[fin])) == pytest.approx(total, rel=1e-9), k


def test_iks_sub_batches_match_the_mixed_batch():
    """Work skipped when no point of a batch needs it (the ring buffer's link path, HNSW)
    changes nothing: each retriever x interface x ring path alone, and single points, give
    the rows of the mixed batch."""
    model = registry.get("iks")
    cols = named_inputs(model, 1024, 7)
    full = model.run(cols, checked=True)
    key = cols["retriever"] * 100 + cols["interface"] * 10 + cols["ring_path"]
    for k in np.unique(key):
        idx = np.flatnonzero(key == k)
        part = model.run({n: v[idx] for n, v in cols.items()}, checked=True)
        for name, v in part.items():
            assert np.array_equal(v, full[name][idx], equal_nan=True), (int(k), name)
    for i in (0, 1, 2, 3):
        one = model.run({n: v[i : i + 1] for n, v in cols.items()}, checked=True)
        for name, v in one.items():
            assert np.array_equal(v, full[name][i : i + 1], equal_nan=True), (i, name)


def test_no_bare_category_code_comparisons_in_iks():
    """``== 1`` on a category code silently changes meaning when a choices tuple is reordered."""
    import re

    root = registry.project_root() / "models" / "iks"
    pattern = re.compile(r"(retriever|mode|mode_code|code|interface|iface|ring_path|tech|pipe)\)?\s*[!=]=\s*\d")
    hits = [f"{f.name}:{i}" for f in sorted(root.glob("*.py"))
            for i, line in enumerate(f.read_text().splitlines(), 1) if pattern.search(line)]
    assert not hits, hits


def test_resumed_parts_written_with_float_knobs_merge_as_int64(tmp_path):
    """A sweep resumed across this change has parts with 8.0 beside parts with 8: the merge
    casts them to the first part's types instead of failing."""
    from dse import store
    from dse.space import load_space
    from dse.sweep.evaluate import Chunk, evaluate_chunk
    from dse.sweep.run import finalize

    space = load_space(registry.project_root() / "spaces" / "iks.toml")
    results = store.ResultsDir(tmp_path / "res")
    results.parts_dir.mkdir(parents=True)
    new = evaluate_chunk(space, "random", 0, Chunk(0, 0, 32))
    old = evaluate_chunk(space, "random", 0, Chunk(1, 32, 64))
    i = old.schema.get_field_index("lanes")
    old = old.set_column(i, "lanes", old.column("lanes").cast(pa.float64()))
    store.write_parquet(results.part_path(0), new)
    store.write_parquet(results.part_path(1), old)
    summary = finalize(space, results)
    t = pq.read_table(results.points_path())
    assert summary["points"] == t.num_rows == 64
    assert t.schema.field("lanes").type == pa.int64()
    assert set(t.column("lanes").to_pylist()) <= {8, 16}


def test_describe_lists_a_categorical_metrics_labels(cli):
    code, out, _ = cli("describe", "espresso", "--json")
    assert code == 0
    m = next(x for x in json.loads(out)["metrics"] if x["name"] == "bottleneck_code")
    assert m["labels"] == list(ESPRESSO_LABELS) and "one of: processor/host" in m["doc"]


def test_query_refuses_a_label_the_column_does_not_have(cli, espresso_study):
    code, _, err = cli("query", espresso_study, "--where", 'bottleneck_code == "flsh"', "--format", "csv")
    assert code == 2 and "bottleneck_code has no label 'flsh' (did you mean: flash?)" in err
    code, _, err = cli("query", espresso_study, "--where", 'design in ("espreso", "vh")', "--format", "csv")
    assert code == 2 and "design has no label 'espreso'" in err
    code, out, _ = cli("query", espresso_study, "--where", 'bottleneck_code in ("flash", "link") or design == "vh"',
                       "--format", "csv", "--top", "0")
    assert code == 0
