"""The flash block as a package (issue 19 items 1 and 6): every public entry gives the
numbers the single-module block gave, the batch-native spec (``arrays`` / ``from_batch`` /
``params``), the PCIe messages through the link block, and the package's shape.

tests/data/flash_regression.npz holds random inputs and the outputs of the block as it
was before the split (``make_fixture`` wrote it, run on that code); the constants used
are stored with it, so a later recalibration does not move the reference."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

from models.blocks import flash, link

FIXTURE = Path(__file__).parent / "data" / "flash_regression.npz"
PACKAGE = Path(flash.__file__).parent
RTOL = 1e-9
IN_KEYS = ("size", "rf", "seq", "wa", "qd", "load", "above")


def _draw(rng, n):
    """Random requests: sizes 512 B - 1 MiB, pure and mixed read fractions, both patterns,
    GC write amplification, queue depths 1 - 600, open-loop loads around saturation."""
    size = np.exp(rng.uniform(np.log(512), np.log(2**20), n)).round()
    rf = rng.choice([0.0, 1.0, 0.7, -1.0], n)
    rf = np.where(rf < 0, rng.uniform(0, 1, n), rf)
    return {"size": size, "rf": rf, "seq": rng.uniform(size=n) < 0.4,
            "wa": np.where(rng.uniform(size=n) < 0.6, 1.0, rng.uniform(1.0, 3.0, n)),
            "qd": np.exp(rng.uniform(0, np.log(600), n)).round(), "load": rng.uniform(0.05, 1.1, n),
            "above": rng.uniform(0.5, 1.5, n)}


def _evaluate(cfg, d, k):
    """Every loaded / unloaded public entry at the points ``d``."""
    size, rf, seq, wa = d["size"], d["rf"], d["seq"], d["wa"]
    sat = flash.saturation_iops(cfg, size, rf, seq, wa=wa, cal=k)
    x, lat = flash.closed_loop(cfg, d["qd"], size, rf, seq, wa=wa, cal=k)
    return {
        "unloaded": flash.unloaded_latency_us(cfg, size, rf, seq, wa=wa),
        "sat": sat,
        "sat_bw": flash.saturation_bw_gbps(cfg, size, rf, seq, wa=wa, cal=k),
        "sat_above": flash.saturation_iops(cfg, size, rf, seq, wa=wa, cal=k, above_iops=d["above"] * sat),
        "closed_iops": x, "closed_lat": lat,
        "open_iops": d["load"] * sat,
        "open_lat": flash.open_loop_latency_us(cfg, d["load"] * sat, size, rf, seq, wa=wa, cal=k),
        "sat_seq_str": flash.saturation_iops(cfg, size, rf, "sequential", cal=k),
        "sat_rnd_str": flash.saturation_iops(cfg, size, rf, "random", cal=k),
    }


def _dict_config(rng, n):
    """The dict form with per-point geometry, links (some transparent), CMT misses, read
    rounds and fetch windows."""
    names = list(flash.CONFIGS)
    base = [flash.config_arrays(flash.config(names[i])) for i in rng.integers(0, len(names), n)]
    a = {key: np.array([float(b[key]) for b in base]) for key in base[0]}
    a["channels"] = rng.choice([2.0, 4.0, 8.0, 16.0], n)
    a["units"] = a["channels"] * rng.choice([1.0, 2.0, 4.0, 8.0], n)
    a["planes"] = rng.choice([1.0, 2.0, 4.0], n)
    a["dies"] = rng.choice([1.0, 2.0], n)
    a["ch_bw"] = a["ch_bw"] * rng.uniform(0.5, 2.0, n)
    a["pcie_bw"] = np.where(rng.uniform(size=n) < 0.3, np.inf, a["pcie_bw"] * rng.uniform(0.5, 2.0, n))
    a["p_map"] = np.where(rng.uniform(size=n) < 0.5, 0.0, rng.uniform(0, 1, n))
    a["rounds"] = rng.choice([0.0, 1.0], n)
    a["fetch"] = rng.choice([64.0, 256.0, 512.0], n)
    return a


def make_fixture(path, n=600):  # pragma: no cover - run once, on the code being pinned
    """Write the regression fixture from the block as it is now."""
    rng = np.random.default_rng(20261128)
    k_cal, k_def = flash.constants(), dict(flash.DEFAULT_CONSTANTS)
    keys = sorted(k_cal)
    save = {"k_cal": np.array([k_cal[k] for k in keys]), "k_def": np.array([k_def[k] for k in keys]),
            "k_keys": np.array(keys)}
    for name in flash.CONFIGS:
        d = _draw(rng, n)
        save.update({f"{name}/in/{key}": v for key, v in d.items()})
        save.update({f"{name}/out/{key}": v for key, v in _evaluate(name, d, k_cal).items()})
        save.update({f"{name}/arrays/{key}": np.asarray(v, float) for key, v in flash.config_arrays(name).items()})
    a, d = _dict_config(rng, 3 * n), None
    d = _draw(rng, 3 * n)
    save.update({f"dict/cfg/{key}": v for key, v in a.items()})
    save.update({f"dict/in/{key}": v for key, v in d.items()})
    save.update({f"dict/out/{key}": v for key, v in _evaluate(a, d, k_def).items()})
    op, fill = rng.uniform(0.02, 0.5, 500), rng.uniform(0.3, 1.0, 500)
    save["gc/op"], save["gc/fill"] = op, fill
    for pol in ("greedy", "random", "d_choices"):
        save[f"gc/{pol}"] = flash.gc_write_amplification(op, fill, pol, d=4)
    pay = rng.uniform(0, 70000, 500).round()
    lanes, lane_gbps = rng.choice([1.0, 2.0, 4.0, 8.0, 16.0], 500), rng.uniform(0.25, 8.0, 500)
    save["pcie/payload"], save["pcie/lanes"], save["pcie/lane_gbps"] = pay, lanes, lane_gbps
    save["pcie/us"] = flash.pcie_message_us(pay, lanes, lane_gbps)
    for cell in ("SLC", "MLC", "TLC", "QLC", "ZNAND"):
        for ppb in (64, 96, 256, 1024):
            save[f"mix/{cell}/{ppb}"] = np.array(flash.page_type_mix(cell, ppb))
    np.savez_compressed(path, **save)


@pytest.fixture(scope="module")
def ref():
    return np.load(FIXTURE)


def _consts(ref, which):
    return dict(zip((str(k) for k in ref["k_keys"]), (float(v) for v in ref[which])))


def _same(got, want, what):
    got, want = np.asarray(got, float), np.asarray(want, float)
    assert got.shape == want.shape, what
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=what)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)
    ok = np.isfinite(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=RTOL, atol=0.0, err_msg=what)


def test_fixture_is_small_and_covers_every_entry(ref):
    assert FIXTURE.stat().st_size < 1_000_000
    for name in flash.CONFIGS:
        assert ref[f"{name}/in/size"].size >= 500
    # the fixture reaches saturation (open loop inf), the thresholded solve's +inf and
    # both patterns and pure / mixed read fractions
    assert np.isinf(ref["dict/out/open_lat"]).sum() > 50 and np.isinf(ref["dict/out/sat_above"]).sum() > 50
    assert ref["dict/in/seq"].any() and (~ref["dict/in/seq"]).any()
    assert {0.0, 1.0, 0.7} <= set(np.unique(ref["espresso_tlc/in/rf"]))


@pytest.mark.parametrize("name", list(flash.CONFIGS))
def test_named_configs_match_the_single_module_block(ref, name):
    d = {key: ref[f"{name}/in/{key}"] for key in IN_KEYS}
    got = _evaluate(name, d, _consts(ref, "k_cal"))
    for key, v in got.items():
        _same(v, ref[f"{name}/out/{key}"], f"{name} {key}")
    for key, v in flash.config_arrays(name).items():
        _same(v, ref[f"{name}/arrays/{key}"], f"{name} config_arrays {key}")


def test_dict_form_matches_the_single_module_block(ref):
    cfg = {key[len("dict/cfg/"):]: ref[key] for key in ref.files if key.startswith("dict/cfg/")}
    d = {key: ref[f"dict/in/{key}"] for key in IN_KEYS}
    for key, v in _evaluate(cfg, d, _consts(ref, "k_def")).items():
        _same(v, ref[f"dict/out/{key}"], f"dict {key}")


def test_gc_pcie_and_page_mix_match_the_single_module_block(ref):
    for pol in ("greedy", "random", "d_choices"):
        _same(flash.gc_write_amplification(ref["gc/op"], ref["gc/fill"], pol, d=4), ref[f"gc/{pol}"], pol)
    _same(flash.pcie_message_us(ref["pcie/payload"], ref["pcie/lanes"], ref["pcie/lane_gbps"]), ref["pcie/us"], "pcie")
    for cell in ("SLC", "MLC", "TLC", "QLC", "ZNAND"):
        for ppb in (64, 96, 256, 1024):
            _same(flash.page_type_mix(cell, ppb), ref[f"mix/{cell}/{ppb}"], f"mix {cell} {ppb}")


def test_the_public_api_is_reexported():
    old = ["FlashConfig", "CONFIGS", "CELL_TIMINGS", "DEFAULT_CONSTANTS", "config", "constants", "page_type_mix",
           "unloaded_latency_us", "saturation_iops", "saturation_bw_gbps", "closed_loop", "open_loop_latency_us",
           "gc_write_amplification", "pcie_message_us", "config_arrays", "TLP_PAYLOAD_B", "TLP_OVERHEAD_B",
           "PCIE_TLP_EFFICIENCY", "READ_REQUEST_B", "SQE_B", "CQE_B", "DOORBELL_B", "MAP_READ_B", "READ_CMD_US",
           "READ_CMD_PLANE_US", "PROG_CMD_US", "PROG_CMD_PLANE_US", "QUEUE_FETCH_SIZE"]
    for name in old + ["arrays", "from_batch", "params"]:
        assert name in flash.__all__ and getattr(flash, name) is not None, name
    assert flash.READ_CMD_US == pytest.approx((20 + 6 * 25 + 100 + 20) / 1e3)
    assert flash.config("espresso_tlc").pcie_gbps == pytest.approx(3.938 * 4 * 128 / 156)


def test_unloaded_latency_takes_no_unused_cal():
    assert "cal" not in inspect.signature(flash.unloaded_latency_us).parameters
    with pytest.raises(TypeError):
        flash.unloaded_latency_us("espresso_tlc", 4096, cal={})  # type: ignore[call-arg]
    for fn in (flash.saturation_iops, flash.closed_loop, flash.open_loop_latency_us):
        assert "cal" in inspect.signature(fn).parameters
    # cal is used there: another k_ch moves the random-read throughput of a channel-bound SSD
    k = dict(flash.DEFAULT_CONSTANTS)
    x0 = float(flash.saturation_iops("espresso_tlc", 4096, 1.0, "random", cal=k))
    x1 = float(flash.saturation_iops("espresso_tlc", 4096, 1.0, "random", cal={**k, "k_q": 2.0}))
    assert x1 != x0


def test_package_modules_are_small_and_functions_short():
    for f in PACKAGE.glob("*.py"):
        text = f.read_text(encoding="utf-8")
        assert len(text.splitlines()) < 400, f.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno - node.lineno + 1 <= 80, f"{f.name}:{node.name}"


def test_pcie_messages_go_through_the_link_block():
    # 128-B TLPs with 28 B each: 128 B -> 156 B; 129 B -> 156 + 29 = 185 B, 188 on 4 lanes
    assert float(link.tlp_wire_bytes(128.0, 1, 128.0, 28.0)) == 156.0
    assert float(link.tlp_wire_bytes(129.0, 4, 128.0, 28.0)) == 188.0
    assert float(link.tlp_wire_bytes(0.0, 4, 128.0, 28.0)) == 0.0
    # flash's message time is those wire bytes over the raw lane bandwidth
    us = float(flash.pcie_message_us(4096.0, 4, 1.0))
    assert us == pytest.approx(float(link.tlp_wire_bytes(4096.0, 4, 128.0, 28.0)) / 4e3)
    assert us == pytest.approx((4096 + 32 * 28) / 4e3)


def _batch(cols, n):
    from dse.model import Batch

    params = {p.name: p for p in flash.params("ssd_")}
    return Batch(cols, params, n)


def test_from_batch_builds_the_dict_form_from_prefixed_columns():
    n = 4
    ch = np.array([4.0, 8.0, 8.0, 16.0])
    p = _batch({"ssd_channels": ch, "ssd_channel_gbps": np.array([1.2, 1.2, 2.4, 1.2]), "other": np.zeros(n)}, n)
    a = flash.from_batch(p, "ssd_", base="dockerssd_mlc")
    c = flash.config("dockerssd_mlc")
    np.testing.assert_array_equal(a["channels"], ch)
    np.testing.assert_array_equal(a["units"], ch * c.chips_per_channel)
    np.testing.assert_allclose(a["ch_bw"], [1200.0, 1200.0, 2400.0, 1200.0])
    assert a["planes"] == c.planes_per_die and a["tr_mean"] == flash.config_arrays(c)["tr_mean"]
    # no column: the base config's own dict form
    assert flash.from_batch(_batch({}, 1), "ssd_", base="dockerssd_mlc") == flash.config_arrays(c)
    # more channels, more random-read throughput; a faster channel, more at 4 KiB too
    x = flash.saturation_iops(a, 4096, 1.0, "random")
    assert x[0] < x[1] < x[3] and x[2] > x[1]


def test_arrays_rejects_unknown_columns():
    from dse.errors import DseError

    with pytest.raises(DseError, match="not allowed"):
        flash.arrays("espresso_ssd", chanels=8)


def test_params_group_has_prefixed_names_sources_and_overrides():
    ps = flash.params("flash_", base="dockerssd_mlc")
    by = {p.name: p for p in ps}
    assert set(by) == {"flash_" + c for c in flash.spec.COLUMN_NAMES}
    assert by["flash_channels"].default == 12 and by["flash_channels"].integer
    assert by["flash_channel_gbps"].default == 1.2 and "dockerssd_mlc" in by["flash_channel_gbps"].source
    assert all(p.source for p in ps)
    own = {p.name: p for p in flash.params(channels=(16, "assumption: a 16-channel controller"))}
    assert own["channels"].default == 16 and own["channels"].source.startswith("assumption")
    assert {p.name: p.default for p in flash.params(channels=8)}["channels"] == 8  # the base's value
    with pytest.raises(ValueError, match="give"):
        flash.params(channels=9)


def test_models_build_the_dict_form_through_the_public_api():
    """Espresso's and DockerSSD's flash inputs equal the hand-built dicts they replace."""
    from models.dockerssd import hardware as hw
    from models.espresso import ssd

    rng = np.random.default_rng(3)
    ch, dies = rng.integers(2, 33, 50).astype(float), rng.integers(1, 33, 50).astype(float)
    mts, p_map = rng.uniform(400.0, 4800.0, 50), rng.uniform(0.0, 0.9, 50)
    got = flash.config_arrays(ssd.flash_arrays(ch, dies, mts, p_map))
    base = ssd.FLASH_BASE
    old = flash.config_arrays({
        "units": ch * dies, "channels": ch, "planes": base.planes_per_die, "page_bytes": base.page_bytes,
        "pages_per_block": base.pages_per_block, "tr_mean": ssd.TR_MEAN_US, "tprog_mean": ssd.TPROG_MEAN_US,
        "tbers": base.tbers_us, "ch_bw": mts, "pcie_bw": np.inf, "p_map": p_map, "op_ratio": base.op_ratio})
    assert set(got) == set(old)
    for key in old:
        np.testing.assert_array_equal(np.broadcast_to(got[key], (50,)), np.broadcast_to(old[key], (50,)), err_msg=key)
    chips, gbps = rng.integers(1, 9, 50).astype(float), rng.uniform(0.4, 3.0, 50)
    got = hw.flash_arrays(ch, chips, gbps)
    old = dict(flash.config_arrays(flash.config(hw.FLASH_CONFIG)))
    old.update(channels=ch, units=ch * chips, ch_bw=gbps * 1e9 / 1e6)
    for key in old:
        np.testing.assert_array_equal(np.broadcast_to(got[key], (50,)), np.broadcast_to(old[key], (50,)), err_msg=key)


def test_from_batch_gives_dockerssds_flash_columns():
    """DockerSSD's knobs are the group's columns with the prefix ``flash_``: from_batch on
    them equals the model's own flash_arrays (so its models can take either)."""
    from dse.model import Batch
    from models.dockerssd import hardware as hw

    rng = np.random.default_rng(5)
    ch, chips, gbps = rng.integers(1, 64, 40).astype(float), rng.integers(1, 9, 40).astype(float), rng.uniform(0.4, 3, 40)
    p = Batch({"flash_channels": ch, "flash_chips_per_channel": chips, "flash_channel_gbps": gbps}, {}, 40)
    got, want = flash.from_batch(p, "flash_", base=hw.FLASH_CONFIG), hw.flash_arrays(ch, chips, gbps)
    assert set(got) == set(want)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
