"""The flash block's stations read as written: the test oracles the fast solvers
(models/blocks/flash/closed_solve.py, open_loop.py) are pinned to (tests/test_flash_fast.py).

``closed_response`` is the closed loop's ``qd / R(X)`` at a trial throughput (solved by
bisection in the tests); ``open_reference`` the open loop with every station recomputed
at each step of the page wait's root.  Moved here from the block, which uses only the
fast forms."""

from __future__ import annotations

import numpy as np

from models.blocks.flash.chip import (merge, priority_factor, queued_shares, round_cap, round_wait, seq_read_join,
                                      stream_ca2, stream_e2, stream_resid)
from models.blocks.flash.configs import (PROG_CMD_PLANE_US, PROG_CMD_US, QUEUE_FETCH_SIZE, READ_CMD_PLANE_US,
                                        READ_CMD_US)
from models.blocks.flash.gc import gc_us_per_page
from models.blocks.flash.open_loop import OPEN_ROOT_ITERS, wait_root
from models.blocks.flash.request import fork_join


def stations(a, r, lam, k, q_die, qd=None, rho_q=0.0, p_join=0.0):
    """Chip and channel service at request rate ``lam`` (per us) with ``q_die`` pages
    waiting per die (multi-plane merging), ``rho_q`` the chip utilization that sets their
    read / program shares (:func:`queued_shares`) and ``p_join`` a stream's read join
    chance (:func:`seq_read_join`).  ``qd``: closed loop (waits are those seen by an
    arrival among qd - 1 others)."""
    f = np.float64
    lam = np.asarray(lam, f)
    n, x, rf, wa = r["n"], r["x"], r["rf"], r["wa"]
    units = np.asarray(a["units"], f)
    C = np.asarray(a["channels"], f)
    P = np.asarray(a["planes"], f)
    W = units / C  # chips per channel
    tr, tp = np.asarray(a["tr_mean"], f), np.asarray(a["tprog_mean"], f)
    seen = 1.0 if qd is None else np.maximum(qd - 1.0, 0.0) / np.maximum(qd, 1.0)
    map0 = READ_CMD_US + tr + r["x_map"]
    pm = map_reads(a, r, lam * seen, k)
    gc = gc_us_per_page(wa, tr, tp, x, a["tbers"], a["pages_per_block"])
    sd_tr = np.sqrt(np.maximum(np.asarray(a["tr2_mean"], f) - tr * tr, 0.0))
    lam_chip = lam * (n + pm) / units
    q = np.asarray(q_die, f)
    ppb = a["pages_per_block"]
    sh_r, sh_w = queued_shares(rf, rho_q)
    m_r = merge(r["seq"], P, q, sh_r, k, True, ppb, rf, p_join)
    m_w = merge(r["seq"], P, q, sh_w, k, False, ppb, 1 - rf)
    t_rc = READ_CMD_US + (m_r - 1) * READ_CMD_PLANE_US
    t_pc = PROG_CMD_US + (m_w - 1) * PROG_CMD_PLANE_US
    # channel: data out (high priority), commands and data in (low priority)
    lam_pg, lam_map = lam * n / C, lam * pm / C
    u_out = lam_pg * rf * x + lam_map * r["x_map"]
    u_ch = u_out + lam_pg * rf * t_rc / m_r + lam_pg * (1 - rf) * (t_pc / m_w + x) + lam_map * READ_CMD_US
    res = 0.5 * (lam_pg * rf * (x**2 + t_rc**2 / m_r) + lam_pg * (1 - rf) * (t_pc + m_w * x) ** 2 / m_w
                 + lam_map * (r["x_map"] ** 2 + READ_CMD_US**2))
    w_ch = np.minimum(k["k_ch"] * res * seen / (1 - np.clip(u_out * seen, 0, 0.999)), (W - 1) * (x + READ_CMD_US))
    # chip occupancy per op (the wait for the channel holds the chip)
    s_r = (t_rc + tr) / m_r + x + w_ch + w_ch / m_r
    s_w = (t_pc + tp) / m_w + x + w_ch / m_w + gc
    s_map = map0 + 2 * w_ch
    # read rounds: each read op waits for the data-out of the chips in step with it
    nr = n * rf + pm
    capb = np.maximum(round_cap(W - 1, n * rf, x, pm, r["x_map"], sd_tr, np.asarray(a.get("rounds", 0.0), f)) - w_ch,
                      0.0)
    rho0 = lam_chip * seen * (n * (rf * s_r + (1 - rf) * s_w) + pm * s_map) / (n + pm)
    w_sy = round_wait(capb, rho0, lam * seen * nr / units * capb)
    s_r, s_map = s_r + w_sy, s_map + w_sy
    s_mean = (n * (rf * s_r + (1 - rf) * s_w) + pm * s_map) / (n + pm)
    v_r, v_w = s_r - tr / m_r, s_w - tp / m_w
    e2 = (n * (rf * (np.asarray(a["tr2_mean"], f) / m_r**2 + 2 * tr / m_r * v_r + v_r**2)
               + (1 - rf) * (np.asarray(a["tprog2_mean"], f) / m_w**2 + 2 * tp / m_w * v_w + v_w**2))
          + pm * s_map**2) / (n + pm)
    rho = lam_chip * s_mean
    rho_s = np.clip(rho * seen, 0, 0.9999)
    e2_q = np.where(r["seq"], stream_e2(e2, s_mean, stream_ca2(n, units)), e2)
    w_chip = k["k_q"] * lam_chip * seen * e2_q / (2 * (1 - rho_s))
    rho_r = np.clip(lam_chip * (n * rf * s_r + pm * s_map) / (n + pm) * seen, 0, 0.9999)
    return {"pm": pm, "s_r": s_r, "s_w": s_w, "s_map": s_map, "s_mean": s_mean, "e2": e2, "rho": rho, "rho_r": rho_r,
            "rho_s": rho_s, "w_chip": w_chip, "w_ch": w_ch, "w_sy": w_sy, "u_ch": u_ch, "t_rc": t_rc, "t_pc": t_pc, "m_r": m_r,
            "m_w": m_w, "map0": map0, "gc": gc}


def request_path(a, r, s) -> np.ndarray:
    """Latency of a request that finds no queue at chips or PCIe (channel waits at the
    current load included): host messages, command, array time, the data of the pages
    that share a channel one after the other, and the mapping read."""
    rf, x, nch = r["rf"], r["x"], r["n_ch"]
    tr, tp = np.asarray(a["tr_mean"], np.float64), np.asarray(a["tprog_mean"], np.float64)
    read = r["h2d_r"] + r["d2h_r"] + s["t_rc"] + tr + nch * x + s["w_ch"] * (1 + 1 / s["m_r"]) + s["w_sy"]
    write = r["h2d_w"] + r["d2h_w"] + nch * (s["t_pc"] + x) + tp + s["gc"] + s["w_ch"] / s["m_w"]
    return rf * read + (1 - rf) * write + s["pm"] * s["s_map"]


def map_reads(a, r, lam, k):
    """Mapping reads per request (CMT misses): a random request misses; a sequential
    stream shares one read among the requests arriving (rate ``lam``) while it is in
    flight (``k_seqmap`` x its unloaded latency)."""
    map0 = READ_CMD_US + np.asarray(a["tr_mean"], np.float64) + r["x_map"]
    return np.where(r["seq"], r["p_map"] / (1.0 + lam * k["k_seqmap"] * map0), r["p_map"])


def open_stations(a, r, lam, k, wait):
    """stations in open loop when pages wait ``wait`` us at a die: the pages waiting
    (Little) and a stream's read joins follow from it, the queue's read / program shares
    from the chip utilization at the page shares (as the closed loop's two steps)."""
    f = np.float64
    units, D = np.asarray(a["units"], f), np.asarray(a.get("dies", 1), f)
    fetch = np.asarray(a.get("fetch", QUEUE_FETCH_SIZE), f)
    ops = (r["n"] + map_reads(a, r, lam, k)) / units  # chip ops per request per chip
    q = np.minimum(lam * ops * wait, fetch * ops) / D
    s0 = stations(a, r, lam, k, q, p_join=seq_read_join(lam * r["n"], units * D, wait, r["rf"], 0.0))
    rho = s0["rho_s"]
    return stations(a, r, lam, k, q, rho_q=rho, p_join=seq_read_join(lam * r["n"], units * D, wait, r["rf"], rho))


def open_wait(a, r, lam, k):
    """The page wait at a die in open loop: the root of ``W = W'(W)`` (:func:`wait_root`)
    with W' the chip wait when the pages W implies merge (:func:`open_stations`), up to
    the wait of a full fetch window (Little).  A fixed point, not an iteration from an
    empty queue: a stream (or a mix whose programs merge) above its capacity without
    merging needs a standing backlog to merge, and that backlog exists only near
    saturation, which an iteration from zero overshoots."""
    lam = np.asarray(lam, np.float64)
    fetch = np.asarray(a.get("fetch", QUEUE_FETCH_SIZE), np.float64)
    shape = np.broadcast(lam, r["n"], r["rf"]).shape
    w_max = np.broadcast_to(fetch / np.maximum(lam, 1e-300), shape)  # finite at zero load
    return wait_root(lambda w: open_stations(a, r, lam, k, w)["w_chip"], w_max, OPEN_ROOT_ITERS)


def open_reference(a, r, lam, k):
    """Open loop at request rate ``lam`` (per us): (latency us, capacity exceeded)."""
    s = open_stations(a, r, lam, k, open_wait(a, r, lam, k))
    lam = np.asarray(lam, np.float64)
    units = np.asarray(a["units"], np.float64)
    rf, pm = r["rf"], s["pm"]
    # reads (and mapping reads) go before queued writes at a chip (non-preemptive priority)
    w_rd = s["w_chip"] * (1 - s["rho_s"]) / (1 - s["rho_r"])
    w_wr = s["w_chip"] / (1 - s["rho_r"])
    fj = fork_join(r, units, k)
    w_map = s["w_chip"] * (1 - s["rho_s"])  # mapping reads go first: the residual only
    w_flash = rf * fj * w_rd + (1 - rf) * fj * w_wr + pm * w_map
    rho_d, rho_h = lam * r["d2h"], lam * r["h2d"]
    w_d = lam * r["d2h"] ** 2 / (2 * (1 - np.clip(rho_d, 0, 0.9999)))
    w_h = lam * r["h2d"] ** 2 / (2 * (1 - np.clip(rho_h, 0, 0.9999)))
    lat = request_path(a, r, s) + w_flash + s["w_ch"] * (fj - 1) + w_d + w_h
    over = (s["rho"] >= 1) | (rho_d >= 1) | (rho_h >= 1) | (s["u_ch"] >= 1)
    return lat, over


def closed_response(a, r, x, qd, k) -> np.ndarray:
    """Closed loop at queue depth ``qd``, read as written: the throughput ``qd / R(X)``
    that Little's law gives for the response time ``R(X)`` at a trial throughput ``X``
    (0 where some station has no finite response).  Schweitzer approximate MVA over
    requests whose pages fork to random chips (a request waits H_n ** k_fj page waits),
    PCIe d2h / h2d FIFO stations, and the path as delay; an arrival sees (qd - 1) / qd of
    each queue.  A sequential stream's pages go to consecutive chips, so it queues only once
    qd x n exceeds the chips.  The closed-loop throughput is the X with ``qd / R(X) = X``
    (:func:`closed_rate_latency` solves it; the tests solve this form by bisection)."""
    f = np.float64
    qd = np.asarray(qd, f)
    n, rf = r["n"], r["rf"]
    units = np.asarray(a["units"], f)
    D = np.asarray(a.get("dies", 1), f)
    seq = r["seq"]
    fj = fork_join(r, units, k)
    mix = 4.0 * rf * (1.0 - rf)
    frac = np.maximum(qd - 1.0, 0.0) / np.maximum(qd, 1.0)
    q_seq = np.where(seq, np.maximum(qd * n / units - 1.0, 0.0) / D, 0.0)
    x = np.asarray(x, f)
    # pages waiting per die (multi-plane merging): a stream's from its depth, random ones
    # from the chip wait without merging; their read / program shares from that step's
    # chip utilization, a stream's read joins from that step's wait
    q_die, rho_q, p_join = q_seq, 0.0, 0.0
    for step in range(2):
        s = stations(a, r, x, k, q_die, qd=qd, rho_q=rho_q, p_join=p_join)
        pm = s["pm"]
        v = (n + pm) / units  # chip ops per request per chip
        svc = s["s_mean"]
        resid = 0.5 * (1 + np.maximum(s["e2"] / np.maximum(svc, 1e-12) ** 2 - 1, 0)) * svc
        resid_q = np.where(seq, stream_resid(s["e2"], np.maximum(svc, 1e-12), stream_ca2(n, units)), resid)
        busy = frac * x * v * svc
        free = 1.0 - k["k_q"] * busy
        with np.errstate(divide="ignore", invalid="ignore"):
            w_rand = np.where(free > 0, k["k_q"] * busy * resid_q / free, np.inf)
        z = request_path(a, r, s)
        chip_path = np.maximum(z - r["d2h"] - r["h2d"] - pm * s["s_map"], svc)
        w_seq = np.maximum(qd * n / units * svc - chip_path, 0.0)
        if step == 0:
            q_die = np.where(seq, q_seq, np.minimum(x * v * w_rand, qd * v) / D)
            rho_q = k["k_q"] * busy
            p_join = seq_read_join(x * n, units * D, w_seq, rf, rho_q)
    with np.errstate(divide="ignore", invalid="ignore"):
        fd, fh = 1.0 - frac * x * r["d2h"], 1.0 - frac * x * r["h2d"]
        w_d = np.where(fd > 0, frac * x * r["d2h"] ** 2 / fd, np.inf)
        w_h = np.where(fh > 0, frac * x * r["h2d"] ** 2 / fh, np.inf)
        # random pages: reads go first at a chip (the stream's mix keeps the FCFS wait)
        phi = priority_factor(rf, k["k_q"] * busy, k["k_q"] * s["rho_r"])
        w = np.where(seq, (1 - mix) * w_seq + mix * w_rand, w_rand * phi)
        # mapping reads go first at a chip (MQSim serves the mapping queue before user
        # reads): they wait only for the op in service
        resp = z + fj * w + pm * busy * resid + w_d + w_h
        return np.where(np.isfinite(resp), qd / resp, 0.0)
