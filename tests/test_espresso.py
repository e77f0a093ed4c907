"""espresso: headline claims, the article's BOM arithmetic, mechanism invariants, the
calibration and the lender-to-borrower LP."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from dse.claims import evaluate_claims
from dse.errors import DseError
from models.espresso import calibration, harvest
from models.espresso import scenarios as sc

CLAIMS = registry.model_dir("espresso") / "claims.yaml"
#: Whether the headline claims hold (breakeven-cxl-premium is a documented miss): tests/test_claims_all.py.


@pytest.fixture(scope="module")
def results():
    return {r.id: r for r in evaluate_claims(CLAIMS)}


@pytest.fixture(scope="module")
def model():
    return registry.get("espresso")


def _headline_ids():
    import yaml

    doc = yaml.safe_load(CLAIMS.read_text())
    return [c["id"] for c in doc["claims"] if c.get("headline", True)]


def test_every_issue_headline_is_flagged():
    ids = set(_headline_ids())
    for needed in ("bom-saving-2tb", "utilization-gain", "parity-microbench", "parity-real", "microbench-shrunk-loss",
                   "microbench-oc-loss", "real-shrunk-loss", "real-oc-loss", "real-espresso-vs-shrunk",
                   "real-espresso-vs-vh", "breakeven-cxl-premium"):
        assert needed in ids


def _ali0_breakeven_pct(**overrides):
    """Break-even CXL premium on Ali-0 (2 TB) from the linear cost model."""
    e0 = sc.run("espresso", sc.FIG13, cxl_premium_frac=0.0, **overrides)
    e1 = sc.run("espresso", sc.FIG13, cxl_premium_frac=1.0, **overrides)
    oc = sc.run("oc", sc.FIG13, **overrides)
    return float((e0["iops"] / oc["iops"] * oc["bom_usd"] - e0["bom_usd"])[0] / (e1["bom_usd"] - e0["bom_usd"])[0] * 100)


def test_breakeven_on_ali0_is_forced_by_the_fig13a_gap(results):
    """With a linear cost model, a 19.7% IOPS/$ gap at a 10% premium on the same workload
    means break-even where the premium has raised Espresso's $119.52 by 19.7%: $143.07 =
    $85.20 + (1 + p) $31.20, p = 85.5% -- so Fig 13b's 40% cannot be on Ali-0 too."""
    assert results["iops-per-usd-vs-oc"].value == pytest.approx(19.7, abs=0.05)
    assert _ali0_breakeven_pct() == pytest.approx(85.5, abs=0.3)


def test_fig13b_on_ali0_needs_another_oc_price():
    """The other reading, kept as a parameter value: an OC controller price that puts the
    Ali-0 break-even at 40% gives a gap of $128.88 / $119.52 - 1 = 7.8% at 10%."""
    from models.espresso.data import FITTED_TOML
    import tomllib

    alt = tomllib.loads(FITTED_TOML.read_text())["oc_controller_usd_fig13b_ali0"]["value"]
    assert 0.5 < alt < 5.0  # an implausible price: a 40% break-even on Ali-0 does not fit Fig 13a
    assert _ali0_breakeven_pct(oc_controller_usd=alt) == pytest.approx(40.0, abs=0.05)
    e = sc.run("espresso", sc.FIG13)["iops_per_usd"][0]
    oc = sc.run("oc", sc.FIG13, oc_controller_usd=alt)["iops_per_usd"][0]
    assert e / oc - 1 == pytest.approx(128.88 / 119.52 - 1, abs=5e-4)


def test_firmware_split_is_simplessds():
    """cmd_kcycles / slice_kcycles is the SimpleSSD 2.0 instruction ratio (4381 / 1485)."""
    from models.espresso.data import fitted_value
    from models.espresso.ssd import CMD_PER_SLICE_X

    assert CMD_PER_SLICE_X == pytest.approx(4381 / 1485)
    assert fitted_value("cmd_kcycles") == pytest.approx(CMD_PER_SLICE_X * fitted_value("slice_kcycles"), rel=1e-6)


def test_bom_matches_the_articles_arithmetic(model):
    # digest M6 worked table: 2 TiB Conv $147.60, Shrunk $116.40, Espresso $119.52; 4 TiB Conv $241.20
    got = {d: model.point(design=d, capacity_tb=2.0)["bom_usd"] for d in ("conv", "shrunk", "vh", "espresso", "proch")}
    assert got["conv"] == pytest.approx(147.60, abs=0.005)
    assert got["shrunk"] == pytest.approx(116.40, abs=0.005)
    assert got["vh"] == pytest.approx(116.40, abs=0.005)
    assert got["espresso"] == pytest.approx(119.52, abs=0.005)
    assert got["proch"] == pytest.approx(119.52, abs=0.005)
    assert model.point(design="conv", capacity_tb=4.0)["bom_usd"] == pytest.approx(241.20, abs=0.005)
    # premium 0..40%: $116.40, $119.52, $122.64, $125.76, $128.88
    prem = model.run({"design": "espresso", "capacity_tb": 2.0, "cxl_premium_frac": [0.0, 0.1, 0.2, 0.3, 0.4]})["bom_usd"]
    np.testing.assert_allclose(prem, [116.40, 119.52, 122.64, 125.76, 128.88], atol=0.005)


def test_uniform_miss_ratios(model):
    lat = dict(sc.LATENCY_4K)
    assert model.point(design="oc", **lat)["miss_ratio_frac"] == pytest.approx(2.0 / 3.0)  # 16 GB / 48 TB
    assert model.point(design="shrunk", **lat)["miss_ratio_frac"] == pytest.approx(0.5)
    assert model.point(design="conv", **lat)["miss_ratio_frac"] == pytest.approx(0.0)
    assert model.point(design="espresso", **lat)["miss_ratio_frac"] == pytest.approx(0.10)  # borrow down to 10%
    assert model.point(design="shrunk", workload="micro", pattern="sequential", qd=1)["miss_ratio_frac"] == 0.0


# ----------------------------------------------------------------------------- invariants
def _all_points(n=400, seed=3):
    from dse.bench import random_inputs

    return random_inputs(registry.get("espresso"), n, seed=seed)


@pytest.mark.parametrize("knob,delta", [("channels", 4), ("dies_per_channel", 4), ("cores_per_ssd", 1),
                                        ("conv_cores_per_ssd", 1), ("channel_mts", 400.0), ("host_cores", 4)])
def test_more_resources_never_slower(model, knob, delta):
    cols = _all_points()
    lo = {k: v.copy() for k, v in cols.items()}
    hi_bound = model.param_map()[knob].bounds[1]
    lo[knob] = np.minimum(lo[knob], hi_bound - delta)
    lo["lenders"] = np.minimum(lo["lenders"], lo["jbof_ssds"] - 1)  # at least one borrower
    # not invariants by design: USL crosstalk makes more cores slower past its peak (Gunther),
    # and lenders holding a queue depth of their own run more of it on faster resources
    lo["core_crosstalk_frac"] = np.zeros_like(lo["core_crosstalk_frac"])
    lo["lender_qd"] = np.zeros_like(lo["lender_qd"])
    hi = dict(lo, **{knob: lo[knob] + delta})
    a = model.run(lo, checked=True)["saturation_gbps"]
    b = model.run(hi, checked=True)["saturation_gbps"]
    ok = np.isfinite(a) & np.isfinite(b)
    assert ok.sum() > 300
    # the flash block's channel-wait fixed point is not exactly monotone in dies (<3%)
    slack = 0.03 if knob == "dies_per_channel" else 1e-9
    assert np.all(b[ok] >= a[ok] * (1 - slack))


def test_more_dram_never_raises_misses_or_qd1_latency(model):
    lat = {**sc.LATENCY_4K, "dram_gb_per_tb": [0.1, 0.25, 0.5, 0.75, 1.0, 1.5]}
    for d in ("shrunk", "proch", "espresso", "vh"):
        out = model.run({"design": d, **lat})
        assert np.all(np.diff(out["miss_ratio_frac"]) <= 1e-12)
        assert np.all(np.diff(out["qd1_latency_us"]) <= 1e-9)


def test_design_ordering_on_the_microbenchmarks(model):
    t = {d: model.run({"design": d, **sc.MICROBENCH})["throughput_gbps"] for d in ("conv", "shrunk", "proch", "espresso", "vh", "vh_ideal")}
    assert np.all(t["proch"] >= t["shrunk"] * (1 - 1e-9))
    assert np.all(t["espresso"] >= t["proch"] * (1 - 1e-9))
    assert np.all(t["vh_ideal"] >= t["vh"] * (1 - 1e-9))
    assert np.all(t["shrunk"] <= t["conv"] * (1 + 1e-9))
    # half the compute costs Shrunk throughput on every large read (processor-bound)
    reads = np.asarray(sc.MICROBENCH["read_frac"]) == 1.0
    assert np.all(t["shrunk"][reads] < 0.8 * t["conv"][reads])


def test_more_lenders_help_until_the_data_end_binds(model):
    out = model.run({"design": "espresso", "workload": "ali0", "cores_per_ssd": 2.0, "lenders": np.arange(0.0, 12.0)})
    g = out["throughput_gbps"]
    assert np.all(np.diff(g) >= -1e-3 * g[1:])  # more lenders: only the redirect latency costs
    assert g[8] > 1.3 * g[0]  # harvesting pays off
    assert g[11] == pytest.approx(g[8], rel=0.01)  # 1:11 no better than 1:2 (L298)


def test_busy_lenders_lend_less(model):
    u = np.asarray([0.0, 0.2, 0.4, 0.6, 0.74, 0.8])
    out = model.run({"design": "espresso", **sc.UTIL_256K, "lender_util_frac": u})
    g = out["throughput_gbps"]
    assert np.all(np.diff(g) <= 1e-9 * g[:-1])
    shrunk = model.point(design="shrunk", **sc.UTIL_256K)["throughput_gbps"]
    assert g[-1] == pytest.approx(shrunk)  # above the 75% watermark a lender lends nothing


def test_littles_law_and_unloaded_latency(model):
    out = model.run({"design": ["conv", "shrunk", "espresso"], **sc.UTIL_256K})
    np.testing.assert_allclose(out["latency_us"] * out["iops"], 64 * 1e6, rtol=1e-9)
    qd1 = model.run({"design": ["conv", "shrunk", "espresso", "oc"], **{**sc.UTIL_256K, "qd": 1.0}})
    np.testing.assert_allclose(qd1["latency_us"], qd1["qd1_latency_us"], rtol=1e-9)
    assert np.all(out["loaded_latency_us"] > out["qd1_latency_us"])


def test_vh_copyback_lifetime(model):
    assert model.point(design="vh")["lifetime_x"] == pytest.approx(1 / 1.29)
    assert model.point(design="vh_ideal")["lifetime_x"] == 1.0
    assert model.point(design="vh", lenders=0)["lifetime_x"] == 1.0  # nowhere to redirect


def test_a_jbof_without_borrowers_is_nan(model):
    out = model.point(design="espresso", jbof_ssds=6, lenders=6)
    assert np.isnan(out["throughput_gbps"]) and np.isfinite(out["bom_usd"])


# ----------------------------------------------------------------------------- harvesting
def test_split_follows_the_load_balance_rule_within_limits():
    rng = np.random.default_rng(0)
    n = 400
    c_b = rng.uniform(1e9, 6e9, n)
    c_l = rng.uniform(1e9, 12e9, n)
    u0 = rng.uniform(0.0, 0.7, n)
    omega = rng.uniform(0.5, 2.0, n)
    cap, _ = harvest.harvest_capacity(c_b, c_l, u0, 0.031, 0.75)
    demand = rng.uniform(0.05, 1.0, n) * cap
    p = harvest.redirect_frac(demand, c_b, c_l, u0, 0.031, omega, 0.75)
    u_b = (1 - p) * demand / c_b
    u_l = u0 + p * demand * 1.031 / c_l
    assert np.all(u_b <= 1 + 1e-9) and np.all(u_l <= 0.75 + 1e-9)
    free = (u_b < 1 - 1e-9) & (u_l < 0.75 - 1e-9)  # neither limit binds: the article's rule holds
    assert free.sum() > 50
    np.testing.assert_allclose(((1 - p) / p)[free], (omega * u_l / u_b)[free], rtol=1e-9)


def test_capacity_is_own_plus_lent_below_the_watermark():
    cap, p = harvest.harvest_capacity(3e9, 3e9, 0.0, 0.031, 0.75)
    assert cap == pytest.approx(3e9 + 2.25e9 / 1.031)
    assert p == pytest.approx(2.25e9 / 1.031 / cap)
    busy, p_busy = harvest.harvest_capacity(3e9, 3e9, 0.8, 0.031, 0.75)  # lender above the watermark
    assert busy == 3e9 and p_busy == 0.0


def test_lp_beats_or_matches_the_formula():
    from dse.optimize import solve

    sol = solve("espresso-harvest", {})
    s = sol.summary
    assert s["LP optimum (GB/s)"] >= s["article's decentralized formula (GB/s)"] - 1e-6
    assert s["article's decentralized formula (GB/s)"] > s["no harvesting (GB/s)"]
    assert 0.0 <= s["gap of the formula to the LP (%)"] < 25.0
    assert s["lender spare cores used by the LP"] <= s["lender spare cores available"] + 1e-6
    for row in sol.rows:
        assert row["lp_gbps"] <= row["data_bound_gbps"] * (1 + 1e-6)
    # identical borrowers and idle lenders: the formula is (near) optimal
    same = solve("espresso-harvest", {"borrowers": "ali0,ali0,ali0", "lender_utils": "0,0,0"}).summary
    assert same["gap of the formula to the LP (%)"] < 1.0


def test_lp_rejects_bad_input():
    from dse.optimize import solve

    with pytest.raises(DseError, match="not a trace"):
        solve("espresso-harvest", {"borrowers": "nope"})
    with pytest.raises(DseError, match="within"):
        solve("espresso-harvest", {"lender_utils": "0,1.5"})


# ----------------------------------------------------------------------------- calibration
def test_shipped_constants_reproduce_their_targets():
    """The defaults in fitted.toml hit the secondary numbers they were fitted to."""
    from models.espresso.data import fitted

    v = {k: e["value"] for k, e in fitted().items()}
    got = calibration.achieved(v)
    for name, (_, target) in calibration.TARGETS.items():
        assert got[name] == pytest.approx(target, rel=2e-3, abs=1e-3), name


# ----------------------------------------------------------------------------- DPU driver cost
def test_host_driver_cycles_load_the_dpu(model):
    """host_cmd_kcycles: the DPU's NVMe driver cycles per command.  OC's host work per request
    grows by exactly D x (1 + mapping misses); every design's SSDs are capped at
    host cycles / (borrowers x D); the latency (which already holds the driver's time,
    HOST_NVME_US) does not change."""
    from models.espresso.model import HOST_DRIVER_KCYCLES_LINK

    assert HOST_DRIVER_KCYCLES_LINK == pytest.approx(4.5 * 2.1)  # 1.5 + 1.0 + 2.0 us at 2.1 GHz
    d = 9.45
    host_hz = 16 * 2.1e9
    for scen in (sc.LATENCY_4K, sc.UTIL_256K, {"workload": "ali0"}):
        a = model.point(design="oc", host_cmd_kcycles=0.0, **scen)
        b = model.point(design="oc", host_cmd_kcycles=d, **scen)
        per_io = lambda o: o["proc_util_frac"] * host_hz / (6 * o["iops"])  # noqa: E731
        assert per_io(b) - per_io(a) == pytest.approx(d * 1e3 * (1 + a["miss_ratio_frac"]), rel=1e-9)
        assert b["qd1_latency_us"] == pytest.approx(a["qd1_latency_us"], rel=1e-12)
    # 4 KB random reads at QD64: Conv's SSDs outrun a DPU that pays 9.45 k cycles per command
    small = {**sc.LATENCY_4K, "qd": 64.0}
    free = model.point(design="conv", host_cmd_kcycles=0.0, **small)["iops"]
    capped = model.point(design="conv", host_cmd_kcycles=d, **small)["iops"]
    assert free > host_hz / (6 * d * 1e3)
    assert capped == pytest.approx(host_hz / (6 * d * 1e3), rel=1e-9)
    # the default is the link block's driver cost
    assert model.param_map()["host_cmd_kcycles"].default == pytest.approx(d)


def test_host_driver_cost_moves_oc_loss_to_small_requests_but_breaks_fig13b():
    """With the link block's driver cost on the DPU (the default) and the OC constants
    fitted on their own anchors (4-SSD saturation, Fig 13a), OC's trace loss is the
    article's 16.2% within 10% and the microbenchmark loss stays near 27.8%, but the fitted
    OC controller price ($11.2) puts Fig 13b's break-even (mean over the traces) below zero.
    Without it (0 cycles, refitted): OC $27.1 -- above Espresso's controller share -- a
    10.8% trace loss and a 39% break-even (claims.yaml notes)."""
    from models.espresso.data import STARTING_POINT, fitted_value

    def outcome(v):
        real_loss = 100 * (1 - sc.mean_ratio("oc", "conv", sc.REAL, **v))
        mb_loss = 100 * (1 - sc.mean_ratio("oc", "conv", sc.MICROBENCH, **v))
        traces = {"workload": list(sc.REAL["workload"]), "capacity_tb": 2.0}
        e0 = sc.run("espresso", traces, cxl_premium_frac=0.0, **v)
        e1 = sc.run("espresso", traces, cxl_premium_frac=1.0, **v)
        oc = sc.run("oc", traces, **v)
        breakeven = (np.mean(e0["iops"] / oc["iops"]) * np.mean(oc["bom_usd"]) - np.mean(e0["bom_usd"])) / (
            np.mean(e1["bom_usd"]) - np.mean(e0["bom_usd"])) * 100
        return real_loss, mb_loss, breakeven

    base = {k: fitted_value(k) for k in STARTING_POINT}
    assert base["oc_ftl_scale_x"] == pytest.approx(1.479, abs=0.01)
    assert base["oc_controller_usd"] == pytest.approx(11.2, abs=0.2)
    real_loss, mb_loss, breakeven = outcome(base)
    assert real_loss == pytest.approx(14.8, abs=0.2) and 16.2 * 0.9 < real_loss < 16.2 * 1.1
    assert 27.8 * 0.9 < mb_loss < 27.8 * 1.1
    assert breakeven < 0.0  # paper 40%
    v = calibration._tied(calibration.refit_oc(base, host_cmd_kcycles=0.0))
    assert calibration.oc_saturation_ssds({**v, "host_cmd_kcycles": 0.0}) == pytest.approx(4.0, rel=1e-6)
    assert v["oc_controller_usd"] == pytest.approx(27.1, abs=0.3)
    real_loss, mb_loss, breakeven = outcome({**v, "host_cmd_kcycles": 0.0})
    assert real_loss == pytest.approx(10.8, abs=0.2) and breakeven == pytest.approx(39.4, abs=1.0)


def test_workload_table_is_table3():
    from models.espresso.data import TRACES, workloads

    t = workloads()
    assert len(TRACES) == 14
    assert (t["ali0"]["read_frac"], t["ali0"]["read_kib"], t["ali0"]["write_kib"]) == (0.981, 37.0, 16.8)
    assert (t["db"]["read_frac"], t["db"]["write_kib"]) == (0.980, 743.3)
    assert t["tencent1"]["read_frac"] == 0.020


def test_spaces_are_small_and_price_the_design():
    from dse.registry import project_root
    from dse.space import load_space

    for name in ("espresso.toml", "espresso_pareto.toml"):
        s = load_space(project_root() / "spaces" / name)
        assert s.grid_size <= 300_000
        assert "bom_usd" in s.objectives
        assert set(s.knob_names) >= {"design", "lenders"}


def test_figures_render():
    from models.espresso.figures import figures

    figs = figures()
    assert len(figs) == 6
    for title, chart in figs:
        assert title and chart.to_dict()


# ----------------------------------------------------------------------------- fast flash path
def _flash_case(n=3000, seed=11):
    """Per-point flash inputs as the model builds them, over the whole parameter space."""
    from models.espresso import ssd

    rng = np.random.default_rng(seed)
    ch = rng.integers(2, 33, n).astype(float)
    dies = rng.integers(1, 33, n).astype(float)
    mts = rng.uniform(400.0, 4800.0, n)
    p_map = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(0.0, 0.9, n))
    rd_b = rng.uniform(4.0, 1024.0, n) * 1024
    wr_b = rng.uniform(4.0, 1024.0, n) * 1024
    seq = rng.random(n) < 0.3
    wa = rng.uniform(1.0, 3.0, n)
    rf = np.where(rng.random(n) < 0.1, rng.choice([0.0, 1.0], n), rng.random(n))
    wf = (1.0 - rf) * np.where(rng.random(n) < 0.15, 0.71, 1.0)
    fa = ssd.flash_arrays(ch, dies, mts, p_map)
    return fa, rd_b, wr_b, seq, wa, rf, wf, rng


def test_flash_data_end_matches_the_blocks_public_path():
    """ssd.flash_data_end (the block's thresholded solve, saturation_iops(above_iops=...)) against
    flash_read_write (the block's public saturation_iops / unloaded_latency_us): equal to
    the solver's tolerance where the flash binds the data end, +inf only where the full
    solve exceeds the other bounds; the latencies are the same."""
    from models.espresso import ssd

    fa, rd_b, wr_b, seq, wa, rf, wf, rng = _flash_case()
    n = rd_b.size
    x_fr, x_fw, l_r, l_w = ssd.flash_read_write(fa, rd_b, wr_b, seq, wa, n)
    with np.errstate(divide="ignore"):
        ref = 1.0 / (rf / x_fr + wf / x_fw)
    # other data-end bounds spread around the flash's own rate: both outcomes occur
    x_cap = ref * np.exp(rng.uniform(-1.0, 1.0, n))
    got, gl_r, gl_w = ssd.flash_data_end(fa, rd_b, wr_b, seq, wa, rf, wf, x_cap, n)
    np.testing.assert_array_equal(gl_r, l_r)
    np.testing.assert_array_equal(gl_w, l_w)
    binds = ref < x_cap * (1 - 1e-6)
    free = ref > x_cap * (1 + 2e-6)
    assert binds.sum() > 0.25 * n and free.sum() > 0.25 * n
    np.testing.assert_allclose(got[binds], ref[binds], rtol=1e-7)
    # where the flash cannot bind: +inf (read solve skipped), or the full value where there
    # was no read to skip (pure writes are always solved)
    skipped = np.isinf(got)
    assert skipped[free & (rf > 0)].mean() > 0.95
    assert not skipped[binds].any()
    np.testing.assert_allclose(got[~skipped], ref[~skipped], rtol=1e-7)
    # the data-end bound the model takes from it is the reference one
    np.testing.assert_allclose(np.minimum(got, x_cap), np.minimum(ref, x_cap), rtol=1e-7)
    # without a cap it is the full solve
    full, _, _ = ssd.flash_data_end(fa, rd_b, wr_b, seq, wa, rf, wf, np.inf, n)
    np.testing.assert_allclose(full, ref, rtol=1e-7)


def test_model_equals_the_reference_flash_path(model, monkeypatch):
    """The whole model with the fast flash path against the model with the block's public
    path (every point's flash solved in full) on random points of the bench."""
    from dse.bench import random_inputs
    from models.espresso import ssd

    cols = random_inputs(model, 4000, seed=5)
    fast = model.run(cols, checked=True)

    def reference(fa, rd_b, wr_b, seq, wa, rf, wf, x_cap, n):
        x_fr, x_fw, l_r, l_w = ssd.flash_read_write(fa, rd_b, wr_b, seq, wa, n)
        return 1.0 / (rf / x_fr + wf / x_fw), l_r, l_w

    monkeypatch.setattr(ssd, "flash_data_end", reference)
    ref = model.run(cols, checked=True)
    for k in ref:
        np.testing.assert_allclose(fast[k], ref[k], rtol=1e-6, equal_nan=True, err_msg=k)
