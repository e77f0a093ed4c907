"""Restoration latency: from a request to a playable restored video (article L519-L527, Fig 6d).

Baseline: one GET of the HR file -- the tier's first-byte latency, then the bytes at one
stream's bandwidth.

NCS restores in three stages (digest M7, generalized):

1. fetch the LR bytes from the storage tier;
2. SR inference on the GPU (anchor frames only with SR-aware decoding, L573);
3. pack: lossless coding of the restored anchors, muxed with the LR stream (hybrid
   encoding, L527).

Without pipelining the stages run one after the other on the whole file.  With pipelining
the file is cut at GOP boundaries into ``m`` subvideos of at least ``subvideo_mb`` (100 MB in
the article, L577) that flow through the stages: the first subvideo passes every stage, the
others follow at the pace of the slowest stage.  Every subvideo is its own GET and pays the
per-request first-byte latency, which is why very small subvideos hurt (L523); an archive
tier's restore time is paid once, up front.
"""

from __future__ import annotations

import numpy as np

from models.ncs.tiers import GET_FIRST_BYTE_S


def fetch_s(size_mb, stream_mbps, first_byte_s):
    """One GET: first byte, then the bytes at one stream's bandwidth."""
    return first_byte_s + size_mb / stream_mbps


def subvideos(lr_mb, subvideo_mb):
    """Number of GOP-aligned subvideos, each at least ``subvideo_mb``."""
    return np.maximum(1.0, np.floor(lr_mb / subvideo_mb))


def baseline_latency_s(hr_mb, stream_mbps, tier_first_byte_s):
    """Baseline: read the HR file."""
    return fetch_s(hr_mb, stream_mbps, tier_first_byte_s)


def ncs_latency_s(lr_mb, sr_s, pack_s, stream_mbps, tier_first_byte_s, subvideo_mb, pipelined):
    """NCS restore latency (s), with or without pipelining (``pipelined`` a bool mask).

    ``sr_s`` / ``pack_s``: whole-video SR and pack stage times (s)."""
    restore_extra_s = np.maximum(0.0, tier_first_byte_s - GET_FIRST_BYTE_S)
    serial = restore_extra_s + fetch_s(lr_mb, stream_mbps, GET_FIRST_BYTE_S) + sr_s + pack_s
    m = subvideos(lr_mb, subvideo_mb)
    f = fetch_s(lr_mb / m, stream_mbps, GET_FIRST_BYTE_S)
    s, k = sr_s / m, pack_s / m
    piped = restore_extra_s + f + s + k + (m - 1.0) * np.maximum(np.maximum(f, s), k)
    return np.where(pipelined, piped, serial)


def fit_stage_times(hr_mb, lr_mb, stream_mbps, subvideo_mb, serial_over_baseline, piped_over_serial):
    """SR and pack stage times (s, whole video) that give the two ratios of Fig 6(d):
    NCS without pipelining / baseline, and NCS with pipelining / without.

    Two equations, two unknowns; the split is unique once the SR stage is taken as the
    slower of the two compute stages (assumption: DNN inference outweighs lossless anchor
    coding).  Raises ValueError when the ratios cannot be met by this pipeline."""
    base = baseline_latency_s(hr_mb, stream_mbps, GET_FIRST_BYTE_S)
    serial = serial_over_baseline * base
    compute = serial - fetch_s(lr_mb, stream_mbps, GET_FIRST_BYTE_S)  # SR + pack
    m = float(subvideos(lr_mb, subvideo_mb))
    f = float(fetch_s(lr_mb / m, stream_mbps, GET_FIRST_BYTE_S))
    if m < 2:
        raise ValueError("one subvideo: pipelining cannot change the latency")
    slowest = (piped_over_serial * serial - f - compute / m) / (m - 1.0)  # per subvideo
    if not (max(f, compute / (2 * m)) <= slowest <= compute / m):
        raise ValueError("the Fig 6(d) ratios are outside what a fetch/SR/pack pipeline can give")
    sr_s = slowest * m
    return sr_s, compute - sr_s
