"""Closed loop of the flash block: per-point terms and the frozen-model map whose fixed
point is the closed-loop throughput (the solver is :mod:`closed_solve`).

The closed loop read as written (``closed_response`` in tests/flash_reference.py)
recomputes every station for each trial X.  :func:`closed_prep` computes the parts that
do not depend on X once per point and the rest are written as functions of the channel
wait.  The root is found as the fixed point of a frozen-model map (:func:`closed_map`):
at a trial X every term of R keeps its value at X except the queue of
the tightest pole (a chip, or a PCIe direction), kept exact as c X / (1 - b X); the root
Y(X) of X R_frozen(X) = qd is a quadratic's, below that pole, and equals X exactly at the
closed-loop throughput.  Y varies slowly with X, so a secant on Y(X) - X (safeguarded by
a bracket) converges in ~4 evaluations; converged points leave the working set, and the
few slow ones of all slices are finished together.  tests/test_flash_fast.py pins the
result to a bisection on ``closed_response``."""

from __future__ import annotations

from typing import Any

import numpy as np

from models.blocks.flash.chip import (mean_residual, merge, priority_factor, queued_shares, rand_merge, round_cap,
                                      round_wait, seq_read_join, stream_ca2, stream_resid)
from models.blocks.flash.configs import PROG_CMD_PLANE_US, PROG_CMD_US, READ_CMD_PLANE_US, READ_CMD_US
from models.blocks.flash.gc import gc_us_per_page
from models.blocks.numeric import anywhere, where
from models.blocks.flash.request import fork_join, rw_mix


#: first guesses stay below this share of the channels' data-out pole (measured on the
#: espresso bench points: 0.9-0.97 give the fewest map evaluations, 9.3 -> 7.4 per point)
_GUESS_CH_POLE = 0.97


def closed_prep(b: dict[str, Any], k: dict[str, float], seq: bool) -> dict[str, Any]:
    """Per-point constants of the closed loop (flat arrays or scalars) for the points in
    ``b``, all sequential or all random (the formulas of the reference ``stations`` / ``closed_response`` with
    everything independent of X collected)."""
    n, xt, rf, qd = b["n"], b["x"], b["rf"], b["qd"]
    units, C, P, D = b["units"], b["channels"], b["planes"], b["dies"]
    tr, tp, tr2, tp2 = b["tr_mean"], b["tprog_mean"], b["tr2_mean"], b["tprog2_mean"]
    wf = 1.0 - rf
    g: dict[str, Any] = {"seq": seq, "rf": rf, "wf": wf, "qd": qd, "n": n, "k_q": k["k_q"],
                         "has_r": anywhere(rf != 0), "has_w": anywhere(rf != 1)}
    frac = np.maximum(qd - 1.0, 0.0) / np.maximum(qd, 1.0)  # share of a queue an arrival sees
    x_map = b["x_map"]
    map0 = READ_CMD_US + tr + x_map
    wa = b["wa"]
    gc = gc_us_per_page(wa, tr, tp, xt, b["tbers"], b["pages_per_block"])
    p_map = b["p_map"]
    g.update(has_pm=anywhere(p_map != 0), p_map=p_map, map0=map0, frac=frac, d2h=b["d2h"], h2d=b["h2d"])
    g["cap"] = (units / C - 1) * (xt + READ_CMD_US)  # channel wait bound: the other chips' transfers
    # read rounds: the other chips' data-out per read op (mapping reads included)
    g["nr"] = n * rf + p_map if not seq else None
    sd_tr = np.sqrt(np.maximum(tr2 - tr * tr, 0.0))
    g["capb"] = round_cap(units / C - 1, n * rf, xt, p_map, x_map, sd_tr, b["rounds"])
    g["has_sy"] = anywhere((n * rf + p_map != 0) & (b["rounds"] != 0))
    g["mu_a"] = frac * n * rf * xt / C  # seen channel data-out utilization per unit X: pages
    g["mu_b"] = frac * x_map / C  # ... and mapping reads
    g["kap_b"] = k["k_ch"] * frac * 0.5 * (x_map**2 + READ_CMD_US**2) / C  # channel residual per mapping read
    g["c_b"] = frac / units  # chip busy share per unit X and unit n x service
    fj = fork_join({"n": n, "rf": rf, "seq": np.asarray(seq)}, units, k)
    mix = 4.0 * rf * wf
    g["fjmix_kq"] = (fj * mix if seq else fj) * k["k_q"]  # weight of the chip queue (the pole term)
    path_r = b["h2d_r"] + b["d2h_r"] + tr + b["n_ch"] * xt
    path_w = b["h2d_w"] + b["d2h_w"] + b["n_ch"] * xt + tp + gc
    x_ub = qd / rw_mix(g, path_r + READ_CMD_US, path_w + b["n_ch"] * PROG_CMD_US)  # R >= z: X <= qd / z
    # PCIe waits count unless they stay below 1e-13 of the response at any feasible X: at
    # X <= x_ub a direction's utilization is at most rho = frac x_ub t (t its message
    # time), its wait at most rho t / (1 - rho), and the response at least z = qd / x_ub.
    # (A link made transparent with a huge bandwidth, as espresso's, has rho ~ 1e-8 but
    # waits ~ 1e-20 of the response: the wait, not rho, is what must be negligible.)
    t_pcie = np.maximum(b["d2h"], b["h2d"])
    rho_pcie = frac * x_ub * t_pcie
    with np.errstate(divide="ignore", invalid="ignore"):
        pcie_share = rho_pcie / (1.0 - rho_pcie) * t_pcie * x_ub / qd
    g["has_pcie"] = anywhere((rho_pcie >= 0.5) | ~(pcie_share <= 1e-13))
    with np.errstate(divide="ignore"):
        g["x_hi"] = np.minimum(x_ub, 1.0 / (frac * np.maximum(b["d2h"], b["h2d"]))) if g["has_pcie"] else x_ub

    g.update(xt=xt, tr=tr, tp=tp, tr2=tr2, tp2=tp2, gc=gc, path_r=path_r, path_w=path_w, n_ch=b["n_ch"])
    g["kap_n"] = k["k_ch"] * frac * 0.5 * n / C
    if seq:
        # a stream's pages waiting per die follow from its depth; their read / program
        # shares, and so the merging, from the chip utilization (chip_terms): the terms
        # at an idle chip here
        g["q_seq"] = np.maximum(qd * n / units - 1.0, 0.0) / D
        g["P"], g["dies_total"] = P, units * D
        g.update(service_terms(g, *seq_merges(g, 0.0, 0.0)))
        g["k_pm"] = k["k_seqmap"] * map0 * frac  # shared mapping reads: pm = p_map / (1 + X k_pm)
        g["q_n"] = qd * n / units
        g["fj_seq"] = fj * (1.0 - mix)
        g["ca2"] = stream_ca2(n, units)
        g["has_mix"] = anywhere(mix != 0)
        g["sy_wm1"], g["sy_sd"], g["x_map"], g["sy_on"] = units / C - 1, sd_tr, x_map, b["rounds"]
        g["nrf"] = n * rf
    else:
        # random pages: a first pass without merging gives the chip queue, which sets it
        t0 = service_terms(g, 1.0, 1.0)
        pm = p_map
        g["kap0"] = t0["kap"] + pm * g["kap_b"]
        g["mu"] = g["mu_a"] + pm * g["mu_b"]
        g["m00"], g["m10"] = t0["m0"] + pm * map0, t0["m1"] + 2 * pm
        g["e00"], g["e10"], g["e20"] = t0["e0"] + pm * map0**2, t0["e1"] + 4 * pm * map0, t0["e2"] + 4 * pm
        g["z00"] = t0["z0"] + pm * map0
        g["inv_npm"] = 1.0 / (n + pm)
        g["v"] = (n + pm) / units
        g["qd_v"] = qd * g["v"]
        g["inv_d"] = 1.0 / D
        ppb = b["pages_per_block"]
        g["kr"], g["kw"], g["P"] = rand_merge(k["k_mp"], P, ppb), rand_merge(k["k_mp_w"], P, ppb), P
        g["pm_kap_b"] = pm * g["kap_b"]
    return g


def service_terms(g: dict[str, Any], m_r, m_w) -> dict[str, Any]:
    """For given multi-plane merging (pages per read / program command): the channel
    residual per unit X (kap) and, as polynomials in the channel wait w, n x chip service
    (m0 + m1 w), n x its second moment (e0 + e1 w + e2 w^2), the path (z0 + z1 w) and its
    chip part (cp0 + z1 w)."""
    n, xt, tr, tp, tr2, tp2, gc = g["n"], g["xt"], g["tr"], g["tp"], g["tr2"], g["tp2"], g["gc"]
    t_rc = READ_CMD_US + (m_r - 1.0) * READ_CMD_PLANE_US
    t_pc = PROG_CMD_US + (m_w - 1.0) * PROG_CMD_PLANE_US
    i_r, i_w = 1.0 / m_r, 1.0 / m_w
    ar = 1.0 + i_r
    vr0, vw0 = t_rc * i_r + xt, t_pc * i_w + xt + gc  # service less the array time
    z0 = rw_mix(g, g["path_r"] + t_rc, g["path_w"] + g["n_ch"] * t_pc)
    return {
        "kap": g["kap_n"] * rw_mix(g, xt**2 + t_rc**2 * i_r, (t_pc + m_w * xt) ** 2 * i_w),
        "m0": n * rw_mix(g, vr0 + tr * i_r, vw0 + tp * i_w), "m1": n * rw_mix(g, ar, i_w),
        "e0": n * rw_mix(g, tr2 * i_r**2 + 2 * tr * i_r * vr0 + vr0**2, tp2 * i_w**2 + 2 * tp * i_w * vw0 + vw0**2),
        "e1": n * rw_mix(g, 2 * ar * (tr * i_r + vr0), 2 * i_w * (tp * i_w + vw0)),
        "e2": n * rw_mix(g, ar * ar, i_w * i_w),
        "z0": z0, "z1": rw_mix(g, ar, i_w), "cp0": z0 - g["d2h"] - g["h2d"],
        "sy_l": tr * i_r + vr0, "sy_a": ar,  # a read page's array + service less the waits; wait factor
    }


def seq_merges(g: dict[str, Any], rho, p_join):
    """A stream's pages per read and per program command at chip utilization ``rho`` and
    read join chance ``p_join``."""
    sh_r, sh_w = queued_shares(g["rf"], rho)
    return (merge(True, g["P"], g["q_seq"], sh_r, None, True, None, g["rf"], p_join),
            merge(True, g["P"], g["q_seq"], sh_w, None, False, None, g["wf"]))


def seq_chip_terms(g: dict[str, Any], x, t: dict[str, Any]):
    """chip_terms of a stream whose merging gives the service terms ``t``
    (:func:`service_terms`): (A, chip busy share per unit X, residual service, the
    stream's queue wait at the chips)."""
    pm = g["p_map"] / (1.0 + x * g["k_pm"]) if g["has_pm"] else 0.0
    if g["has_pm"]:
        den = 1.0 - np.minimum(x * (g["mu_a"] + pm * g["mu_b"]), 0.999)
        w = np.minimum(x * (t["kap"] + pm * g["kap_b"]) / den, g["cap"])
    else:
        w = np.minimum(x * t["kap"] / (1.0 - np.minimum(x * g["mu_a"], 0.999)), g["cap"])
    s_num = t["m0"] + t["m1"] * w
    e2n = t["e0"] + w * (t["e1"] + t["e2"] * w)
    z = t["z0"] + t["z1"] * w
    cp = t["cp0"] + t["z1"] * w
    s_map = g["map0"] + 2.0 * w
    if g["has_sy"]:  # read rounds (see the reference stations)
        nrf = g["nrf"]
        nr = nrf + pm
        capb = np.maximum(round_cap(g["sy_wm1"], nrf, g["xt"], pm, g["x_map"], g["sy_sd"], g["sy_on"]) - w, 0.0)
        xc = x * g["c_b"]
        w_sy = round_wait(capb, xc * (s_num + pm * s_map), xc * nr * capb)
        s_num = s_num + nrf * w_sy
        e2n = e2n + nrf * w_sy * (2.0 * (t["sy_l"] + t["sy_a"] * w) + w_sy)
        z = z + g["rf"] * w_sy
        cp = cp + g["rf"] * w_sy
        s_map = s_map + w_sy
    if g["has_pm"]:
        s_num = s_num + pm * s_map
        e2n = e2n + pm * s_map * s_map
        z = z + pm * s_map
        inv = 1.0 / (g["n"] + pm)
    else:
        inv = 1.0 / g["n"]
    svc = s_num * inv
    resid = mean_residual(e2n * inv, svc)
    sb = g["c_b"] * s_num
    # a stream's pages queue only once the pages in flight exceed the chips
    w_seq = np.maximum(g["q_n"] * svc - np.maximum(cp, svc), 0.0)
    a_ = z + g["fj_seq"] * w_seq
    if g["has_pm"]:
        a_ = a_ + pm * (x * sb) * resid
    return a_, sb, stream_resid(e2n * inv, svc, g["ca2"]), w_seq


def chip_terms(g: dict[str, Any], x):
    """At throughput ``x``: (A, chip busy share per unit X, residual service) -- A is the
    response less the chip queue and the PCIe waits."""
    k_q = g["k_q"]
    if g["seq"]:
        if not g["has_r"]:
            return seq_chip_terms(g, x, g)[:3]
        # with reads: the chip utilization and the queue wait at the idle-chip merging set
        # the queue's read / program shares and the read joins, and they the merging
        # (the reference closed_response's two steps)
        _, sb, _, w_seq = seq_chip_terms(g, x, g)
        rho = k_q * x * sb
        p_join = seq_read_join(x * g["n"], g["dies_total"], w_seq, g["rf"], rho)
        return seq_chip_terms(g, x, service_terms(g, *seq_merges(g, rho, p_join)))[:3]
    den, busy0, q_die = rand_first_pass(g, x)
    mixed = g["has_r"] and g["has_w"]
    sh_r, sh_w = queued_shares(g["rf"], k_q * busy0) if mixed else (g["rf"], g["wf"])
    return rand_merged_terms(g, x, den, q_die, sh_r, sh_w)


def rand_first_pass(g: dict[str, Any], x):
    """Random traffic at throughput ``x``, first pass without merging: (the channel's
    data-out free share, chip busy share, pages waiting per die) -- the chip queue it
    implies sets the merging of the second pass."""
    k_q = g["k_q"]
    den = 1.0 - np.minimum(x * g["mu"], 0.999)
    w0 = np.minimum(x * g["kap0"] / den, g["cap"])
    s0 = g["m00"] + g["m10"] * w0
    e0 = g["e00"] + w0 * (g["e10"] + g["e20"] * w0)
    if g["has_sy"]:  # read rounds, one-plane commands
        capb0 = np.maximum(g["capb"] - w0, 0.0)
        xc = x * g["c_b"]
        d = round_wait(capb0, xc * s0, xc * g["nr"] * capb0)
        s0 = s0 + g["nr"] * d
        nrf = g["n"] * g["rf"]
        e0 = e0 + d * (nrf * (2.0 * (g["tr"] + READ_CMD_US + g["xt"] + 2.0 * w0) + d)
                       + g["p_map"] * (2.0 * (g["map0"] + 2.0 * w0) + d))
    busy0 = x * g["c_b"] * s0
    free0 = 1.0 - k_q * busy0
    resid0 = mean_residual(e0 * g["inv_npm"], s0 * g["inv_npm"])
    with np.errstate(divide="ignore", invalid="ignore"):
        w_rand0 = where(free0 > 0, k_q * busy0 * resid0 / free0, np.inf)
    q_die = np.minimum(x * g["v"] * w_rand0, g["qd_v"]) * g["inv_d"]
    return den, busy0, q_die


def rand_merged_terms(g: dict[str, Any], x, den, q_die, sh_r, sh_w):
    """Random traffic at throughput ``x``, second pass with merging (``q_die`` pages waiting
    per die, ``sh_r`` / ``sh_w`` of them reads / programs): (A, chip busy share per unit
    X, residual service) as :func:`chip_terms`."""
    tr, tp, xt = g["tr"], g["tp"], g["xt"]
    kap_r = kap_w = s_r = s_w = e_r = e_w = z_r = z_w = 0.0
    i_r = i_w = t_rc = t_pc = 1.0
    if g["has_r"]:
        m_r = np.minimum(1.0 + g["kr"] * sh_r * q_die, g["P"])
        i_r = 1.0 / m_r
        t_rc = READ_CMD_US + (m_r - 1.0) * READ_CMD_PLANE_US
        kap_r = xt * xt + t_rc * t_rc * i_r
    if g["has_w"]:
        m_w = np.minimum(1.0 + g["kw"] * sh_w * q_die, g["P"])
        i_w = 1.0 / m_w
        t_pc = PROG_CMD_US + (m_w - 1.0) * PROG_CMD_PLANE_US
        kap_w = (t_pc + m_w * xt) ** 2 * i_w
    w = np.minimum(x * (g["kap_n"] * rw_mix(g, kap_r, kap_w) + g["pm_kap_b"]) / den, g["cap"])
    n = g["n"]
    v_r = t_rc * i_r + xt + w * (1.0 + i_r) if g["has_r"] else 0.0
    v_w = t_pc * i_w + xt + w * i_w + g["gc"] if g["has_w"] else 0.0
    s_map = g["map0"] + 2.0 * w
    w_sy = 0.0
    if g["has_sy"]:  # read rounds (see the reference stations)
        capb = np.maximum(g["capb"] - w, 0.0)
        sn0 = n * rw_mix(g, v_r + tr * i_r, v_w + tp * i_w) + (g["p_map"] * s_map if g["has_pm"] else 0.0)
        xc = x * g["c_b"]
        w_sy = round_wait(capb, xc * sn0, xc * g["nr"] * capb)
        v_r, s_map = v_r + w_sy, s_map + w_sy
    if g["has_r"]:
        s_r = v_r + tr * i_r
        e_r = g["tr2"] * i_r * i_r + 2.0 * tr * i_r * v_r + v_r * v_r
        z_r = g["path_r"] + t_rc + w * (1.0 + i_r) + w_sy
    if g["has_w"]:
        s_w = v_w + tp * i_w
        e_w = g["tp2"] * i_w * i_w + 2.0 * tp * i_w * v_w + v_w * v_w
        z_w = g["path_w"] + g["n_ch"] * t_pc + w * i_w
    s_num = n * rw_mix(g, s_r, s_w)
    e2n = n * rw_mix(g, e_r, e_w)
    a_ = rw_mix(g, z_r, z_w)
    if g["has_pm"]:
        pm = g["p_map"]
        s_num = s_num + pm * s_map
        e2n = e2n + pm * s_map * s_map
        a_ = a_ + pm * s_map
    resid = mean_residual(e2n * g["inv_npm"], s_num * g["inv_npm"])
    sb = g["c_b"] * s_num
    if g["has_pm"]:
        a_ = a_ + g["p_map"] * (x * sb) * resid  # mapping reads wait for the op in service
    if g["has_w"] and (g["has_r"] or g["has_pm"]):
        # reads (and mapping reads) go before queued programs: the mean page wait is the
        # FCFS one times priority_factor
        sb_r = g["c_b"] * ((n * g["rf"] * s_r if g["has_r"] else 0.0) + (g["p_map"] * s_map if g["has_pm"] else 0.0))
        resid = resid * priority_factor(g["rf"], g["k_q"] * x * sb, g["k_q"] * x * sb_r)
    return a_, sb, resid


def closed_map(g: dict[str, Any], x) -> np.ndarray:
    """The frozen-model root Y(x) (NaN where x lies past a pole that is frozen)."""
    a_, sb, resid = chip_terms(g, x)
    qd, k_q = g["qd"], g["k_q"]
    b_m = k_q * sb  # chip: free = 1 - b X
    c_m = g["fjmix_kq"] * sb * resid if (not g["seq"] or g["has_mix"]) else 0.0  # chip queue = c X / free
    ok = True
    if g["has_pcie"]:
        fr = g["frac"]
        bd, bh = fr * g["d2h"], fr * g["h2d"]
        fd, fh = 1.0 - x * bd, 1.0 - x * bh
        free = 1.0 - x * b_m
        use_d = (bd > b_m) & (bd >= bh)
        use_h = (bh > b_m) & (bh > bd)
        use_c = ~(use_d | use_h)
        with np.errstate(divide="ignore", invalid="ignore"):
            a_ = (a_ + np.where(use_c, 0.0, x * c_m / free) + np.where(use_d, 0.0, x * bd * g["d2h"] / fd)
                  + np.where(use_h, 0.0, x * bh * g["h2d"] / fh))
        b_m = np.where(use_d, bd, np.where(use_h, bh, b_m))
        c_m = np.where(use_d, bd * g["d2h"], np.where(use_h, bh * g["h2d"], c_m))
        ok = (use_c | (free > 0)) & (use_d | (fd > 0)) & (use_h | (fh > 0))
    # X (A + c X / (1 - b X)) = qd  <=>  (c - A b) X^2 + (A + qd b) X - qd = 0
    y = 2.0 * qd / ((a_ + qd * b_m) + np.sqrt((a_ - qd * b_m) ** 2 + 4.0 * qd * c_m))
    return y if ok is True else where(ok, y, np.nan)


def closed_guess(g: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(first guess, Y(0)): the frozen-model root at zero load -- the map at X = 0, chip
    pole only -- and the guess, that root kept below the PCIe poles and the channels'
    data-out pole (the channel wait's, which the frozen model does not keep: a
    channel-bound point guessed above it takes ~2 more map evaluations)."""
    k_q, qd = g["k_q"], g["qd"]
    if g["seq"]:
        pm = g["p_map"] if g["has_pm"] else 0.0
        s_num = g["m0"] + pm * g["map0"]
        inv = 1.0 / (g["n"] + pm)
        svc = s_num * inv
        resid = stream_resid((g["e0"] + pm * g["map0"] ** 2) * inv, svc, g["ca2"])
        a_ = g["z0"] + pm * g["map0"] + g["fj_seq"] * np.maximum(g["q_n"] * svc - np.maximum(g["cp0"], svc), 0.0)
        c_on = g["has_mix"]
    else:
        s_num = g["m00"]
        resid = mean_residual(g["e00"] * g["inv_npm"], s_num * g["inv_npm"])
        a_ = g["z00"]
        c_on = True
    x_pole = chip_pole_with_channel(g) if not g["seq"] else np.inf
    sb = g["c_b"] * s_num
    b_m = k_q * sb
    c_m = g["fjmix_kq"] * sb * resid if c_on else 0.0
    y0 = 2.0 * qd / ((a_ + qd * b_m) + np.sqrt((a_ - qd * b_m) ** 2 + 4.0 * qd * c_m))
    mu = g["mu_a"] + (g["p_map"] * g["mu_b"] if g["has_pm"] else 0.0)  # data-out per unit X
    with np.errstate(divide="ignore"):
        y = np.minimum(np.minimum(y0, _GUESS_CH_POLE / mu), x_pole)
    return np.minimum(y, 0.999 * g["x_hi"]), y0


def chip_pole_with_channel(g: dict[str, Any]) -> np.ndarray:
    """Random traffic: the throughput at which the chips saturate with the channel wait
    at that throughput, ``X k_q c_b (m00 + m10 w(X)) = 1`` with ``w = X kap0 / (1 - X mu)``
    (a quadratic), or with the wait at its bound if that is higher -- a first guess near
    the saturation root, which the frozen model (channel wait frozen) approaches slowly
    when the channel binds (map evaluations per point 7.0 -> 5.9, measured)."""
    b0 = g["k_q"] * g["c_b"] * g["m00"]
    b1 = g["k_q"] * g["c_b"] * g["m10"]
    b = b0 + g["mu"]
    # the positive root of (b1 kap0 - b0 mu) X^2 + b X - 1; no load seen (qd = 1): +inf
    with np.errstate(divide="ignore"):
        x_p = 2.0 / (b + np.sqrt((b0 - g["mu"]) ** 2 + 4.0 * b1 * g["kap0"]))
        return np.maximum(x_p, 1.0 / (b0 + b1 * g["cap"]))
