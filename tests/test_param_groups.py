"""The link and DRAM parameter groups (models/blocks/link.py, dram.py): the models that
compose them keep their parameters as they were declared by hand, the groups' batch specs,
the flit modes a generation lacks reported as infeasible, and the staged DRAM functions."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from dse import registry
from dse.bench import random_inputs
from dse.errors import DseError
from dse.model import UNDECLARED, Batch
from models.blocks import dram, dramsim3_io, link
from models.blocks.cost import component_price

# (position, name, default, choices, bounds, integer) of every group parameter, taken from
# the hand-written declarations before the groups (None: the model's own fitted default)
SNAPSHOT = {
    "cxl-expander": [
        (0, "link_gen", "pcie5", ("pcie4", "pcie5", "pcie6"), None, False),
        (1, "lanes", 8, (4, 8, 16), None, False),
        (2, "flit_mode", "68B", ("68B", "256B", "256B_lo"), None, False),
        (8, "media", "ddr5_4800", ("ddr4_3200", "ddr5_4800", "ddr5_5600", "lpddr5x_8533", "hbm2e"), None, False),
        (9, "channels", 2, None, (1, 16), True),
        (10, "capacity_gib", 256.0, None, (16.0, 8192.0), False),
        (11, "pattern", "random", ("random", "stream"), None, False),
        (22, "host_channels", 16, None, (1, 32), True),
        (23, "host_max_dram_gib", 4096.0, None, (64.0, 32768.0), False),
    ],
    "cxl-gpu": [
        (4, "link_gen", "pcie5", ("pcie4", "pcie5", "pcie6"), None, False),
        (5, "lanes", 8, (4, 8, 16), None, False),
    ],
    "expand": [
        (15, "host_dram_ns", None, None, (20.0, 500.0), False),
        (16, "link_gen", "pcie6", ("pcie5", "pcie6"), None, False),
        (17, "lanes", 8, (4, 8, 16), None, False),
        (18, "flit_mode", "256B", ("68B", "256B", "256B_lo"), None, False),
        (21, "dram_usd_per_gib", None, None, (0.5, 50.0), False),
        (25, "host_channels", 16, None, (1, 64), True),
        (26, "host_max_dram_gib", 4096.0, None, (16.0, 65536.0), False),
    ],
    "cxl-ssd": [
        (13, "host_dram_ns", None, None, (20.0, 500.0), False),
        (14, "link_gen", "pcie6", ("pcie5", "pcie6"), None, False),
        (15, "lanes", 4, (4, 8, 16), None, False),
        (16, "flit_mode", "256B", ("68B", "256B", "256B_lo"), None, False),
        (32, "dram_usd_per_gib", None, None, (0.5, 50.0), False),
    ],
}
FLIT_MODELS = ("cxl-expander", "expand", "cxl-ssd")


@pytest.mark.parametrize("name", sorted(SNAPSHOT))
def test_models_keep_their_group_parameters(name):
    model = registry.get(name)
    module = importlib.import_module(registry.model_class(name).__module__)
    fitted = {"host_dram_ns": getattr(module, "HOST_DDR_NS", None), "dram_usd_per_gib": component_price("dram_ddr5").value}
    for pos, pname, default, choices, bounds, integer in SNAPSHOT[name]:
        p = model.params[pos]
        assert p.name == pname
        assert p.default == (fitted[pname] if default is None else default)
        assert p.choices == choices and p.bounds == bounds and p.integer == integer
        assert p.source and p.doc  # a source (the model's) and the block's doc where the model gave none


def test_group_sources_stay_model_specific():
    src = {m: {p.name: p.source for p in registry.get(m).params} for m in SNAPSHOT}
    assert "CZ120" in src["cxl-expander"]["link_gen"]
    assert src["cxl-gpu"]["lanes"] == "Table 1a: x8 (003:L175)"
    assert "Table 1, L1320" in src["expand"]["host_dram_ns"] and "Table 1a" in src["cxl-ssd"]["host_dram_ns"]


def test_link_params_defaults_and_prefix():
    ps = link.params()
    assert [p.name for p in ps] == ["link_gen", "lanes"]
    assert ps[0].choices == link.PARAM_GENS == ("pcie4", "pcie5", "pcie6") and ps[1].choices == (4, 8, 16)
    assert (ps[0].default, ps[1].default) == ("pcie5", 8) and all(p.source for p in ps)
    ps = link.params("host_", flit_mode="256B", default_gen="pcie6", source="assumption: a test")
    assert [p.name for p in ps] == ["host_link_gen", "host_lanes", "host_flit_mode"]
    assert ps[2].choices == link.FLIT_MODES and ps[2].default == "256B"


def test_link_params_reject_bad_declarations():
    with pytest.raises(ValueError, match="give its source"):
        link.params(default_lanes=16)  # not the block's default and no source for it
    with pytest.raises(ValueError, match="not in"):
        link.params(gens=("pcie5", "pcie9"), source="x")
    with pytest.raises(ValueError):
        link.params(gens=("pcie5",), default_gen="pcie6", source="x")  # default outside the choices


@pytest.mark.parametrize("name", ["expand", "cxl-ssd"])
def test_a_model_restricting_gens(name):
    model = registry.get(name)
    assert model.param_map()["link_gen"].choices == ("pcie5", "pcie6")
    assert set(("pcie5", "pcie6")) < set(link.PARAM_GENS)
    with pytest.raises(DseError, match="link_gen"):
        model.run({"link_gen": "pcie4"})
    restricted = link.params(gens=("pcie5", "pcie6"), default_gen="pcie6", source="x")
    assert restricted[0].choices == ("pcie5", "pcie6")


def _batch(params, cols, n):
    return Batch(cols, {p.name: p for p in params}, n)


def test_link_from_batch_columns():
    ps = link.params(flit_mode="68B")
    b = _batch(ps, {"link_gen": np.array([0, 1, 2, 2]), "lanes": np.array([4.0, 8.0, 16.0, 16.0]),
                    "flit_mode": np.array([0, 2, 0, 1])}, 4)
    s = link.from_batch(b)
    assert s.gen.tolist() == [4, 5, 6, 6] and s.gen_index.tolist() == [0, 1, 2, 2]
    assert s.lanes.dtype == np.int64 and s.lanes.tolist() == [4, 8, 16, 16]
    # the 68 B flit at PCIe 6 does not exist: evaluated as 256B, declared infeasible
    assert s.flit_exists.tolist() == [True, True, False, True] and s.flit.tolist() == [0, 2, 1, 1]
    assert s.infeasible()[link.NO_68B_FLIT_REASON].tolist() == [False, False, True, False]
    # scalars broadcast to the batch; without flit_mode every point's flit exists
    s = link.from_batch(_batch(link.params("up_"), {"up_link_gen": np.int64(1), "up_lanes": 16.0}, 3), "up_")
    assert s.gen.tolist() == [5, 5, 5] and s.lanes.tolist() == [16] * 3 and s.flit is None and s.flit_exists.all()


def test_link_spec_matches_the_hand_written_columns():
    # the models picked generation numbers and flit codes by hand; the spec gives the same
    model = registry.get("expand")
    cols = random_inputs(model, 4096, seed=3)
    b = Batch(cols, model.param_map(), 4096)
    s = link.from_batch(b)
    gen = b.pick("link_gen", {g: link.GENERATIONS.index(g) + 1 for g in ("pcie5", "pcie6")})
    flit = b.pick("flit_mode", {f: i for i, f in enumerate(link.FLIT_MODES)})
    valid = ~((flit == 0) & link.GEN_FLIT_MODE[gen - 1])
    assert np.array_equal(s.gen, gen) and np.array_equal(s.flit, np.where(valid, flit, 1))
    assert np.array_equal(s.flit_exists, valid) and np.array_equal(s.lanes, cols["lanes"])
    assert 0 < (~valid).sum() < 4096


def test_flit_exists():
    assert link.flit_exists(["pcie4", "pcie5", "pcie6", "pcie7"], "68B").tolist() == [True, True, False, False]
    assert link.flit_exists(6, ["256B", "256B_lo"]).all()


@pytest.mark.parametrize("name", FLIT_MODELS)
def test_68b_flit_at_pcie6_is_infeasible_with_its_reason(name):
    ev = registry.get(name).run_full({"link_gen": "pcie6", "flit_mode": ["68B", "256B", "256B_lo"]})
    assert ev.reason_of(0) == link.NO_68B_FLIT_REASON and not ev.feasible[0]
    assert ev.reason_of(1) != link.NO_68B_FLIT_REASON and ev.reason_of(2) != link.NO_68B_FLIT_REASON
    ev = registry.get(name).run_full({"link_gen": "pcie5", "flit_mode": "68B"})
    assert ev.reason_of(0) != link.NO_68B_FLIT_REASON


@pytest.mark.parametrize("name", sorted(SNAPSHOT))
def test_no_undeclared_nan_over_random_points(name):
    # every impossible combination has a declared reason: the safety net never fires
    model = registry.get(name)
    ev = model.run_full(random_inputs(model, 4096, seed=11), checked=True)
    assert not [r for r in ev.reasons if r.endswith(UNDECLARED)]
    for k, v in ev.metrics.items():
        meta = model.metric_map().get(k)
        if meta is not None and not meta.nan_means:
            assert not np.isnan(v[ev.feasible]).any(), k


def test_dram_params_fields_order_and_overrides():
    ps = dram.params("host_", max_dram_gib=4096.0, channels=16, bounds={"channels": (1, 32)},
                     source={"channels": "a", "max_dram_gib": "b"})
    assert [p.name for p in ps] == ["host_channels", "host_max_dram_gib"]  # the group's order, not the call's
    assert ps[0].bounds == (1, 32) and ps[0].integer and ps[1].bounds == dram.GROUP_FIELDS["max_dram_gib"][1]
    assert [p.source for p in ps] == ["a", "b"]
    ps = dram.params(media="hbm2e", pattern="stream", media_choices=("ddr5_4800", "hbm2e"), source="x")
    assert ps[0].choices == ("ddr5_4800", "hbm2e") and ps[1].choices == dram.PATTERNS
    with pytest.raises(ValueError, match="unknown fields"):
        dram.params(ranks=2, source="x")
    with pytest.raises(ValueError, match="no source"):
        dram.params(channels=2, source={"capacity_gib": "x"})
    with pytest.raises(ValueError, match="not in"):
        dram.params(media="ddr9", media_choices=("ddr9",), source="x")


def test_dram_from_batch_columns():
    ps = dram.params(media="ddr5_4800", channels=2, pattern="random", media_choices=("ddr4_3200", "ddr5_4800", "hbm2e"),
                     source="x")
    b = _batch(ps, {"media": np.array([0, 1, 2]), "channels": np.array([1.0, 2.0, 8.0]), "pattern": np.int64(1)}, 3)
    s = dram.from_batch(b)
    assert [dram.STANDARD_NAMES[c] for c in s.standard] == ["DDR4-3200", "DDR5-4800", "HBM2e"]
    assert s.channels.tolist() == [1.0, 2.0, 8.0] and s.stream.tolist() == [True, True, True]
    assert s.capacity_gib is None and s.dram_ns is None and s.max_dram_gib is None
    assert dram.standard_of("lpddr5x_8533") == "LPDDR5X-8533"


def test_dram_group_in_the_expander():
    model = registry.get("cxl-expander")
    cols = random_inputs(model, 512, seed=5)
    s = dram.from_batch(Batch(cols, model.param_map(), 512))
    std = [dram.STANDARD_NAMES[c] for c in s.standard]
    assert std == [model.param_map()["media"].choices[c].upper().replace("_", "-").replace("HBM2E", "HBM2e")
                   for c in cols["media"]]
    assert np.array_equal(s.stream, cols["pattern"] == 1) and np.array_equal(s.channels, cols["channels"])


def test_dram_general_path_pinned():
    # array timings take the staged general path; values of the one-function version
    names = ["DDR4-3200", "DDR5-4800", "LPDDR4-2400", "HBM2", "GDDR6", "LPDDR5X-8533"]
    t = {k: np.asarray([dram.STANDARDS[n].as_arrays()[k] for n in names], dtype=float)
         for k in dram.timing(names[0]).as_arrays()}
    stream = np.array([False, True, True, False, False, True])
    rf = np.array([1.0, 0.67, 0.5, 0.8, 0.67, 1.0])
    lat, sat, rho, idle = dram.evaluate_core(t, stream, rf, np.array([5.0, 20.0, 6.0, 10.0, 3.0, 12.0]),
                                             dict(dram.DEFAULT_CONSTANTS))
    assert lat == pytest.approx([59.68315793824007, 70.7293457088956, 52.02538873512063, 58.51209196151274,
                                 50.60196432647061, 45.64529967763211], rel=1e-12)
    assert sat == pytest.approx([18.94556283761791, 33.00533040685049, 17.22713914817201, 63.47015039980218,
                                 29.178906884574964, 31.575223416855092], rel=1e-12)
    assert idle == pytest.approx([53.51001602564103, 34.312755555555555, 30.308579748845265, 55.63384615384615,
                                  49.68227617602428, 37.19388020020996], rel=1e-12)
    assert rho[1] == pytest.approx(0.6059627264282396, rel=1e-12)
    # at or above saturation the latency is inf; with a cap it stays finite
    lat2, *_ = dram.evaluate_core(t, stream, rf, sat * 1.01, dict(dram.DEFAULT_CONSTANTS))
    lat3, *_ = dram.evaluate_core(t, stream, rf, sat * 1.01, dict(dram.DEFAULT_CONSTANTS), rho_cap=0.95)
    assert np.isinf(lat2).all() and np.isfinite(lat3).all()


DDR4_INI = """[dram_structure]
protocol = {protocol}
bankgroups = 4
banks_per_group = 4
rows = 65536
columns = 1024
device_width = 8
BL = {bl}
[timing]
tCK = 0.63
AL = {al}
CL = 22
CWL = 16
tRCD = 22
tRCDRD = 30
t32AW = 400
[system]
channel_size = 16384
channels = 1
bus_width = 64
address_mapping = {mapping}
"""


@pytest.mark.parametrize("protocol,bl,mapping,al,expect", [
    ("DDR4", 8, "rorabachcobg", 0, dict(burst_cyc=4.0, stream_mode=1, cl=22.0, trcd=22.0, lines_per_row=128, t32aw=0.0)),
    ("DDR4", 8, "rorabgchcoba", 2, dict(burst_cyc=4.0, stream_mode=2, cl=24.0, cwl=18.0, request_bytes=64)),
    ("DDR4", 8, "robgbachraco", 0, dict(stream_mode=0, ranks=2)),
    ("GDDR5", 8, "robgbachraco", 0, dict(burst_cyc=2.0, trcd=30.0, t32aw=400.0, lines_per_row=1024)),
    ("GDDR5X", 16, "robgbachraco", 0, dict(burst_cyc=2.0, request_bytes=128)),
    ("HBM2", 4, "robgbachraco", 0, dict(burst_cyc=2.0, trcd=30.0, lines_per_row=512, t32aw=0.0)),
])
def test_read_ini_stages(tmp_path, protocol, bl, mapping, al, expect):
    path = tmp_path / "x.ini"
    path.write_text(DDR4_INI.format(protocol=protocol, bl=bl, mapping=mapping, al=al))
    t = dramsim3_io.read_ini(path)
    assert t.protocol == protocol and t.name == "x"
    assert {k: getattr(t, k) for k in expect} == expect


def test_read_ini_errors(tmp_path):
    bad = tmp_path / "bad.ini"
    bad.write_text("[timing]\ntCK = fast\n")
    with pytest.raises(DseError, match="tCK.*not a number"):
        dramsim3_io.read_ini(bad)
    with pytest.raises(DseError, match="not found"):
        dramsim3_io.read_ini(tmp_path / "missing.ini")
