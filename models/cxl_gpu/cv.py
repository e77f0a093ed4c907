"""Leave-one-anchor-out for cxl-gpu (``dse validate cxl-gpu --cv``).

The model's fitted constants are module-level (``fitted.CAL``, written by ``calibration.py``),
so :func:`left_out` patches them for the one evaluation and restores them in a
``finally``.  What "refit without the anchor" means for each group of constants:

* ``gpu.offchip_frac`` + ``gpu.store_ns`` (DRAM endpoint): solved to the other two
  workload classes instead (``calibration.fit_dram``, as ``calibration.loo_dram``; the third class, load,
  is a prediction that takes the left-out class's place as the second equation).
* ``uvm.faults_per_page``: only UVM 52.7x sets it.  Left out it takes its a-priori value,
  1 fault per non-resident page and pass (digest M3: ``N_fault = footprint / S_page x
  (1 + r_refault)`` with no refaults).
* ``ssd.miss_concurrency``, ``ssd.seq_miss_concurrency``, ``gc.interval_gib`` (solved
  together to NAIVE 6.6x, SR 15.6x on vadd/saxpy and DS +62.8% on the store class): the
  left-out claim's own constant takes its a-priori value (:data:`SSD_PRIORS`) and the other
  two are re-solved to their two claims (the SR hit-rate constants stay as fitted; they
  depend on these only through DevLoad's SR size).
* SR hit-rate constants (one per Fig 9d cell): nothing but the cell sets each, so left out
  it takes an a-priori value (:data:`SR_PRIORS`) and the constants solved jointly with it
  (``fwd_around``, ``fwd_rand``, ``bwd_around``, ``pollution``) are re-solved to their
  remaining cells.  The a-priori rules: an Around constant is the mean of the Seq and Rand
  ones (Around = "spatial locality but the direction is not monotonic", digest section 5,
  between a stream and random lines); the SR lead does not depend on the pattern
  (digest M6: ``L ~ W_q``, the demand's wait behind the queue), so a left-out lead is the
  geometric mean of the other two; a uniformly random address has no neighbour within
  the SR span (``fwd_rand = 0``); pollution takes the digest's working-set form at its
  natural scale (wasted SR bytes displace useful lines one for one: ``pollution = 1``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from copy import deepcopy
from pathlib import Path

import numpy as np

from dse.claims import claim_value
from models.blocks import flash
from models.cxl_gpu import calibration, paths
from models.cxl_gpu.fitted import CAL

CLAIMS_PATH = Path(__file__).resolve().parent / "claims.yaml"

#: A-priori values of the SSD constants, each with its source.
def _gc_interval_prior_gib() -> float:
    """GiB written between GC pauses if a pause reclaims one victim block on every plane of
    the endpoint at once and frees its invalid pages (greedy GC at the device's
    over-provisioning, flash block): planes x block bytes x (1 - valid share)."""
    cfg = flash.config(paths.MEDIA_ROWS["znand"]["flash_config"])
    planes = cfg.channels * cfg.chips_per_channel * cfg.dies_per_chip * cfg.planes_per_die
    valid = 1.0 - 1.0 / float(flash.gc_write_amplification(cfg.op_ratio))
    return planes * cfg.pages_per_block * cfg.page_bytes * (1.0 - valid) / 2**30


SSD_PRIORS: dict[str, tuple[str, Callable[[], float], str]] = {
    # anchor: (constant, a-priori value, why)
    "naive_vs_gpudram": ("ssd.miss_concurrency", lambda: float(paths.MEDIA_TABLE["dies"][paths.MEDIA.index("znand")]),
                         "one flash read per die at a time: the Z-NAND endpoint's 64 dies (flash block geometry)"),
    "sr_gain_1d_vector": ("ssd.seq_miss_concurrency", lambda: 1.0,
                          "a stream's misses fall on one 4 KiB page of one die, so they serialize (calibration.py's mechanism)"),
    "ds_vs_sr_store": ("gc.interval_gib", _gc_interval_prior_gib,
                       "a pause reclaims one victim block per plane, freeing its invalid pages (flash block)"),
}
_SSD_TARGETS = ("naive_vs_gpudram", "sr_gain_1d_vector", "ds_vs_sr_store")
_SSD_KEYS = (("ssd", "miss_concurrency"), ("ssd", "seq_miss_concurrency"), ("gc", "interval_gib"))


def _sr(key: str) -> float:
    return float(CAL["sr"][key])


#: A-priori values of the SR hit-rate constants: anchor -> (constant, rule).
SR_PRIORS: dict[str, tuple[str, Callable[[], float]]] = {
    "hit_cxl_around": ("sigma_around", lambda: (1.0 + _sr("sigma_rand")) / 2.0),
    "hit_naive_seq": ("lead_seq_ns", lambda: math.sqrt(_sr("lead_around_ns") * _sr("lead_rand_ns"))),
    "hit_naive_around": ("lead_around_ns", lambda: math.sqrt(_sr("lead_seq_ns") * _sr("lead_rand_ns"))),
    "hit_naive_rand": ("lead_rand_ns", lambda: math.sqrt(_sr("lead_seq_ns") * _sr("lead_around_ns"))),
    "hit_dyn_around": ("fwd_around", lambda: (1.0 + _sr("fwd_rand")) / 2.0),
    "hit_dyn_rand": ("fwd_rand", lambda: 0.0),
    "hit_rand_max_gran": ("pollution", lambda: 1.0),
    "hit_sr_around": ("bwd_around", lambda: (0.0 + _sr("fwd_rand")) / 2.0),
}
#: The SR constants least squares solves together (calibration.fit) and the cells they are solved to.
_SR_JOINT = ("fwd_around", "fwd_rand", "bwd_around", "pollution")
_SR_JOINT_CELLS = ("hit_dyn_around", "hit_dyn_rand", "hit_sr_around", "hit_rand_max_gran")

ANCHORS = ("cxl_slowdown_compute", "cxl_slowdown_store", "uvm_vs_gpudram", *_SSD_TARGETS, *SR_PRIORS)


@contextmanager
def _patched() -> Iterator[None]:
    """Restore every fitted constant afterwards, whatever the refit changed."""
    saved = deepcopy(CAL)
    try:
        yield
    finally:
        for section, values in saved.items():
            CAL[section].clear()
            CAL[section].update(values)


def _ssd_residuals(target: str) -> float:
    if target == "naive_vs_gpudram":
        return calibration.mean(calibration.run("cxl_naive", "znand", calibration.FIG9D_ALL)["slowdown_x"]) / calibration.T_NAIVE_VS_GPU - 1.0
    if target == "sr_gain_1d_vector":
        vec = calibration.FIG9D["seq"]
        r = calibration.run("cxl", "znand", vec)["slowdown_x"] / calibration.run("cxl_sr", "znand", vec)["slowdown_x"]
        return calibration.mean(r) / calibration.T_SR_VECTOR - 1.0
    return calibration.ds_gain_pct("store") / calibration.T_DS_STORE_PCT - 1.0


def refit_ssd_without(anchor: str) -> None:
    """Set the left-out claim's SSD constant a priori and re-solve the other two (in ``CAL``)."""
    from scipy.optimize import least_squares

    const, prior, _ = SSD_PRIORS[anchor]
    sec, key = const.split(".")
    CAL[sec][key] = float(prior())
    free = [(s, k) for s, k in _SSD_KEYS if f"{s}.{k}" != const]
    targets = [t for t in _SSD_TARGETS if t != anchor]

    def resid(x: np.ndarray) -> list[float]:
        for (s, k), v in zip(free, np.exp(x)):
            CAL[s][k] = float(v)
        return [_ssd_residuals(t) for t in targets]

    least_squares(resid, np.log([CAL[s][k] for s, k in free]), xtol=1e-12, ftol=1e-12)


def _sr_cell(cell: str) -> float:
    t = calibration.T_HIT
    if cell == "hit_dyn_around":
        return calibration.hit("cxl_dyn", "around") - t["dyn"]["around"]
    if cell == "hit_dyn_rand":
        return calibration.hit("cxl_dyn", "rand") - t["dyn"]["rand"]
    if cell == "hit_sr_around":
        return calibration.hit("cxl_sr", "around") - t["sr"]["around"]
    return calibration.hit("cxl_dyn", "rand", devload=False) - t["maxg_rand"]


def refit_sr_without(anchor: str) -> None:
    """Set the left-out cell's SR constant a priori; re-solve its joint group's others."""
    from scipy.optimize import least_squares

    key, prior = SR_PRIORS[anchor]
    CAL["sr"][key] = float(prior())
    if key not in _SR_JOINT:
        return
    free = [k for k in _SR_JOINT if k != key]
    cells = [c for c in _SR_JOINT_CELLS if c != anchor]
    bounds = {"fwd_around": (0, 1), "fwd_rand": (0, 1), "bwd_around": (0, 1), "pollution": (0, 20)}

    def resid(x: np.ndarray) -> list[float]:
        for k, v in zip(free, x):
            CAL["sr"][k] = float(v)
        return [_sr_cell(c) for c in cells]

    least_squares(resid, [CAL["sr"][k] for k in free], bounds=([bounds[k][0] for k in free], [bounds[k][1] for k in free]),
                  xtol=1e-12, ftol=1e-12)


def left_out(anchor_id: str) -> float:
    """The model's value of ``anchor_id`` with the constants refitted without it."""
    if anchor_id not in ANCHORS:
        raise KeyError(f"{anchor_id!r} is not an anchor of cxl-gpu; anchors: {', '.join(ANCHORS)}")
    with _patched():
        if anchor_id in ("cxl_slowdown_compute", "cxl_slowdown_store"):
            held = anchor_id.rsplit("_", 1)[1]
            calibration.fit_dram(tuple(c for c in calibration.T_CLASS_PCT if c != held))
        elif anchor_id == "uvm_vs_gpudram":
            CAL["uvm"]["faults_per_page"] = 1.0
        elif anchor_id in SSD_PRIORS:
            refit_ssd_without(anchor_id)
        else:
            refit_sr_without(anchor_id)
        return claim_value(CLAIMS_PATH, anchor_id)
