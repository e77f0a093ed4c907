"""The three paths a MinIO / MinRdIO request takes, as latencies (us) from the blocks.

* **data plane** -- one direct I/O to a volume over NVMe-oF: host block stack (link
  block: kernel submit/complete + interrupt), the fabric exchange and target software
  (link block ``nvmeof_overhead_ns``), and the SSD (flash block, a PM983-class TLC
  drive; writes are acknowledged from its power-loss-protected cache).
* **internode RPC** -- MinIO's storage REST call to the node that owns a volume: a TCP
  request/response (link block ``tcp_round_trip_ns``) plus the RPC software time.
* **front end** -- the client's HTTP request to the gateway: TCP exchange plus the S3
  handler's software time.

Every function is vectorized over its arguments.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dse.units import B_PER_S_PER_GBPS, BITS_PER_BYTE, NS_PER_US, US_PER_S
from models.blocks import flash, link
from models.blocks.calibration import per_calibration

#: Bytes per microsecond at 1 GB/s.
B_PER_US_PER_GBPS = B_PER_S_PER_GBPS / US_PER_S


def gbit_s_to_b_per_us(link_gbit_s: np.ndarray) -> np.ndarray:
    """A network bit rate (Gb/s) as bytes per microsecond."""
    return np.asarray(link_gbit_s, dtype=np.float64) / BITS_PER_BYTE * B_PER_US_PER_GBPS


#: The storage node's drives (nvmeof-objstore.md §1: eight Samsung PM983 U.2).  No
#: PM983 geometry is public: the flash block's 8-channel x 8-die x 4-plane TLC drive on
#: a PCIe 3.0 x4 link (PM983 interface), which gives ~3.2 GB/s sequential reads, the
#: datasheet figure (digest §7 ambiguity 3).
SSD = dataclasses.replace(
    flash.config("espresso_ssd"), name="pm983_like", pcie_lane_gbps=0.985, pcie_lanes=4,
    source="flash block espresso_ssd geometry on PCIe 3.0 x4 (PM983 interface)",
)
#: Write acknowledgement of an enterprise SSD with power-loss protection, us: the data
#: lands in the drive's DRAM.  Assumption: ~20 us, the random-write latency class of
#: PM983-type datacenter drives (datasheets quote tens of us).
SSD_WRITE_ACK_US = 20.0
#: Direct-I/O granularity: XFS block / memory page.
FS_BLOCK_B = 4096.0
#: Host NVMe-oF initiator software per I/O (kernel block layer submit + complete +
#: interrupt), ns: the link block's kernel_irq stack and interrupt completion.
HOST_STACK_NS = float(link.NVME_STACK_SUBMIT_NS[0] + link.NVME_STACK_COMPLETE_NS[0] + link.NVME_COMPLETION_NS[0])
#: One InfiniBand switch between any two nodes (the paper's single 56 Gb/s fabric).
N_SWITCHES = 1
IB_SWITCH_NS = float(link.FABRIC_SWITCH_NS[link.FABRICS.index("infiniband")])


def direct_io_b(nbytes: np.ndarray) -> np.ndarray:
    """Bytes a direct I/O moves: the request rounded up to whole 4 KiB blocks."""
    return np.ceil(np.asarray(nbytes, dtype=np.float64) / FS_BLOCK_B) * FS_BLOCK_B


def ssd_read_us(io_b: np.ndarray) -> np.ndarray:
    """Unloaded read latency of one drive for a direct I/O of ``io_b`` bytes (flash block),
    from a table of every 4 KiB multiple up to 2 MiB; larger reads ask the block."""
    io = np.asarray(io_b, dtype=np.float64)
    blocks = np.ceil(io / FS_BLOCK_B)
    out = _READ_US[np.clip(blocks, 1, _SAT_MAX_BLOCKS).astype(np.int64) - 1]
    big = blocks > _SAT_MAX_BLOCKS
    if np.any(big):
        out = np.where(big, flash.unloaded_latency_us(SSD, np.maximum(io, FS_BLOCK_B), 1.0, "random"), out)
    return out


def ssd_write_us(io_b: np.ndarray) -> np.ndarray:
    return SSD_WRITE_ACK_US + np.asarray(io_b, dtype=np.float64) / (SSD.pcie_gbps * B_PER_US_PER_GBPS)


# The drive's sustained I/O rate for every direct-I/O size (multiples of 4 KiB) up to 2 MiB
# (a shard never exceeds the 1 MiB erasure block), tabulated once per calibration from the
# flash block (its saturation search iterates); beyond the table the rate is
# bandwidth-bound and scales as 1 / size.
_SAT_MAX_BLOCKS = 512
_SAT_SIZES_B = FS_BLOCK_B * np.arange(1, _SAT_MAX_BLOCKS + 1)


@per_calibration
def _sat_iops() -> dict[bool, np.ndarray]:
    """Sustained IOPS per table size, reads (False) and writes (True), under the calibration
    in force (flash block)."""
    return {
        False: flash.saturation_iops(SSD, _SAT_SIZES_B, 1.0, "random"),
        True: flash.saturation_iops(SSD, _SAT_SIZES_B, 0.0, "random"),
    }


#: The same sizes' unloaded read latency (us; the flash block's unloaded path, which no
#: calibration changes); the block's queueing stations are costly per call.
_READ_US = flash.unloaded_latency_us(SSD, _SAT_SIZES_B, 1.0, "random")


def ssd_sat_iops(io_b: np.ndarray, write: bool) -> np.ndarray:
    """Sustained I/Os per second of one drive for direct I/Os of ``io_b`` bytes (a
    multiple of 4 KiB; flash block bottleneck: dies, channels, PCIe)."""
    blocks = np.asarray(io_b, dtype=np.float64) / FS_BLOCK_B
    idx = np.clip(np.ceil(blocks), 1, _SAT_MAX_BLOCKS).astype(np.int64) - 1
    return _sat_iops()[write][idx] * np.minimum(_SAT_MAX_BLOCKS / np.maximum(blocks, 1.0), 1.0)


def _nvmeof_coefficients() -> dict[tuple[str, bool], np.ndarray]:
    """The link block's NVMe-oF overhead is affine in the I/O size and in the inverse link
    rate: ``a + b io + (c + d io) / link``.  Fitted once per transport and direction on a
    grid (4 KiB - 16 MiB, 10 - 800 Gb/s); exact to < 0.3% (tests compare with the block)."""
    io = np.geomspace(FS_BLOCK_B, 16.0 * 2**20, 25)
    rate = np.geomspace(10.0, 800.0, 15)
    i, r = (a.ravel() for a in np.meshgrid(io, rate))
    basis = np.stack([np.ones_like(i), i, 1.0 / r, i / r], axis=1)
    out = {}
    for tr in link.NVMEOF_TRANSPORTS:
        for write in (False, True):
            y = link.nvmeof_overhead_ns(i, tr, r, N_SWITCHES, write=write)
            out[tr, write] = np.linalg.lstsq(basis / y[:, None], np.ones_like(y), rcond=None)[0]
    return out


_NVMEOF = _nvmeof_coefficients()
#: Per direction, the coefficients as rows (a, b, c, d) by transport code (columns).
_NVMEOF_BY_CODE = {
    write: np.ascontiguousarray(np.stack([_NVMEOF[tr, write] for tr in link.NVMEOF_TRANSPORTS]).T) for write in (False, True)
}


def nvmeof_affine_ns(write: bool, transport: np.ndarray, link_gbit_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fixed ns, ns per byte) of :func:`nvmeof_overhead_ns` for a transport and link rate."""
    a, b, c, d = _NVMEOF_BY_CODE[write][:, np.asarray(transport, dtype=np.int64)]
    inv = 1.0 / np.asarray(link_gbit_s, dtype=np.float64)
    return a + c * inv, b + d * inv


def nvmeof_overhead_ns(io_b: np.ndarray, write: bool, transport: np.ndarray, link_gbit_s: np.ndarray) -> np.ndarray:
    """:func:`models.blocks.link.nvmeof_overhead_ns` through one switch, in its affine form
    (``transport`` as codes into ``link.NVMEOF_TRANSPORTS``)."""
    fixed, per_b = nvmeof_affine_ns(write, transport, link_gbit_s)
    return fixed + per_b * np.asarray(io_b, dtype=np.float64)


def volume_io_us(io_b: np.ndarray, write: bool, transport: np.ndarray, link_gbit_s: np.ndarray,
                 affine: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """One direct I/O to a disaggregated volume over NVMe-oF (``affine``: the
    :func:`nvmeof_affine_ns` of the same transport and link, if already known)."""
    fixed, per_b = affine if affine is not None else nvmeof_affine_ns(write, transport, link_gbit_s)
    media_us = ssd_write_us(io_b) if write else ssd_read_us(io_b)
    return (HOST_STACK_NS + fixed + per_b * np.asarray(io_b, dtype=np.float64)) / NS_PER_US + media_us


def tcp_exchange_us(out_b: np.ndarray, back_b: np.ndarray, link_gbit_s: np.ndarray,
                    base_us: np.ndarray | None = None) -> np.ndarray:
    """Kernel TCP request/response between two nodes through one switch (no app time):
    the link block's round trip.  ``base_us`` (:func:`tcp_base_us` of the same link) skips
    re-deriving the size-independent part: the rest is store-and-forward serialization of
    the segments at every hop, which is what the block adds per byte."""
    if base_us is None:
        return link.tcp_round_trip_ns(out_b, link_gbit_s, N_SWITCHES, reply_b=back_b, switch_ns=IB_SWITCH_NS) / NS_PER_US
    extra_b = tcp_wire_b(out_b) + tcp_wire_b(back_b) - 2.0 * TCP_EMPTY_WIRE_B
    return base_us + extra_b * tcp_us_per_wire_b(link_gbit_s)


def tcp_base_us(link_gbit_s: np.ndarray) -> np.ndarray:
    """The exchange of two empty messages (stacks, NICs, switch, flight, headers)."""
    return tcp_exchange_us(0.0, 0.0, link_gbit_s)


def tcp_wire_b(payload_b: np.ndarray) -> np.ndarray:
    """Bytes on the wire for a TCP payload: per-segment headers (link block MSS/headers)."""
    p = np.asarray(payload_b, dtype=np.float64)
    return p + np.maximum(np.ceil(p / link.TCP_MSS_B), 1.0) * link.TCP_HEADER_B


TCP_EMPTY_WIRE_B = float(tcp_wire_b(0.0))


def tcp_us_per_wire_b(link_gbit_s: np.ndarray) -> np.ndarray:
    """What one more wire byte adds to a TCP exchange: its serialization at every hop."""
    return (N_SWITCHES + 1.0) * link.wire_time_ns(1.0, link_gbit_s) / NS_PER_US


#: NVMe-oF/RDMA wire bytes per I/O beyond the data: 64 B command capsule + 16 B response
#: capsule, and an InfiniBand header per 4 KiB MTU packet (link block FABRIC_HEADER_B).
NVMF_CAPSULES_B = link.NVME_SQE_B + link.NVME_CQE_B
IB_MTU_B = 4096.0
IB_HEADER_B = float(link.FABRIC_HEADER_B[link.FABRICS.index("infiniband")])


def nvmf_wire_b(io_b: np.ndarray) -> np.ndarray:
    """Bytes on the storage fabric for one NVMe-oF I/O of ``io_b`` data bytes."""
    d = np.asarray(io_b, dtype=np.float64)
    packets = np.maximum(np.ceil(d / IB_MTU_B), 1.0) + 2.0  # data packets + two capsules
    return d + NVMF_CAPSULES_B + packets * IB_HEADER_B
