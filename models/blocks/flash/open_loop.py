"""Open loop of the flash block: the page wait at a die as the root of ``W = W'(W)``
(:func:`wait_root`) and the latency of Poisson arrivals at that wait.

Everything but the multi-plane merging is fixed at a given request rate, so
:func:`open_prep` collects it once per point and the root finder re-evaluates only the
stations the merging changes (:func:`open_stations`).  tests/test_flash_fast.py pins it
to the reference form (tests/flash_reference.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from models.blocks.flash.chip import merge, queued_shares, round_cap, round_wait, seq_read_join, stream_ca2, stream_e2
from models.blocks.flash.configs import PROG_CMD_PLANE_US, PROG_CMD_US, QUEUE_FETCH_SIZE, READ_CMD_PLANE_US, READ_CMD_US
from models.blocks.flash.gc import gc_us_per_page
from models.blocks.flash.request import flat_inputs, fork_join, rw_mix, take


#: ... of the open loop (no per-iteration bookkeeping, so bigger slices pay: measured with
#: `dse bench flash`, 16384 gave ~12 % more points/s, the closed loop ~6 % fewer)
_OPEN_CHUNK = 16384
#: root-finder evaluations for the open loop's page wait (wait_root), at most; a point
#: is solved once log W'(W) - log W (or its bracket) is within WAIT_TOL, and the solver
#: stops when every point is (~8 evaluations on random mixes, measured)
OPEN_ROOT_ITERS = 40
WAIT_TOL = 1e-10


def wait_root(wait_of, w_max, iters: int):
    """The root of ``W = W'(W)`` on ``(0, w_max]`` for a chip wait ``W' = wait_of(W)``
    that falls as W rises (more merging, less utilization): Illinois regula falsi on
    ``G(u) = log min(W'(e^u), w_max) - u`` over ``u`` from ``log w_max - 46`` (a wait
    1e-20 of the bound: 0 where even that is above W') to ``log w_max`` (G <= 0 there);
    ``iters`` evaluations after the two ends.  The log tames the chip wait's pole: W'
    spans orders of magnitude near saturation, where regula falsi on W itself stalls."""
    w_max = np.array(w_max, dtype=np.float64)
    hi = np.log(w_max)
    lo = hi - 46.0

    def g(u):
        with np.errstate(divide="ignore"):
            return np.log(np.minimum(wait_of(np.exp(u)), w_max)) - u

    g_lo, g_hi = g(lo), g(hi)
    zero = ~(g_lo > 0)  # no wait: even the smallest one exceeds what it implies
    g_lo = np.where(zero, 1.0, g_lo)
    at_hi = g_hi >= 0  # the bound itself (a full fetch window)
    # a point's root is kept from the evaluation that first meets the tolerance, so that
    # it does not depend on the other points solved with it
    u_out = np.where(at_hi, hi, -np.inf)
    kept = zero | at_hi
    side = np.zeros(hi.shape)  # +1: lo kept last time, -1: hi kept last time
    for _ in range(iters):
        if kept.all():
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            c = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
        c = np.where((c > lo) & (c < hi), c, 0.5 * (lo + hi))
        g_c = g(c)
        up = g_c > 0
        lo, g_lo = np.where(up, c, lo), np.where(up, g_c, np.where(side > 0, 0.5 * g_lo, g_lo))
        hi, g_hi = np.where(up, hi, c), np.where(up, np.where(side < 0, 0.5 * g_hi, g_hi), g_c)
        side = np.where(up, -1.0, 1.0)
        # W = W'(W) to the tolerance, or a bracket that narrow (a root at a kink)
        new = ~kept & ((np.abs(g_c) <= WAIT_TOL) | (hi - lo <= WAIT_TOL * (1.0 + np.abs(c))))
        u_out = np.where(new, c, u_out)
        kept |= new
    with np.errstate(divide="ignore", invalid="ignore"):
        u_end = np.where(g_lo - g_hi > 0, (lo * g_hi - hi * g_lo) / (g_hi - g_lo), hi)
    return np.where(zero, 0.0, np.exp(np.where(kept, u_out, u_end)))


def open_prep(b: dict[str, Any], k: dict[str, float], seq: bool) -> dict[str, Any]:
    """Per-point constants of the open loop for the points in ``b`` (one pattern): what
    does not depend on the page wait (and so on the multi-plane merging)."""
    n, xt, rf, lam = b["n"], b["x"], b["rf"], b["lam"]
    wf = 1.0 - rf
    o: dict[str, Any] = {"rf": rf, "wf": wf, "has_r": bool(np.any(rf != 0)), "has_w": bool(np.any(rf != 1)),
                         "seq": seq, "k": k, "n": n, "xt": xt, "lam": lam}
    units, C = b["units"], b["channels"]
    tr, tp, tr2 = b["tr_mean"], b["tprog_mean"], b["tr2_mean"]
    x_map = b["x_map"]
    map0 = READ_CMD_US + tr + x_map
    p_map = b["p_map"]
    has_pm = bool(np.any(p_map != 0))
    pm = p_map / (1.0 + lam * k["k_seqmap"] * map0) if (seq and has_pm) else p_map
    npm = n + pm
    lam_chip = lam * npm / units
    lam_pg, lam_map = lam * n / C, lam * pm / C
    u_out = lam_pg * rf * xt + lam_map * x_map
    o.update(has_pm=has_pm, pm=pm, map0=map0, lam_chip=lam_chip, lam_pg=lam_pg, lam_map=lam_map, u_out=u_out,
             units=units, P=b["planes"], D=b["dies"], tr=tr, tp=tp, tr2=tr2, tp2=b["tprog2_mean"],
             ppb=b["pages_per_block"])
    o["gc"] = gc_us_per_page(b["wa"], tr, tp, xt, b["tbers"], b["pages_per_block"])
    o["k_res"] = 0.5 * k["k_ch"] / (1 - np.clip(u_out, 0, 0.999))  # channel wait per unit residual sum
    o["cap"] = (units / C - 1) * (xt + READ_CMD_US)
    o["pg_r"], o["pg_w"] = lam_pg * rf, lam_pg * wf
    o["res_map"] = lam_map * (x_map**2 + READ_CMD_US**2)
    o["inv_npm"] = 1.0 / npm
    o["q_cap"] = b["fetch"] * npm / units
    o["lc_kq"] = 0.5 * k["k_q"] * lam_chip
    nr = n * rf + pm
    o["capb_0"] = round_cap(units / C - 1, n * rf, xt, pm, x_map, np.sqrt(np.maximum(tr2 - tr * tr, 0.0)), b["rounds"])
    o["lam_nr"] = lam * nr / units
    o["rounds_on"] = (o["has_r"] or has_pm) and np.any(b["rounds"] != 0)
    o["ca2"] = stream_ca2(n, units) if seq else None
    return o


def open_commands(o: dict[str, Any], q, rho_q, p_join) -> dict[str, Any]:
    """Multi-plane merging with ``q`` pages waiting per die: pages per read / program
    command (their inverses) and the command times."""
    rf, wf, seq, k, P, ppb = o["rf"], o["wf"], o["seq"], o["k"], o["P"], o["ppb"]
    sh_r, sh_w = queued_shares(rf, rho_q) if (o["has_r"] and o["has_w"]) else (rf, wf)
    m_r = merge(seq, P, q, sh_r, k, True, ppb, rf, p_join) if o["has_r"] else 1.0
    m_w = merge(seq, P, q, sh_w, k, False, ppb, wf) if o["has_w"] else 1.0
    return {"m_w": m_w, "i_r": 1.0 / m_r, "i_w": 1.0 / m_w, "t_rc": READ_CMD_US + (m_r - 1) * READ_CMD_PLANE_US,
            "t_pc": PROG_CMD_US + (m_w - 1) * PROG_CMD_PLANE_US}


def open_stations(o: dict[str, Any], q, rho_q, p_join) -> dict[str, Any]:
    """The stations with ``q`` pages waiting per die (as the reference ``stations``):
    channel wait, chip service, utilization and the chip queue's wait."""
    c = open_commands(o, q, rho_q, p_join)
    i_r, i_w, t_rc, t_pc, m_w = c["i_r"], c["i_w"], c["t_rc"], c["t_pc"], c["m_w"]
    n, xt, tr, tp, tr2, tp2, pm = o["n"], o["xt"], o["tr"], o["tp"], o["tr2"], o["tp2"], o["pm"]
    res = o["res_map"]
    if o["has_r"]:
        res = res + o["pg_r"] * (xt * xt + t_rc * t_rc * i_r)
    if o["has_w"]:
        res = res + o["pg_w"] * (t_pc + m_w * xt) ** 2 * i_w
    w = np.minimum(o["k_res"] * res, o["cap"])
    v_r = t_rc * i_r + xt + w * (1 + i_r)
    v_w = t_pc * i_w + xt + w * i_w + o["gc"]
    s_map = o["map0"] + 2 * w
    inv_npm = o["inv_npm"]
    if o["rounds_on"]:  # read rounds (see the reference stations)
        capb = np.maximum(o["capb_0"] - w, 0.0)
        sn0 = n * rw_mix(o, v_r + tr * i_r, v_w + tp * i_w) + (pm * s_map if o["has_pm"] else 0.0)
        w_sy = round_wait(capb, o["lam_chip"] * sn0 * inv_npm, o["lam_nr"] * capb)
        v_r, s_map = v_r + w_sy, s_map + w_sy
    s_r, s_w = v_r + tr * i_r, v_w + tp * i_w
    sn = n * rw_mix(o, s_r, s_w)
    e2 = n * rw_mix(o, tr2 * i_r * i_r + 2 * tr * i_r * v_r + v_r * v_r, tp2 * i_w * i_w + 2 * tp * i_w * v_w + v_w * v_w)
    if o["has_pm"]:
        sn = sn + pm * s_map
        e2 = e2 + pm * s_map * s_map
    rho = o["lam_chip"] * (sn * inv_npm)
    rho_s = np.clip(rho, 0, 0.9999)
    e2_q = stream_e2(e2 * inv_npm, sn * inv_npm, o["ca2"]) if o["seq"] else e2 * inv_npm
    w_chip = o["lc_kq"] * e2_q / (1 - rho_s)
    return {"t_rc": t_rc, "t_pc": t_pc, "i_r": i_r, "i_w": i_w, "w": w, "v_r": v_r, "s_map": s_map, "s_r": s_r,
            "rho": rho, "rho_s": rho_s, "w_chip": w_chip}


def open_wait_stations(o: dict[str, Any], wait) -> dict[str, Any]:
    """The stations when pages wait ``wait`` us at a die: the pages waiting (Little) and a
    stream's read joins follow from it, a mix's queued read / program shares from the
    chip utilization at the page shares."""
    q = np.minimum(o["lam_chip"] * wait, o["q_cap"]) / o["D"]

    def join(rho):
        return seq_read_join(o["lam"] * o["n"], o["units"] * o["D"], wait, o["rf"], rho) if o["seq"] else 0.0

    st = open_stations(o, q, 0.0, join(0.0))
    if o["has_r"] and o["has_w"]:  # a mix: the queue's shares follow the utilization (else the page shares)
        st = open_stations(o, q, st["rho_s"], join(st["rho_s"]))
    return st


def open_latency(b: dict[str, Any], o: dict[str, Any], st: dict[str, Any]):
    """(latency us, over capacity) at the stations ``st`` of the page wait's root."""
    n, xt, rf, lam, pm, tr, tp = o["n"], o["xt"], o["rf"], o["lam"], o["pm"], o["tr"], o["tp"]
    t_rc, t_pc, i_r, i_w, w, v_r = st["t_rc"], st["t_pc"], st["i_r"], st["i_w"], st["w"], st["v_r"]
    s_map, s_r, rho, rho_s, w_chip = st["s_map"], st["s_r"], st["rho"], st["rho_s"], st["w_chip"]
    # reads (and mapping reads) go before queued writes at a chip (non-preemptive priority)
    rho_r = np.clip(o["lam_chip"] * (n * rf * s_r + pm * s_map) * o["inv_npm"], 0, 0.9999)
    inv_r = 1.0 / (1 - rho_r)
    fj = fork_join({"n": n, "rf": rf, "seq": np.asarray(o["seq"])}, o["units"], o["k"])
    w_flash = fj * w_chip * rw_mix(o, (1 - rho_s) * inv_r, inv_r)
    path = rw_mix(o, b["h2d_r"] + b["d2h_r"] + t_rc + tr + b["n_ch"] * xt + (v_r - t_rc * i_r - xt),
                  b["h2d_w"] + b["d2h_w"] + b["n_ch"] * (t_pc + xt) + tp + o["gc"] + w * i_w)
    if o["has_pm"]:
        w_flash = w_flash + pm * w_chip * (1 - rho_s)  # mapping reads go first: the residual only
        path = path + pm * s_map
    d2h, h2d = b["d2h"], b["h2d"]
    rho_d, rho_h = lam * d2h, lam * h2d
    lat = (path + w_flash + w * (fj - 1) + lam * d2h**2 / (2 * (1 - np.clip(rho_d, 0, 0.9999)))
           + lam * h2d**2 / (2 * (1 - np.clip(rho_h, 0, 0.9999))))
    lam_pg = o["lam_pg"]
    u_ch = o["u_out"] + o["lam_map"] * READ_CMD_US + rw_mix(o, lam_pg * t_rc * i_r, lam_pg * (t_pc * i_w + xt))
    over = (rho >= 1) | (rho_d >= 1) | (rho_h >= 1) | (u_ch >= 1)
    return lat, over


def open_slice(b: dict[str, Any], k: dict[str, float], seq: bool):
    """Open-loop (latency us, over capacity) of the points in ``b`` (one pattern): the page
    wait is the root of ``W = W'(W)`` (:func:`wait_root`), up to the wait of a full fetch
    window (Little)."""
    o = open_prep(b, k, seq)
    lam = o["lam"]
    w_max = np.broadcast_to(b["fetch"] / np.maximum(lam, 1e-300), np.shape(o["lam_chip"]))  # finite at zero load
    wait = wait_root(lambda wt: open_wait_stations(o, wt)["w_chip"], w_max, OPEN_ROOT_ITERS)
    return open_latency(b, o, open_wait_stations(o, wait))


def open_fast(a, r, lam, k, shape):
    """Open-loop (latency us, over capacity) for every point of ``shape``."""
    size = int(np.prod(shape))
    flat = flat_inputs(a, r, shape, {"lam": lam, "fetch": a.get("fetch", QUEUE_FETCH_SIZE)})
    seq = np.broadcast_to(np.asarray(r["seq"], bool), shape).reshape(-1)
    lat, over = np.empty(size), np.empty(size, bool)
    for s_val in (True, False):
        idx = np.flatnonzero(seq == s_val)
        for c0 in range(0, idx.size, _OPEN_CHUNK):
            sel = idx[c0 : c0 + _OPEN_CHUNK]
            b = flat if sel.size == size else {kk: take(v, sel) for kk, v in flat.items()}
            l, o = open_slice(b, k, s_val)
            lat[sel], over[sel] = l, o
    return lat.reshape(shape), over.reshape(shape)
