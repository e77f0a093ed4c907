"""Chip and channel mechanisms shared by the closed and the open loop: multi-plane
merging, read rounds, reads-first priority, and the queueing of a sequential stream."""

from __future__ import annotations

import numpy as np

from models.blocks.flash.configs import READ_CMD_US
from models.blocks.numeric import f64, where


def rand_merge(k_mp, P, ppb):
    """Extra pages per multi-plane command per page of a kind queued at the die, random
    traffic: MQSim joins queued pages of other planes only at the head's page offset in the
    block, so each page queued joins with a chance ``k_mp (P - 1) / P / ppb`` (``k_mp = 1``:
    uniform page offsets; fitted to the multi-plane command counts of the MQSim runs)."""
    return k_mp * (P - 1) / P / f64(ppb)


def merge(seq, P, q, share, k, read: bool, ppb, kind=None, p_join=0.0):
    """Pages per multi-plane command of one kind (reads or programs) with ``q`` pages
    waiting per die, ``share`` of them of this kind (:func:`queued_shares`); ``kind``:
    the kind's share of the stream's pages (default ``share``).

    * random: each waiting page of the kind joins with chance :func:`rand_merge`;
    * sequential: MQSim allocates a stream's pages in order, so the planes of a die are
      filled in step and the ``P`` pages at one page offset across them are pages of the
      stream one die-stride apart; a command joins only pages of its own kind, ``kind``
      of those slots;
    * sequential reads: a read command takes the later pages of its offset that arrived
      while its head waited, each with chance ``p_join`` (:func:`seq_read_join`) after
      the one before: per offset, ``N ~ Binomial(P, kind)`` reads form ``1 + (N - 1)(1 -
      p_j)`` commands, ``p_j`` the join chance over the geometric gap to the next read
      slot -- ``P / (1 + (P - 1)(1 - p_join))`` pages per command for pure reads (MQSim:
      1.5-1.7 on 4 planes, 1.0-2.0 on 2, as this law gives with the runs' own waits);
    * sequential programs: a program takes far longer than the transfers around it, so a
      write stream's pages in flight sit at the die, split between the command in service
      and the queue; each command takes what queued during the previous one -- half the
      ``q share + 1`` pages there, at most ``1 + (P - 1) kind`` (MQSim: 256-KiB writes at
      QD16, 4 pages per die, run ~2 pages per program, at QD64 all 4 planes; a 70/30
      stream's programs 1.2 of at most 1.3 on 2 planes, 1.6 of at most 1.9 on 4)."""
    kind = share if kind is None else kind
    if read:
        with np.errstate(divide="ignore", invalid="ignore"):
            p_j = kind * p_join / (1.0 - (1.0 - kind) * p_join)
            n_any = 1.0 - (1.0 - kind) ** P  # chance an offset holds a read
            m_seq = where(kind > 0, P * kind / (n_any + (P * kind - n_any) * (1.0 - p_j)), 1.0)
    else:
        m_seq = np.minimum(0.5 * (q * share + 1.0), 1.0 + (P - 1) * kind)
    if seq is True or np.all(seq):
        return np.minimum(np.maximum(m_seq, 1.0), P)
    m_rnd = 1 + rand_merge(k["k_mp"] if read else k["k_mp_w"], P, ppb) * q * share
    return np.minimum(np.maximum(where(seq, m_seq, m_rnd), 1.0), P)


def round_cap(wm1, n_r, x, pm, x_map, sd_tr, rounds):
    """Data-out of the other ``wm1`` chips of a channel that a read op waits for in a full
    round: ``xbar`` (data-out + command per read op, over ``n_r`` page reads of ``x`` us and
    ``pm`` mapping reads of ``x_map`` us), thinned where the array times spread (TLC page
    types): only chips finishing within about one transfer of each other meet, a share
    ``1 / (1 + sd(tR) / xbar)`` (1 for equal tR, as MLC/SLC).  0 without rounds."""
    xbar = (n_r * x + pm * x_map) / np.maximum(n_r + pm, 1e-300) + READ_CMD_US
    return rounds * wm1 * xbar / (1.0 + sd_tr / xbar)


def round_wait(capb, rho0, c):
    """Read-round wait per read op: ``capb rho**2`` where ``rho = rho0 + c rho**2`` is the
    chip utilization with the wait included (``rho0`` without it; ``c rho**2`` what the
    wait adds), the smaller root, at most 1 where the wait would saturate the chip."""
    disc = np.maximum(1.0 - 4.0 * c * rho0, 0.0)
    rho = np.minimum(2.0 * rho0 / (1.0 + np.sqrt(disc)), 1.0)
    return capb * rho * rho


def mean_residual(e2, svc):
    """Mean residual service at a chip, 0.5 E[S^2] / E[S] (at least half the mean)."""
    return 0.5 * np.maximum(e2 / svc, svc)


def priority_factor(rf, rho, rho_r):
    """Mean page wait at a chip that serves reads (and mapping reads, utilization
    ``rho_r``) before queued programs, over the FCFS wait at the same utilization ``rho``:
    non-preemptive priority M/G/1 (Cobham), reads wait ``W0 / (1 - rho_r)``, programs
    ``W0 / ((1 - rho_r)(1 - rho))``; weighted by the read share ``rf`` of the pages,
    ``(1 - rf rho) / (1 - rho_r)`` (1 for reads only; short reads first lower the mean)."""
    return (1.0 - rf * np.minimum(rho, 0.9999)) / (1.0 - np.minimum(rho_r, 0.9999))


def queued_shares(rf, rho):
    """Shares of reads and programs among the pages queued at a die when reads go first
    (:func:`priority_factor`; MQSim's scheduler serves a chip's reads before its
    programs): a program waits ``1 / (1 - rho)`` times as long as a read, so by Little's
    law the queue holds programs and reads as ``(1 - rf) / (1 - rho) : rf`` -- at depth
    the queue is mostly programs (MQSim, 256 KiB 70/30 at QD64 on mqsim_default: reads wait
    0.8-0.9 ms, programs 49-52 ms, random or sequential).  ``rho = 0`` gives the page
    shares ``rf``, ``1 - rf``."""
    r_q = rf * (1.0 - np.minimum(np.maximum(rho, 0.0), 0.9999))
    tot = r_q + (1.0 - rf)
    return r_q / tot, (1.0 - rf) / tot


def seq_read_join(pages_per_us, dies_total, wait, rf, rho):
    """Chance that the next page of a stream's page offset on a die (``dies_total`` pages
    later: CWDP fills every die before the next plane) arrives while a read command's
    head waits at the chip: ``exp(-gap / W_r)`` for an exponential wait of mean ``W_r``,
    the reads' part of the mean page wait ``wait`` under reads-first priority
    (Cobham: ``W_r = wait x share_r / rf``, :func:`queued_shares`); 0 without a wait."""
    sh_r, _ = queued_shares(rf, rho)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w_r = wait * where(rf > 0, sh_r / rf, 1.0)
        return where(w_r > 0, np.exp(-dies_total / (pages_per_us * w_r)), 0.0)


def stream_ca2(n, units):
    """Squared coefficient of variation of a sequential stream's page arrivals at one chip:
    the stream visits the chips in turn, so a chip gets every ``units / n``-th request's
    page -- Erlang thinning, ``n / units`` (random placement: 1, Poisson)."""
    return np.minimum(f64(n) / f64(units), 1.0)


def stream_e2(e2, svc, ca2):
    """The second moment ``E[S^2]`` a chip queue fed by a sequential stream acts with
    (Kingman, G/G/1): the M/G/1 residual ``0.5 E[S^2] / E[S] = 0.5 (1 + cs^2) E[S]`` becomes
    ``0.5 (ca^2 + cs^2) E[S]`` -- a stream of mixed reads and programs queues only for the
    spread of their service times, not for the spread of its arrivals."""
    return np.maximum(e2 - (1.0 - ca2) * svc * svc, 0.0)


def stream_resid(e2, svc, ca2):
    """:func:`stream_e2`'s mean residual service, ``0.5 E[S^2]_stream / E[S]``."""
    return 0.5 * stream_e2(e2, svc, ca2) / svc
