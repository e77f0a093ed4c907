"""Link block: PCIe / CXL links, CXL.mem flit efficiency, NVMe, RDMA and TCP overheads.

All functions are vectorized (scalars or numpy arrays, broadcast together).  Labels
(generation, flit mode, NVMe completion mode, RDMA fabric) are strings, sequences of
strings, or integer codes into the module's label tuples.

Generations and raw bandwidth
-----------------------------
``gen`` is a PCIe generation: a label (``"pcie5"``, ``"PCIe 5.0"``, ``"gen5"``,
``"cxl2.0"``, ``"cxl3.1"``, ...) or a number 1..7 (the generation itself, *not* a
code; numbers make a natural numeric model parameter such as ``pcie_gen in (3,4,5,6)``).
CXL 1.1/2.0 run on the PCIe 5.0 PHY (32 GT/s), CXL 3.x on PCIe 6.0 (64 GT/s), CXL 4.0
on PCIe 7.0 (128 GT/s).

* ``transfer_rate_gts(gen)``                 GT/s per lane
* ``raw_bw_gbps(gen, lanes)``                GB/s per direction after line encoding
  (8b/10b, 128b/130b, 1b/1b PAM4 flit mode) and before TLP / flit overheads: the
  figure vendors quote (PCIe 5.0 x16 = 63.0 GB/s).
* ``serialization_ns(nbytes, gen, lanes)``   time to put ``nbytes`` on the wire.
* ``pcie_tlp_efficiency(transfer_b, gen, mps_b, header_b)`` and
  ``pcie_dma_bw_gbps(gen, lanes, transfer_b, ...)``  payload bandwidth of DMA transfers
  split into TLPs (non-flit: header + 6 B DLL + framing per TLP; flit mode: 236 TLP
  bytes per 256 B flit).

CXL.mem flits
-------------
``flit_mode`` is one of ``FLIT_MODES = ("68B", "256B", "256B_lo")`` (also accepted:
68, 256, codes 0..2, "lopt", "latency_optimized").

* ``cxl_mem_efficiency(flit_mode, read_frac)``  64 B data moved per wire byte of the
  busier direction, i.e. total CXL.mem data bandwidth / ``raw_bw_gbps``.  Reads put
  data on S2M and requests on M2S; writes the other way round, so mixes exceed 1.
* ``cxl_mem_bw_gbps(gen, lanes, flit_mode, read_frac)``  the bandwidth itself (GB/s,
  reads + writes).
* ``cxl_round_trip_ns(gen, lanes, flit_mode, n_switches, n_retimers, ...)`` unloaded
  round trip of a 64 B CXL.mem read (ports, switches, retimers, FEC, flit serialization
  at every CRC-checking receiver, flight time, plus ``media_ns``);
  ``cxl_round_trip_breakdown`` gives the components.

NVMe, RDMA, TCP
---------------
* ``nvme_command_breakdown(io_b, gen, lanes, ...)`` / ``nvme_command_overhead_ns``:
  SQ doorbell write, SQE fetch, PRP list fetch, data DMA, CQE write, interrupt or
  polling, and the host software stack; excludes the media time.
* ``rdma_round_trip_ns(nbytes, op, link_gbit_s, n_switches, fabric, ...)``: one-sided
  verbs READ / WRITE (requester post, NIC, wire, switches, responder DMA, completion).
* ``tcp_round_trip_ns(nbytes, link_gbit_s, n_switches, ...)`` and
  ``nvmeof_overhead_ns(io_b, transport, ...)`` for NVMe-oF over RDMA or TCP.

Parameter group
---------------
* ``params(prefix, gens=, lanes=, default_gen=, default_lanes=, flit_mode=, source=)``: a
  model's ``<prefix>link_gen`` / ``<prefix>lanes`` / ``<prefix>flit_mode`` parameters, the
  generations from :data:`PARAM_GENS` (declared once here; a model may restrict them).
* ``from_batch(p, prefix)`` -> :class:`LinkSpec`: generation numbers, lanes, flit codes
  and where the flit mode exists (``flit_exists``; ``infeasible()`` gives the reason;
  ``columns=False`` keeps a single point's fields numpy scalars instead of length-1 columns).

Sources: PCI Express Base Specification 1.0-6.0 (rates, encodings, flit layout),
CXL Specification 2.0 §4.2 (68 B flit, slot formats) and 3.x §6.2.3 (256 B and
latency-optimized flits), Pond (Li et al., ASPLOS'23) for port/switch latency as
cited in ``shared/research/cxl-sql-join.md``, Neugebauer et al. (SIGCOMM'18,
pcie-bench) for DMA latencies, Kalia et al. (ATC'16) for RDMA verbs latency, and vendor
datasheets for switch latencies; each constant below names its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.errors import DseError, allowed_list, did_you_mean
from dse.model import Batch, Param

ArrayLike = Any

# ----------------------------------------------------------------------------- physics
#: Signal propagation in copper cable / PCB traces, ns per metre (~0.66 c).
#: Source: standard value for FR4 / twinax (velocity factor ~0.6-0.7).
PROPAGATION_NS_PER_M = 5.0

# ----------------------------------------------------------------------------- generations
#: PCIe generations, index = code.  Numbers 1..7 given as ``gen`` mean these generations.
GENERATIONS: tuple[str, ...] = ("pcie1", "pcie2", "pcie3", "pcie4", "pcie5", "pcie6", "pcie7")

#: Transfer rate per lane, GT/s.  Source: PCIe Base Spec 1.0a/2.0/3.0/4.0/5.0/6.0/7.0.
GEN_TRANSFER_GTS = np.array([2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0])

#: Line-encoding efficiency.  8b/10b (1.0, 2.0), 128b/130b (3.0-5.0), and 1b/1b PAM4
#: flit mode (6.0, 7.0), whose FEC/CRC cost is counted in the flit instead.
#: Source: PCIe Base Spec 3.0 §4.2.2, 6.0 §4.2.3 (flit mode).
GEN_ENCODING = np.array([0.8, 0.8, 128 / 130, 128 / 130, 128 / 130, 1.0, 1.0])

#: Raw GB/s per lane after encoding (derived: GT/s x encoding / 8).
GEN_RAW_GBPS_PER_LANE = GEN_TRANSFER_GTS * GEN_ENCODING / 8.0

#: Whether the generation runs in flit mode with FEC (PAM4): PCIe 6.0 and later.
GEN_FLIT_MODE = np.array([False, False, False, False, False, True, True])
#: Why a model marks the 68 B flit at such a generation infeasible (``Model.run_full`` reason):
#: PCIe 6.0's PAM4 + FEC flit mode carries only 256 B flits (CXL 3.0 keeps 68 B to 32 GT/s).
NO_68B_FLIT_REASON = "the 68 B flit does not exist at PCIe 6 (64 GT/s carries only 256 B flits)"

#: CXL specification versions and the PCIe PHY they run on at full speed.
#: Source: CXL 1.1 / 2.0 (PCIe 5.0 PHY, 32 GT/s), CXL 3.0/3.1/3.2 (PCIe 6.0, 64 GT/s),
#: CXL 4.0 (PCIe 7.0, 128 GT/s; consortium release of Nov 2025).
CXL_VERSIONS: dict[str, str] = {
    "cxl1.1": "pcie5",
    "cxl2.0": "pcie5",
    "cxl3.0": "pcie6",
    "cxl3.1": "pcie6",
    "cxl3.2": "pcie6",
    "cxl4.0": "pcie7",
}

# ----------------------------------------------------------------------------- PCIe TLPs
#: Data link layer bytes per TLP in non-flit mode: 2 B sequence number + 4 B LCRC.
#: Source: PCIe Base Spec §3.6 (DLL); pcie-bench (Neugebauer et al., SIGCOMM'18) §3.
PCIE_DLL_B = 6.0
#: Physical-layer framing per TLP: STP + END symbols (1 B each) for 8b/10b; a 4 B STP
#: token for 128b/130b.  Source: PCIe Base Spec 3.0 §4.2.2.3 (framing tokens).
PCIE_FRAMING_B = np.array([2.0, 2.0, 4.0, 4.0, 4.0, 0.0, 0.0])
#: TLP header: 12 B (3DW, 32-bit addresses) or 16 B (4DW, 64-bit addresses); 16 B is
#: the default for host memory above 4 GiB.  Source: PCIe Base Spec §2.2.
PCIE_TLP_HEADER_B = 16.0
#: Bytes of TLP space per 256 B flit in flit mode: 236 B TLP + 6 B DLP + 8 B CRC + 6 B FEC.
#: Source: PCIe Base Spec 6.0 §4.2.3.1 (flit layout).
PCIE_FLIT_TLP_B = 236.0
PCIE_FLIT_B = 256.0
#: Default max payload size / max read request size (bytes): 256 B is the common
#: server setting.  Source: assumption (typical BIOS default on Xeon/EPYC hosts).
PCIE_MPS_B = 256.0

# ----------------------------------------------------------------------------- CXL flits
#: CXL.mem flit modes, index = code.
FLIT_MODES: tuple[str, ...] = ("68B", "256B", "256B_lo")

# Per-mode flit geometry (index = flit-mode code).
#   68B:     CXL 1.1/2.0: 2 B protocol ID + 4 x 16 B slots (slot 0 = H-slot holding the
#            32-bit flit header + 96 b of messages; slots 1-3 = G-slots) + 2 B CRC.  A
#            flit may instead be an all-data flit of 4 x 16 B data slots.
#            Source: CXL 2.0 §4.2.2-4.2.3 (Figure "CXL.cachemem protocol flit").
#   256B:    CXL 3.x standard 256 B flit: 2 B flit header, 14 B H-slot, 14 x 16 B
#            G-slots, 2 B credit return, 8 B CRC, 6 B FEC.  No all-data flit.
#            Source: CXL 3.0 §6.2.3.1 ("256B Flit" packing).
#   256B_lo: latency-optimized 256 B flit: two 128 B halves each with its own CRC so the
#            first half can be consumed before the second arrives; slot 7 straddles
#            the halves as a 12 B HS-slot that holds headers only, leaving 13 G-slots.
#            Source: CXL 3.0 §6.2.3.1.2 ("Latency-Optimized 256B Flit").
FLIT_WIRE_B = np.array([68.0, 256.0, 256.0])
FLIT_G_SLOTS = np.array([3.0, 14.0, 13.0])
#: Data slots in an all-data flit (0: the mode has none).
FLIT_ALL_DATA_SLOTS = np.array([4.0, 0.0, 0.0])
#: Bytes that must arrive before the first message of a flit can be consumed (CRC
#: check granularity): the whole 68 B or 256 B flit, or one 128 B half.
FLIT_CHECK_B = np.array([68.0, 256.0, 128.0])
#: Bytes on the wire before a 64 B read response (DRS header + 4 data slots) is whole:
#: 68B needs two flits (H-slot + 3 G-slots, then one more slot); 256B one flit; the
#: latency-optimized flit's first half (H + 6 G-slots) holds it.  Derived from the
#: layouts above.
FLIT_READ_RESP_B = np.array([136.0, 256.0, 128.0])
#: Data slots (16 B) per 64 B line.
SLOTS_PER_LINE = 4.0
LINE_B = 64.0

# CXL.mem message types, index into the density tables.
MSG_REQ, MSG_RWD, MSG_DRS, MSG_NDR = 0, 1, 2, 3
#: Messages of each type [M2S Req, M2S RwD header, S2M DRS header, S2M NDR] per G-slot.
#: 68B: slot formats G4 (Req + H2D data header), G5 (RwD + H2D Rsp), G6 (3 DRS),
#: G5 (2 NDR).  Source: CXL 2.0 Table 4-5/4-6 "slot format" encodings.
#: 256B: from the 256B-flit message sizes (M2S Req ~100 b, RwD ~104 b, S2M DRS and NDR
#: ~40 b in 16 B slots).  Source: CXL 3.0 §6.2.3.1.1; NDR density is an assumption
#: (3 per slot by size).
FLIT_HDR_PER_G = np.array([[1.0, 1.0, 3.0, 2.0], [1.0, 1.0, 3.0, 3.0], [1.0, 1.0, 3.0, 3.0]])
#: Messages per flit in the header slots (H-slot, plus the 12 B HS-slot of the
#: latency-optimized flit, which fits 2 DRS/NDR but no 100 b M2S message).
#: 68B: H4 (RwD), H5 (Req), H5 (2 DRS), H4 (2 NDR) from CXL 2.0 Table 4-5.
FLIT_HDR_PER_H = np.array([[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 4.0, 4.0]])

# ----------------------------------------------------------------------------- CXL latency
#: One traversal of one CXL port (PHY + link + transaction / ARB-MUX layers), ns.
#: Derived from Pond (Li et al., ASPLOS'23 §2): a directly attached CXL device adds
#: 70-90 ns over local DRAM; that path crosses 4 port traversals (host and device
#: port, each way) plus a few ns of serialization and flight -> ~20 ns each.
CXL_PORT_NS = 20.0
#: One retimer traversal, ns.  Assumption: ~10 ns, the order vendors quote for PCIe 5.0
#: retimers (the PCIe spec allows far more); used to split Pond's switch figure below.
RETIMER_NS = 10.0
#: One switch traversal (ingress port + crossbar + egress port), ns.  Derived: Pond
#: reports a single switch plus two retimers adding 115 ns to the round trip (quoted in
#: shared/research/cxl-sql-join.md); (115 - 2 x 2 x 10 ns retimers) / 2 directions.
CXL_SWITCH_NS = 37.5
#: FEC decode latency per receiver for PAM4 flit-mode links (PCIe 6.0+), ns.
#: Source: PCIe 6.0 design target of ~1-2 ns for its lightweight FEC (PCI-SIG FAQ);
#: upper value taken.
FEC_NS = 2.0
#: Default cable / trace length per direction of a directly attached device, metres.
#: Assumption: an in-chassis add-in card or E3.S slot.
CXL_WIRE_M = 0.3

# ----------------------------------------------------------------------------- NVMe
#: Round trip of a small (64 B) DMA read from a device to host memory, ns.
#: Source: pcie-bench (Neugebauer et al., SIGCOMM'18 §6): ~450-600 ns median on
#: Xeon E5 hosts with a Gen3 x8 device; 500 ns taken.
PCIE_DMA_READ_RT_NS = 500.0
#: One-way latency of a posted PCIe write (MMIO doorbell, CQE or MSI-X write) until it
#: takes effect at the other end, ns.  Assumption: half the DMA read round trip.
PCIE_POSTED_WRITE_NS = 250.0
#: NVMe submission queue entry / completion queue entry sizes, bytes.
#: Source: NVM Express Base Spec 2.0 §4.2 (64 B SQE), §4.6 (16 B CQE).
NVME_SQE_B = 64.0
NVME_CQE_B = 16.0
#: Memory page size used by PRP entries, bytes.  Source: NVMe spec CC.MPS default 4 KiB.
NVME_PAGE_B = 4096.0
#: Completion signalling.  ``interrupt``: MSI-X write + interrupt entry/handler;
#: ``polling``: a spinning CPU sees the CQE phase bit flip, half a poll loop late.
#: Values (ns) are assumptions consistent with Yang et al. (FAST'12, "When poll is
#: better than interrupt"), where interrupts cost a few us more than polling.
NVME_COMPLETION_MODES: tuple[str, ...] = ("interrupt", "polling")
NVME_COMPLETION_NS = np.array([1000.0, 100.0])
#: Host software per I/O (submit path, complete path), ns, by stack.
#: ``kernel_irq``: Linux block layer + NVMe driver, interrupt completion and thread
#: wake-up; ``kernel_poll``: io_uring with IOPOLL; ``spdk``: user-space polled driver;
#: ``none``: hardware-only view.  Assumptions in the ranges measured by Yang et al.
#: (FAST'12) and Didona et al. (SYSTOR'22, "Understanding modern storage APIs").
NVME_STACKS: tuple[str, ...] = ("kernel_irq", "kernel_poll", "spdk", "none")
NVME_STACK_SUBMIT_NS = np.array([1500.0, 1200.0, 150.0, 0.0])
NVME_STACK_COMPLETE_NS = np.array([2000.0, 500.0, 100.0, 0.0])

# ----------------------------------------------------------------------------- networks
#: Fabrics for RDMA / TCP round trips, index = code.
FABRICS: tuple[str, ...] = ("infiniband", "roce")
#: Port-to-port switch latency, ns.  InfiniBand: NVIDIA Quantum HDR QM8700 datasheet
#: (130 ns); Ethernet: ~450 ns typical of cut-through data-center switches (Broadcom
#: Tomahawk class, vendor briefs; assumption within the 300-600 ns range quoted).
FABRIC_SWITCH_NS = np.array([130.0, 450.0])
#: Per-packet wire overhead bytes of a one-sided RDMA message.
#: InfiniBand: LRH 8 + BTH 12 + RETH 16 + ICRC 4 + VCRC 2 = 42 B.
#: RoCEv2: preamble+SFD 8 + Ethernet 14 + FCS 4 + IFG 12 + IPv4 20 + UDP 8 + BTH 12 +
#: RETH 16 + ICRC 4 = 98 B.  Source: IBTA spec Vol. 1 §5 / RoCEv2 annex A17.
FABRIC_HEADER_B = np.array([42.0, 98.0])
#: NIC pipeline latency per traversal (TX or RX processing inside the RNIC), ns.
#: Assumption chosen so that a 64 B READ through one switch totals ~2 us, matching
#: ConnectX-class measurements (Kalia et al., ATC'16: ~1.5-2 us small READs).
RDMA_NIC_NS = 150.0
#: Requester software to post a work request (build WQE, write doorbell/BlueFlame), ns.
#: Assumption (Kalia et al., ATC'16 discuss ~100s of ns of CPU per post).
RDMA_POST_NS = 150.0
#: Requester detection of the completion by polling the CQ, ns.  Assumption.
RDMA_POLL_NS = 50.0
#: Largest payload a WRITE carries inline in the WQE (no DMA read at the requester),
#: bytes.  Assumption: a typical ConnectX ``max_inline_data`` setting.
RDMA_INLINE_MAX_B = 220.0
#: Kernel TCP/IP stack time per message per host side (send or receive path,
#: syscall + protocol + copy of a small message), ns.  Assumption: gives ~10-15 us
#: small-message TCP_RR round trips on 25-100 GbE, the usual netperf range.
TCP_STACK_NS = 2500.0
#: TCP/IPv4/Ethernet wire overhead per segment (preamble 8 + Ethernet 14 + FCS 4 +
#: IFG 12 + IPv4 20 + TCP 20 + timestamps 12), bytes; MSS for 1500 B MTU.
TCP_HEADER_B = 90.0
TCP_MSS_B = 1448.0
#: NVMe-oF target software per command (capsule parse, submit to the backing SSD,
#: completion capsule), ns, by transport.  Assumption: SPDK-class targets add a few us
#: (RDMA) and ~10 us (TCP incl. PDU handling) over local NVMe, the ranges SPDK's
#: NVMe-oF performance reports show.
NVMEOF_TRANSPORTS: tuple[str, ...] = ("rdma", "tcp")
NVMEOF_TARGET_NS = np.array([2000.0, 6000.0])


# ============================================================================= vectorization
#: Elements per chunk when a block evaluates a long batch piecewise: numpy temporaries
#: of ~64 Ki doubles stay in the CPU caches, which is 2-3x faster than whole-batch
#: temporaries of millions of elements (measured on the bench cases).
CHUNK = 65536


def chunked(fn: Any, *args: Any, chunk: int = CHUNK) -> Any:
    """Evaluate the elementwise ``fn(*args)`` over the broadcast of ``args`` in chunks of
    ``chunk`` elements (same result as one call, less memory traffic).  Scalar arguments
    are passed through; ``fn`` may return one array or a tuple of arrays."""
    # the broadcast holds at most the product of the argument sizes: a short batch (or a
    # single point) goes straight to ``fn`` without working out the broadcast shape
    bound = 1
    for a in args:
        bound *= a.size if type(a) is np.ndarray else np.size(a)
    if bound <= 2 * chunk:
        return fn(*args)
    shape = np.broadcast_shapes(*[np.shape(a) for a in args])
    size = int(np.prod(shape)) if shape else 1
    if size <= 2 * chunk:
        return fn(*args)
    flat = [np.broadcast_to(a, shape).reshape(-1) if np.ndim(a) else a for a in args]
    outs: list[np.ndarray] | None = None
    single = False
    for s in range(0, size, chunk):
        part = fn(*[a[s : s + chunk] if np.ndim(a) else a for a in flat])
        if outs is None:
            single = not isinstance(part, tuple)
            parts = (part,) if single else part
            outs = [np.empty(size, dtype=np.result_type(p)) for p in parts]
        else:
            parts = (part,) if single else part
        for o, p in zip(outs, parts):
            o[s : s + chunk] = p
    assert outs is not None
    res = [o.reshape(shape) for o in outs]
    return res[0] if single else tuple(res)


# ============================================================================= labels
def _norm(s: str) -> str:
    return s.strip().lower().replace(" ", "").replace("_", "").replace("-", "")


def _gen_alias_table() -> dict[str, int]:
    table: dict[str, int] = {}
    for i, label in enumerate(GENERATIONS):
        n = i + 1
        for alias in (label, f"pcie{n}.0", f"gen{n}", f"gen{n}.0", f"{n}", f"{n}.0", f"pcie{n}.x"):
            table[_norm(alias)] = i
    for ver, base in CXL_VERSIONS.items():
        code = GENERATIONS.index(base)
        table[_norm(ver)] = code
        table[_norm(ver.replace("cxl", "cxl "))] = code
    table["cxl3"] = table["cxl3.0"]
    table["cxl3.x"] = table["cxl3.0"]
    table["cxl2"] = table["cxl2.0"]
    table["cxl1"] = table["cxl1.1"]
    table["cxl4"] = table["cxl4.0"]
    return table


_GEN_ALIASES = _gen_alias_table()
_FLIT_ALIASES: dict[str, int] = {
    "68b": 0, "68": 0, "68bflit": 0,
    "256b": 1, "256": 1, "256bflit": 1, "standard": 1, "256bstd": 1, "256bstandard": 1,
    "256blo": 2, "256blopt": 2, "lopt": 2, "lo": 2, "latencyoptimized": 2, "256blatencyoptimized": 2,
}


def _label_codes(value: Any, aliases: dict[str, int], labels: Sequence[str], what: str) -> np.ndarray | int:
    def one(v: str) -> int:
        key = _norm(v)
        if key not in aliases:
            raise DseError(
                f"unknown {what} {v!r}{did_you_mean(v, labels)}; allowed: {allowed_list(labels)}"
            )
        return aliases[key]

    if isinstance(value, str):
        return one(value)
    arr = np.asarray(value)
    if arr.dtype.kind in "US" or arr.dtype == object:
        return np.asarray([one(str(v)) for v in arr.ravel()], dtype=np.int64).reshape(arr.shape)
    raise TypeError(what)


def gen_code(gen: ArrayLike) -> np.ndarray | int:
    """Code (index into ``GENERATIONS``) of a generation given as label(s) or number(s) 1..7."""
    # fast paths: an integer generation number, or an integer column of them in range
    if isinstance(gen, (int, np.integer)) and not isinstance(gen, bool) and 1 <= gen <= len(GENERATIONS):
        return int(gen) - 1
    if type(gen) is np.ndarray and gen.dtype.kind in "iu" and gen.ndim and gen.size:
        if 1 <= gen.min() and gen.max() <= len(GENERATIONS):
            return gen.astype(np.int64) - 1
    try:
        return _label_codes(gen, _GEN_ALIASES, GENERATIONS + tuple(CXL_VERSIONS), "PCIe/CXL generation")
    except TypeError:
        pass
    arr = np.asarray(gen, dtype=np.float64)
    codes = arr.astype(np.int64)
    if arr.ndim == 0:
        ok = codes == arr and 1 <= codes <= len(GENERATIONS)
    else:
        ok = arr.size == 0 or (codes.min() >= 1 and codes.max() <= len(GENERATIONS) and np.array_equal(codes, arr))
    if not ok:
        bad_mask = (arr != np.round(arr)) | (arr < 1) | (arr > len(GENERATIONS))
        bad = np.atleast_1d(arr)[np.atleast_1d(bad_mask)].flat[0]
        raise DseError(
            f"PCIe generation {bad:g} is not allowed; give 1..{len(GENERATIONS)} or a label "
            f"({allowed_list(GENERATIONS + tuple(CXL_VERSIONS))})"
        )
    codes = codes - 1
    return int(codes) if codes.ndim == 0 else codes


#: The flit-mode codes (indices into :data:`FLIT_MODES`).
_FLIT_CODES = range(len(FLIT_MODES))


def flit_code(flit_mode: ArrayLike) -> np.ndarray | int:
    """Code (index into ``FLIT_MODES``) of flit mode label(s), codes 0..2, or sizes 68 / 256."""
    # fast paths: an integer code, or an integer column of codes
    if isinstance(flit_mode, (int, np.integer)) and not isinstance(flit_mode, bool) and int(flit_mode) in _FLIT_CODES:
        return int(flit_mode)
    if type(flit_mode) is np.ndarray and flit_mode.dtype.kind in "iu" and flit_mode.ndim and flit_mode.size:
        if flit_mode.min() >= _FLIT_CODES[0] and flit_mode.max() <= _FLIT_CODES[-1]:
            return flit_mode
    try:
        return _label_codes(flit_mode, _FLIT_ALIASES, FLIT_MODES, "CXL flit mode")
    except TypeError:
        pass
    arr = np.asarray(flit_mode)
    if arr.dtype.kind in "iu" and arr.ndim and arr.size and 0 <= arr.min() and arr.max() <= 2:
        return arr  # codes already
    arr = arr.astype(np.float64)
    codes = np.where(arr == 68, 0.0, np.where(arr == 256, 1.0, arr))
    ok = (codes == 0) | (codes == 1) | (codes == 2)
    if not np.all(ok):
        bad = np.atleast_1d(arr)[~np.atleast_1d(ok)].flat[0]
        raise DseError(f"CXL flit mode {bad:g} is not allowed; allowed: {allowed_list(FLIT_MODES)} (or 68, 256, codes 0-2)")
    codes = codes.astype(np.int64)
    return int(codes) if codes.ndim == 0 else codes


def default_flit_mode(gen: ArrayLike) -> np.ndarray | int:
    """68 B flit up to 32 GT/s (CXL 1.1/2.0), 256 B flit at 64 GT/s and above (CXL 3.x)."""
    g = gen_code(gen)
    out = np.where(GEN_FLIT_MODE[g], 1, 0)
    return int(out) if np.ndim(out) == 0 else out


def _check_flit_gen(f: ArrayLike, g: ArrayLike) -> None:
    if np.ndim(f) == 0 and f != 0:
        return
    bad = (np.asarray(f) == 0) & np.take(GEN_FLIT_MODE, g)
    if np.asarray(bad).any():
        raise DseError(
            "the 68B flit runs only up to 32 GT/s (PCIe 5.0 / CXL 2.0); CXL 3.x at 64 GT/s and "
            "above uses the 256B or 256B_lo flit (CXL 3.0 §6.2.3)"
        )


def _lanes(lanes: ArrayLike) -> np.ndarray:
    arr = np.asarray(lanes, dtype=np.float64)
    if (arr.min() if arr.ndim else arr) <= 0:
        raise DseError(f"lanes must be positive (x1, x2, x4, x8, x16); got {np.atleast_1d(arr)[np.atleast_1d(arr) <= 0].flat[0]:g}")
    return arr


# ============================================================================= parameter group
#: Generations a model's ``link_gen`` parameter offers unless it restricts them
#: (``params(gens=...)``): the PHYs CXL devices run on -- PCIe 4.0 (a CXL 1.1/2.0 device on
#: an older host), 5.0 (CXL 1.1/2.0) and 6.0 (CXL 3.x).  The one list models share.
PARAM_GENS: tuple[str, ...] = ("pcie4", "pcie5", "pcie6")
#: Widths a model's ``lanes`` parameter offers by default (x4/x8/x16 E3.S, AIC and CEM links).
PARAM_LANES: tuple[int, ...] = (4, 8, 16)
#: The group's own defaults with their sources; a model that sets another default gives its own.
PARAM_DEFAULTS: dict[str, tuple[Any, str]] = {
    "link_gen": ("pcie5", "CXL 1.1/2.0 devices run on the PCIe 5.0 PHY, 32 GT/s (CXL 2.0 spec; link block)"),
    "lanes": (8, "x8 is the common E3.S/AIC CXL device width (Micron CZ120, Samsung CMM-D; link block)"),
    "flit_mode": ("68B", "CXL 1.1/2.0 use the 68 B flit (CXL 2.0 spec §4.2; link block)"),
}
#: What each parameter of the group means (``dse describe``).
PARAM_DOCS: dict[str, str] = {
    "link_gen": "PCIe generation of the link's PHY (CXL 1.1/2.0 run on PCIe 5.0, CXL 3.x on PCIe 6.0)",
    "lanes": "link width in lanes",
    "flit_mode": "CXL.mem flit: 68B (CXL 1.1/2.0; not at PCIe 6), 256B or latency-optimized 256B_lo (CXL 3.x)",
}


def params(prefix: str = "", *, gens: Sequence[str] | None = None, lanes: Sequence[int] = PARAM_LANES,
           default_gen: str = PARAM_DEFAULTS["link_gen"][0], default_lanes: int = PARAM_DEFAULTS["lanes"][0],
           flit_mode: str | None = None, source: str | Mapping[str, str] | None = None) -> tuple[Param, ...]:
    """The link's parameters for a model: ``<prefix>link_gen`` (``gens``, a subset of
    :data:`GENERATIONS`, default :data:`PARAM_GENS`), ``<prefix>lanes`` and, where
    ``flit_mode`` names a default flit, ``<prefix>flit_mode`` (:data:`FLIT_MODES`).
    ``source`` is one source for all or one per unprefixed name; a default other than the
    block's (:data:`PARAM_DEFAULTS`) must come with its own source."""
    gens = PARAM_GENS if gens is None else tuple(gens)
    unknown = [g for g in gens if g not in GENERATIONS]
    if unknown or not gens:
        raise ValueError(f"link.params: generations {unknown or gens!r} not in {GENERATIONS}")
    fields = {"link_gen": (default_gen, gens), "lanes": (default_lanes, tuple(lanes))}
    if flit_mode is not None:
        fields["flit_mode"] = (flit_mode, FLIT_MODES)
    out = []
    for key, (default, choices) in fields.items():
        out.append(Param(prefix + key, default, _group_source(key, default, source), choices=choices,
                         doc=PARAM_DOCS[key]))
    return tuple(out)


def _group_source(key: str, default: Any, source: str | Mapping[str, str] | None) -> str:
    """A group parameter's source: the model's, else the block's for the block's own default."""
    given = source if isinstance(source, str) else (source or {}).get(key)
    if given:
        return given
    block_default, block_source = PARAM_DEFAULTS[key]
    if default != block_default:
        raise ValueError(f"link.params: {key} default {default!r} differs from the block's; give its source")
    return block_source


@dataclass(frozen=True)
class LinkSpec:
    """A batch's link, as columns of length ``Batch.n`` (:func:`from_batch`)."""

    #: Code of the model's ``link_gen`` choice (index into the ``gens`` it declared).
    gen_index: np.ndarray
    #: PCIe generation number (5 = PCIe 5.0): what this block's functions take as ``gen``.
    gen: np.ndarray
    #: Lanes (int64).
    lanes: np.ndarray
    #: Flit code (index into :data:`FLIT_MODES`), None without ``flit_mode``.  Where the mode
    #: does not exist at the generation (``flit_exists`` False) it is 1 (256B), so the block's
    #: functions evaluate; the model declares those points infeasible (:meth:`infeasible`).
    flit: np.ndarray | None
    #: False where the chosen flit mode does not exist at the generation (68 B at PCIe 6+).
    flit_exists: np.ndarray

    def infeasible(self) -> dict[str, np.ndarray]:
        """``{reason: mask}`` for a model's ``evaluate``: flit modes the generation lacks."""
        return {NO_68B_FLIT_REASON: ~self.flit_exists}


def from_batch(p: Batch, prefix: str = "", *, columns: bool = True) -> LinkSpec:
    """The link of a model's batch, from the parameters :func:`params` declared with ``prefix``.

    ``columns=False`` leaves a field that only scalar parameters feed as a scalar (a single
    design point) instead of broadcasting it to ``Batch.n``: numpy scalars keep a model's
    per-point arithmetic cheap, and the values are the same."""
    if columns:
        n = (p.n,)
        gen = np.broadcast_to(p.pick(prefix + "link_gen", _GEN_NUMBERS), n)
        lanes = np.broadcast_to(np.asarray(p[prefix + "lanes"]).astype(np.int64), n)
        if prefix + "flit_mode" not in p:
            return LinkSpec(np.broadcast_to(p[prefix + "link_gen"], n), gen, lanes, None, np.ones(n, dtype=bool))
        flit = np.broadcast_to(np.asarray(p[prefix + "flit_mode"], dtype=np.int64), n)  # codes into FLIT_MODES
        exists = flit_exists(gen, flit)
        return LinkSpec(np.broadcast_to(p[prefix + "link_gen"], n), gen, lanes, np.where(exists, flit, 1), exists)
    gen = p.pick(prefix + "link_gen", _GEN_NUMBERS)
    lanes = np.asarray(p[prefix + "lanes"]).astype(np.int64)
    if prefix + "flit_mode" not in p:
        flit, exists = None, np.True_
    else:
        flit = np.asarray(p[prefix + "flit_mode"], dtype=np.int64)
        exists = flit_exists(gen, flit)
        flit = np.where(exists, flit, 1)
    scalar = lambda a: a[()] if type(a) is np.ndarray and a.ndim == 0 else a  # noqa: E731
    return LinkSpec(p[prefix + "link_gen"], scalar(gen), scalar(lanes), None if flit is None else scalar(flit), scalar(np.asarray(exists)))


#: Generation number (5 = PCIe 5.0) of each generation label, for :func:`from_batch`.
_GEN_NUMBERS = {g: i + 1 for i, g in enumerate(GENERATIONS)}


def flit_exists(gen: ArrayLike, flit_mode: ArrayLike) -> np.ndarray:
    """True where the flit mode exists at the generation: every mode up to 32 GT/s; PCIe 6.0
    and later (PAM4 + FEC flit mode) carry only the 256 B flits (CXL 3.0 §6.2.3)."""
    g, f = gen_code(gen), flit_code(flit_mode)
    return ~((np.asarray(f) == 0) & np.take(GEN_FLIT_MODE, g))


# ============================================================================= bandwidth
def transfer_rate_gts(gen: ArrayLike) -> np.ndarray:
    """Transfer rate per lane in GT/s."""
    return GEN_TRANSFER_GTS[gen_code(gen)]


def raw_bw_gbps(gen: ArrayLike, lanes: ArrayLike) -> np.ndarray:
    """Bandwidth per direction in GB/s after line encoding, before TLP / flit overheads.

    ``GT/s x lanes x encoding / 8``: PCIe 3.0 x16 = 15.75, PCIe 5.0 x16 = 63.0,
    PCIe 6.0 x16 = 128 GB/s.
    """
    return np.take(GEN_RAW_GBPS_PER_LANE, gen_code(gen)) * _lanes(lanes)


def serialization_ns(nbytes: ArrayLike, gen: ArrayLike, lanes: ArrayLike) -> np.ndarray:
    """Time (ns) to transmit ``nbytes`` wire bytes on one direction of the link."""
    return np.asarray(nbytes, dtype=np.float64) / raw_bw_gbps(gen, lanes)


def pcie_tlp_efficiency(
    transfer_b: ArrayLike,
    gen: ArrayLike = "pcie4",
    mps_b: ArrayLike = PCIE_MPS_B,
    header_b: ArrayLike = PCIE_TLP_HEADER_B,
) -> np.ndarray:
    """Payload fraction of wire bytes for a ``transfer_b``-byte DMA split into TLPs of at
    most ``mps_b`` bytes.  Non-flit generations pay header + 6 B DLL + framing per TLP;
    flit-mode generations (6.0+) pay the header per TLP and 20 of every 256 flit bytes.
    DLLPs (ACK / flow-control updates) are not counted (a few % more, pcie-bench §3)."""
    g = gen_code(gen)
    size = np.asarray(transfer_b, dtype=np.float64)
    if np.any(size <= 0):
        raise DseError("transfer_b must be positive")
    n_tlp = np.ceil(size / np.asarray(mps_b, dtype=np.float64))
    hdr = np.asarray(header_b, dtype=np.float64)
    flit = GEN_FLIT_MODE[g]
    per_tlp = np.where(flit, hdr, hdr + PCIE_DLL_B + PCIE_FRAMING_B[g])
    eff = size / (size + n_tlp * per_tlp)
    return np.where(flit, eff * PCIE_FLIT_TLP_B / PCIE_FLIT_B, eff)


def pcie_dma_bw_gbps(
    gen: ArrayLike,
    lanes: ArrayLike,
    transfer_b: ArrayLike = 4096.0,
    mps_b: ArrayLike = PCIE_MPS_B,
    header_b: ArrayLike = PCIE_TLP_HEADER_B,
) -> np.ndarray:
    """Payload bandwidth (GB/s, one direction) of DMA transfers of ``transfer_b`` bytes."""
    return raw_bw_gbps(gen, lanes) * pcie_tlp_efficiency(transfer_b, gen, mps_b, header_b)


def tlp_wire_bytes(payload_b: ArrayLike, lanes: ArrayLike, tlp_payload_b: ArrayLike,
                   tlp_overhead_b: ArrayLike) -> np.ndarray:
    """Wire bytes of one message of ``payload_b`` bytes split into TLPs of at most
    ``tlp_payload_b`` bytes with a fixed ``tlp_overhead_b`` (header, DLL and framing) each,
    striped over ``lanes`` (every lane carries whole bytes: rounded up to a multiple of
    the lanes).  The fixed-overhead form of :func:`pcie_tlp_efficiency` that MQSim's PCIe
    link uses (128-B TLPs, 28 B each; the flash block); 0 B of payload is 0 B."""
    p = np.asarray(payload_b, dtype=np.float64)
    mps = np.asarray(tlp_payload_b, dtype=np.float64)
    ovh = np.asarray(tlp_overhead_b, dtype=np.float64)
    full = np.floor(p / mps)
    rem = p - full * mps
    wire = full * (mps + ovh) + np.where(rem > 0, rem + ovh, 0.0)
    n_lanes = np.asarray(lanes, dtype=np.float64)
    return np.ceil(wire / n_lanes) * n_lanes


# ============================================================================= CXL.mem flits
# Per-mode constants of the closed form below (index = flit-mode code).
_INV_ADS = np.divide(1.0, FLIT_ALL_DATA_SLOTS, out=np.zeros(3), where=FLIT_ALL_DATA_SLOTS > 0)
_HAS_AD = FLIT_ALL_DATA_SLOTS > 0
# M2S: Req and RwD headers, G-slot equivalents per message and H-slot capacity ratio
_M2S_KREQ = 1.0 / FLIT_HDR_PER_G[:, MSG_REQ]
_M2S_KRWD = 1.0 / FLIT_HDR_PER_G[:, MSG_RWD]
_M2S_RREQ = FLIT_HDR_PER_H[:, MSG_REQ] / FLIT_HDR_PER_G[:, MSG_REQ]
_M2S_RRWD = FLIT_HDR_PER_H[:, MSG_RWD] / FLIT_HDR_PER_G[:, MSG_RWD]
# S2M: DRS and NDR headers
_S2M_KDRS = 1.0 / FLIT_HDR_PER_G[:, MSG_DRS]
_S2M_KNDR = 1.0 / FLIT_HDR_PER_G[:, MSG_NDR]
_S2M_RDRS = FLIT_HDR_PER_H[:, MSG_DRS] / FLIT_HDR_PER_G[:, MSG_DRS]
_S2M_RNDR = FLIT_HDR_PER_H[:, MSG_NDR] / FLIT_HDR_PER_G[:, MSG_NDR]


def _flits_reference(f: Any, data_lines: np.ndarray, h1: np.ndarray, h2: np.ndarray, k1: np.ndarray, k2: np.ndarray, r1: np.ndarray, r2: np.ndarray) -> np.ndarray:
    """Average flits one direction needs per request (steady-state slot packing).

    Per request the direction carries ``data_lines`` 64 B lines and ``h1``, ``h2``
    messages of its two header types; a header costs ``k`` G-slots (1 / messages per
    G-slot) and the H-slot(s) of every protocol flit hold ``r`` G-slots' worth of that
    type.  Headers fill the H-slot(s) first, then G-slots; data fills G-slots or, where
    the mode has them, all-data flits (then protocol flits carry only headers).  This is
    an upper bound on efficiency: it ignores credit returns, data-rollover limits and
    idle flits.
    """
    g = FLIT_G_SLOTS[f]
    hg1 = h1 * k1[f]
    hg2 = h2 * k2[f]
    hg = hg1 + hg2  # header load in G-slot equivalents (> 0: every request has a header)
    ch = (hg1 * r1[f] + hg2 * r2[f]) / hg  # H-slot capacity in G-slot equivalents
    data_slots = SLOTS_PER_LINE * data_lines
    gch = g + ch
    f_mixed = np.maximum(data_slots / g, (data_slots + hg) / gch)
    f_alldata = data_slots * _INV_ADS[f] + hg / gch
    return np.where(_HAS_AD[f], np.minimum(f_mixed, f_alldata), f_mixed)


# The M2S headers (Req, RwD) take one slot each in every mode: the closed form below uses it.
if not (np.all(FLIT_HDR_PER_G[:, [MSG_REQ, MSG_RWD]] == 1) and np.all(FLIT_HDR_PER_H[:, [MSG_REQ, MSG_RWD]] == 1)):
    raise RuntimeError("cxl_mem_direction_flits assumes one M2S header per slot; update its closed form")


def cxl_mem_direction_flits(flit_mode: ArrayLike, read_frac: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Flits per 64 B CXL.mem request in (M2S, S2M): :func:`_flits_reference` in closed form.

    M2S (host to device) carries read requests (MemRd) and write requests with their
    data (RwD); S2M (device to host) carries read data (DRS) and write completions (NDR).
    With ``w = 1 - r``: M2S has ``4w`` data slots and one header per request (1 slot,
    H-slot holds one); S2M has ``4r`` data slots and ``hg = r k_DRS + w k_NDR`` header
    slots, of which the H-slot(s) absorb ``(r k_DRS rho_DRS + w k_NDR rho_NDR) / hg`` per flit.
    """
    f = flit_code(flit_mode)
    r = np.asarray(read_frac, dtype=np.float64)
    if r.ndim == 0:
        if not 0.0 <= r <= 1.0:
            raise DseError("read_frac must be within [0, 1]")
    elif r.min() < 0.0 or r.max() > 1.0:
        raise DseError("read_frac must be within [0, 1]")
    if np.ndim(f) == 0:
        g, inv_ads, has_ad = FLIT_G_SLOTS[f], _INV_ADS[f], bool(_HAS_AD[f])
        kd, kn, rd, rn = _S2M_KDRS[f], _S2M_KNDR[f], _S2M_RDRS[f], _S2M_RNDR[f]
    else:
        take = lambda t: np.take(t, f)  # noqa: E731
        g, inv_ads, has_ad = take(FLIT_G_SLOTS), take(_INV_ADS), take(_HAS_AD)
        kd, kn, rd, rn = take(_S2M_KDRS), take(_S2M_KNDR), take(_S2M_RDRS), take(_S2M_RNDR)
    # M2S: data 4w slots, one 1-slot header per request, H-slot holds one
    ds = 4.0 - 4.0 * r
    g1 = g + 1.0
    m2s = np.maximum(ds / g, (ds + 1.0) / g1)
    # S2M: data 4r slots; header load hg (slots) and H-slot absorption c_h = chn / hg
    dr = 4.0 * r
    hg = kn + r * (kd - kn)
    chn = kn * rn + r * (kd * rd - kn * rn)
    den = g * hg + chn  # (g + c_h) hg
    s2m = np.maximum(dr / g, (dr + hg) * hg / den)
    if np.ndim(has_ad) == 0:
        if has_ad:  # all-data flits: protocol flits carry headers only
            m2s = np.minimum(m2s, ds * inv_ads + 1.0 / g1)
            s2m = np.minimum(s2m, dr * inv_ads + hg * hg / den)
    else:
        m2s = np.where(has_ad, np.minimum(m2s, ds * inv_ads + 1.0 / g1), m2s)
        s2m = np.where(has_ad, np.minimum(s2m, dr * inv_ads + hg * hg / den), s2m)
    return m2s, s2m


def cxl_mem_direction_bytes(flit_mode: ArrayLike, read_frac: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Wire bytes per 64 B CXL.mem request in (M2S, S2M) for a read fraction ``read_frac``."""
    m2s, s2m = cxl_mem_direction_flits(flit_mode, read_frac)
    flit_b = np.take(FLIT_WIRE_B, flit_code(flit_mode))
    return m2s * flit_b, s2m * flit_b


def cxl_mem_efficiency(flit_mode: ArrayLike, read_frac: ArrayLike = 1.0) -> np.ndarray:
    """CXL.mem data bytes (reads + writes) per raw wire byte of one direction.

    Multiply by :func:`raw_bw_gbps` for the sustainable CXL.mem bandwidth.  Read-only:
    68B 0.863, 256B 0.846, 256B_lo 0.812; write-only: 0.753, 0.750, 0.700; mixes use
    both directions and exceed 1 (68B at 50 % reads: 1.25).
    """
    return chunked(_cxl_mem_efficiency, flit_code(flit_mode), np.asarray(read_frac, dtype=np.float64))


def _cxl_mem_efficiency(f: Any, r: np.ndarray) -> np.ndarray:
    m2s, s2m = cxl_mem_direction_flits(f, r)
    return (LINE_B / np.take(FLIT_WIRE_B, f)) / np.maximum(m2s, s2m)


def cxl_mem_bw_gbps(
    gen: ArrayLike, lanes: ArrayLike, flit_mode: ArrayLike | None = None, read_frac: ArrayLike = 1.0
) -> np.ndarray:
    """Sustainable CXL.mem data bandwidth (GB/s, reads + writes) of a link.

    ``flit_mode`` defaults to 68B up to 32 GT/s and 256B above.  Slot-packing upper bound:
    real controllers reach less (CXL-DMSim, arXiv 2411.02282, measures an ASIC expander
    at 82-83 % of local DDR bandwidth).
    """
    g = gen_code(gen)
    f = default_flit_mode(g + 1) if flit_mode is None else flit_code(flit_mode)
    _check_flit_gen(f, g)
    return chunked(_cxl_mem_bw, g, _lanes(lanes), f, np.asarray(read_frac, dtype=np.float64))


def _cxl_mem_bw(g: Any, lanes: Any, f: Any, r: Any) -> np.ndarray:
    return np.take(GEN_RAW_GBPS_PER_LANE, g) * lanes * _cxl_mem_efficiency(f, r)


def flit_serialization_ns(flit_mode: ArrayLike, gen: ArrayLike, lanes: ArrayLike) -> np.ndarray:
    """Time to receive the bytes a receiver must check before using a flit's first
    message: a 68 B flit, a 256 B flit, or the first 128 B half of a latency-optimized flit."""
    return serialization_ns(FLIT_CHECK_B[flit_code(flit_mode)], gen, lanes)


def cxl_round_trip_breakdown(
    gen: ArrayLike = "pcie5",
    lanes: ArrayLike = 8,
    flit_mode: ArrayLike | None = None,
    *,
    n_switches: ArrayLike = 0,
    n_retimers: ArrayLike = 0,
    port_ns: ArrayLike = CXL_PORT_NS,
    switch_ns: ArrayLike = CXL_SWITCH_NS,
    retimer_ns: ArrayLike = RETIMER_NS,
    fec_ns: ArrayLike = FEC_NS,
    wire_m: ArrayLike = CXL_WIRE_M,
    media_ns: ArrayLike = 0.0,
) -> dict[str, np.ndarray]:
    """Components (ns) of an unloaded 64 B CXL.mem read round trip.

    * ``ports``: host root port and device port, both directions (4 x ``port_ns``);
    * ``switches``: ``n_switches`` x 2 directions x ``switch_ns``;
    * ``retimers``: ``n_retimers`` x 2 directions x ``retimer_ns`` (``n_retimers`` counts
      retimers on the whole path, one way);
    * ``fec``: FEC decode at every receiver of a PAM4 (64 GT/s+) link;
    * ``serialization``: the request flit and the read-response bytes, received whole at
      every CRC-checking receiver (device, host and each switch: store-and-forward per flit);
    * ``flight``: ``wire_m`` metres each way at 5 ns/m;
    * ``media``: ``media_ns`` at the device (DRAM, controller), passed in by the caller.
    """
    terms, shape = _round_trip_terms(gen, lanes, flit_mode, n_switches, n_retimers, port_ns, switch_ns,
                                     retimer_ns, fec_ns, wire_m, media_ns)
    zero = np.zeros(shape)
    return {k: zero + v for k, v in zip(_ROUND_TRIP_PARTS, terms)}


#: The components of :func:`cxl_round_trip_breakdown`, in the order they are summed.
_ROUND_TRIP_PARTS = ("ports", "switches", "retimers", "fec", "serialization", "flight", "media")


def _round_trip_terms(gen: ArrayLike, lanes: ArrayLike, flit_mode: ArrayLike | None, n_switches: ArrayLike,
                      n_retimers: ArrayLike, port_ns: ArrayLike, switch_ns: ArrayLike, retimer_ns: ArrayLike,
                      fec_ns: ArrayLike, wire_m: ArrayLike, media_ns: ArrayLike) -> tuple[list, tuple[int, ...]]:
    """The round trip's components (:data:`_ROUND_TRIP_PARTS` order) unbroadcast, and the
    shape of the generation / flit / switch / retimer arguments (the breakdown's shape)."""
    g = gen_code(gen)
    f = default_flit_mode(gen) if flit_mode is None else flit_code(flit_mode)
    _check_flit_gen(f, g)
    sw = np.asarray(n_switches, dtype=np.float64)
    rt = np.asarray(n_retimers, dtype=np.float64)
    if (sw < 0).any() or (rt < 0).any():
        raise DseError("n_switches and n_retimers must be >= 0")
    receivers = sw + 1.0  # per direction
    bw = np.take(GEN_RAW_GBPS_PER_LANE, g) * _lanes(lanes)  # raw_bw_gbps
    req_b = FLIT_CHECK_B[f]
    resp_b = FLIT_READ_RESP_B[f]
    terms = [
        4.0 * np.asarray(port_ns, dtype=np.float64),
        2.0 * sw * np.asarray(switch_ns, dtype=np.float64),
        2.0 * rt * np.asarray(retimer_ns, dtype=np.float64),
        np.where(GEN_FLIT_MODE[g], 2.0 * receivers * np.asarray(fec_ns, dtype=np.float64), 0.0),
        receivers * (req_b + resp_b) / bw,
        2.0 * np.asarray(wire_m, dtype=np.float64) * PROPAGATION_NS_PER_M,
        np.asarray(media_ns, dtype=np.float64),
    ]
    return terms, np.broadcast_shapes(np.shape(g), np.shape(f), sw.shape, rt.shape)


def cxl_round_trip_ns(
    gen: ArrayLike = "pcie5",
    lanes: ArrayLike = 8,
    flit_mode: ArrayLike | None = None,
    *,
    n_switches: ArrayLike = 0,
    n_retimers: ArrayLike = 0,
    port_ns: ArrayLike = CXL_PORT_NS,
    switch_ns: ArrayLike = CXL_SWITCH_NS,
    retimer_ns: ArrayLike = RETIMER_NS,
    fec_ns: ArrayLike = FEC_NS,
    wire_m: ArrayLike = CXL_WIRE_M,
    media_ns: ArrayLike = 0.0,
) -> np.ndarray:
    """Unloaded round trip (ns) of a 64 B CXL.mem read; see :func:`cxl_round_trip_breakdown`.

    With the defaults, a direct-attached PCIe 5.0 x8 device adds ~89 ns (Pond: 70-90 ns)
    and a switch with two retimers adds ~121 ns more (Pond: 115 ns).  The components are
    summed in the breakdown's order without broadcasting each first (same values)."""
    terms, shape = _round_trip_terms(gen, lanes, flit_mode, n_switches, n_retimers, port_ns, switch_ns,
                                     retimer_ns, fec_ns, wire_m, media_ns)
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    if np.shape(total) != shape:  # the breakdown's shape wins where no term carries it
        total = total + np.zeros(shape)
    return total


# ============================================================================= NVMe
def _pick(value: Any, labels: tuple[str, ...], what: str) -> np.ndarray | int:
    aliases = {_norm(l): i for i, l in enumerate(labels)}
    try:
        return _label_codes(value, aliases, labels, what)
    except TypeError:
        arr = np.asarray(value)
        if arr.dtype.kind not in "iu" or arr.size and (arr.min() < 0 or arr.max() >= len(labels)):
            raise DseError(f"{what} must be one of {allowed_list(labels)} or a code 0..{len(labels) - 1}") from None
        return arr


def nvme_command_breakdown(
    io_b: ArrayLike = 4096.0,
    gen: ArrayLike = "pcie4",
    lanes: ArrayLike = 4,
    *,
    write: ArrayLike = False,
    completion: ArrayLike = "interrupt",
    stack: ArrayLike = "kernel_irq",
    page_b: ArrayLike = NVME_PAGE_B,
    dma_read_rt_ns: ArrayLike = PCIE_DMA_READ_RT_NS,
    posted_write_ns: ArrayLike = PCIE_POSTED_WRITE_NS,
    mps_b: ArrayLike = PCIE_MPS_B,
) -> dict[str, np.ndarray]:
    """Components (ns) of one NVMe command's protocol overhead, media time excluded.

    * ``sw_submit``: host stack down to the doorbell (``stack``);
    * ``doorbell``: SQ tail doorbell MMIO write reaching the controller;
    * ``sqe_fetch``: controller DMA-reads the 64 B SQE;
    * ``prp_fetch``: one more DMA read for the PRP list when the I/O spans more than two
      memory pages (PRP1 + PRP2 suffice up to two);
    * ``data``: data DMA: reads (device to host) are posted writes, pipelined (one-way +
      serialization); writes (host to device) are DMA reads (round trip + serialization);
    * ``cqe``: 16 B CQE posted write;
    * ``completion``: MSI-X interrupt delivery and handler, or poll detection;
    * ``sw_complete``: host stack from completion to the application.
    """
    size = np.asarray(io_b, dtype=np.float64)
    if np.any(size <= 0):
        raise DseError("io_b must be positive")
    is_write = np.asarray(write, dtype=bool)
    comp = _pick(completion, NVME_COMPLETION_MODES, "NVMe completion mode")
    stk = _pick(stack, NVME_STACKS, "NVMe host stack")
    pages = np.ceil(size / np.asarray(page_b, dtype=np.float64))
    rt = np.asarray(dma_read_rt_ns, dtype=np.float64)
    ow = np.asarray(posted_write_ns, dtype=np.float64)
    xfer = size / pcie_dma_bw_gbps(gen, lanes, size, mps_b)
    shape = np.broadcast_shapes(size.shape, is_write.shape, np.shape(comp), np.shape(stk), rt.shape, ow.shape, np.shape(xfer))
    zero = np.zeros(shape)
    return {
        "sw_submit": zero + NVME_STACK_SUBMIT_NS[stk],
        "doorbell": zero + ow,
        "sqe_fetch": zero + rt + serialization_ns(NVME_SQE_B, gen, lanes),
        "prp_fetch": zero + np.where(pages > 2, rt, 0.0),
        "data": zero + np.where(is_write, rt + xfer, ow + xfer),
        "cqe": zero + ow,
        "completion": zero + NVME_COMPLETION_NS[comp],
        "sw_complete": zero + NVME_STACK_COMPLETE_NS[stk],
    }


def nvme_command_overhead_ns(
    io_b: ArrayLike = 4096.0,
    gen: ArrayLike = "pcie4",
    lanes: ArrayLike = 4,
    *,
    write: ArrayLike = False,
    completion: ArrayLike = "interrupt",
    stack: ArrayLike = "kernel_irq",
    page_b: ArrayLike = NVME_PAGE_B,
    dma_read_rt_ns: ArrayLike = PCIE_DMA_READ_RT_NS,
    posted_write_ns: ArrayLike = PCIE_POSTED_WRITE_NS,
    mps_b: ArrayLike = PCIE_MPS_B,
) -> np.ndarray:
    """Total NVMe protocol + host-stack time (ns) of one command; see :func:`nvme_command_breakdown`."""

    def total(io_b: Any, gen: Any, lanes: Any, write: Any, comp: Any, stk: Any, page_b: Any, rt: Any, ow: Any, mps: Any) -> Any:
        parts = nvme_command_breakdown(
            io_b, gen, lanes, write=write, completion=comp, stack=stk, page_b=page_b,
            dma_read_rt_ns=rt, posted_write_ns=ow, mps_b=mps,
        )
        return sum(parts.values())

    return chunked(
        total, np.asarray(io_b, dtype=np.float64), np.asarray(gen_code(gen)) + 1, lanes, np.asarray(write, dtype=bool),
        _pick(completion, NVME_COMPLETION_MODES, "NVMe completion mode"), _pick(stack, NVME_STACKS, "NVMe host stack"),
        page_b, dma_read_rt_ns, posted_write_ns, mps_b,
    )


# ============================================================================= networks
def wire_time_ns(nbytes: ArrayLike, link_gbit_s: ArrayLike) -> np.ndarray:
    """Serialization time (ns) of ``nbytes`` at ``link_gbit_s`` (1e9 bit/s)."""
    rate = np.asarray(link_gbit_s, dtype=np.float64)
    if np.any(rate <= 0):
        raise DseError("link_gbit_s must be positive")
    return np.asarray(nbytes, dtype=np.float64) * 8.0 / rate


RDMA_OPS: tuple[str, ...] = ("read", "write")


def rdma_round_trip_breakdown(
    nbytes: ArrayLike = 64.0,
    op: ArrayLike = "read",
    link_gbit_s: ArrayLike = 100.0,
    n_switches: ArrayLike = 1,
    *,
    fabric: ArrayLike = "infiniband",
    cable_m: ArrayLike = 3.0,
    gen: ArrayLike = "pcie4",
    lanes: ArrayLike = 16,
    nic_ns: ArrayLike = RDMA_NIC_NS,
    post_ns: ArrayLike = RDMA_POST_NS,
    poll_ns: ArrayLike = RDMA_POLL_NS,
    dma_read_rt_ns: ArrayLike = PCIE_DMA_READ_RT_NS,
    posted_write_ns: ArrayLike = PCIE_POSTED_WRITE_NS,
    switch_ns: ArrayLike | None = None,
    inline_max_b: ArrayLike = RDMA_INLINE_MAX_B,
) -> dict[str, np.ndarray]:
    """Components (ns) of a one-sided RDMA verbs operation, from post to polled completion.

    READ: post + doorbell, requester NIC TX, request on the wire, responder NIC RX, DMA read
    of the payload from responder memory (PCIe round trip), responder NIC TX, response on the
    wire, requester NIC RX, DMA write of payload and CQE (posted, pipelined), poll.  WRITE:
    the payload leaves with the request (inline up to ``inline_max_b``, else after a DMA
    read at the requester); the responder NIC hands it to PCIe as posted writes and
    returns the ACK without waiting for them, so the responder DMA is off the critical path.
    """
    size = np.asarray(nbytes, dtype=np.float64)
    if np.any(size < 0):
        raise DseError("nbytes must be >= 0")
    opc = _pick(op, RDMA_OPS, "RDMA operation")
    fab = _pick(fabric, FABRICS, "fabric")
    sw = np.asarray(n_switches, dtype=np.float64)
    sw_ns = FABRIC_SWITCH_NS[fab] if switch_ns is None else np.asarray(switch_ns, dtype=np.float64)
    hdr = FABRIC_HEADER_B[fab]
    is_read = np.asarray(opc) == 0
    pcie_xfer = size / pcie_dma_bw_gbps(gen, lanes, np.maximum(size, 1.0))
    req_wire = wire_time_ns(hdr + np.where(is_read, 0.0, size), link_gbit_s)
    resp_wire = wire_time_ns(hdr + np.where(is_read, size, 0.0), link_gbit_s)
    hops = sw + 1.0
    rt = np.asarray(dma_read_rt_ns, dtype=np.float64)
    ow = np.asarray(posted_write_ns, dtype=np.float64)
    nic = np.asarray(nic_ns, dtype=np.float64)
    parts = {
        "post": np.asarray(post_ns, dtype=np.float64) + ow,
        "nic": 4.0 * nic,
        "requester_dma": np.where(
            is_read,
            ow + pcie_xfer,  # payload + CQE posted writes
            np.where(size <= np.asarray(inline_max_b, dtype=np.float64), 0.0, rt + pcie_xfer) + ow,
        ),
        "responder_dma": np.where(is_read, rt + pcie_xfer, 0.0),
        # store-and-forward at every switch and the far NIC: serialization per hop
        "wire": hops * (req_wire + resp_wire),
        "switches": 2.0 * sw * sw_ns,
        "flight": 2.0 * np.asarray(cable_m, dtype=np.float64) * PROPAGATION_NS_PER_M,
        "poll": np.asarray(poll_ns, dtype=np.float64),
    }
    shape = np.broadcast_shapes(*(np.shape(v) for v in parts.values()))
    return {k: np.broadcast_to(v, shape).astype(np.float64) for k, v in parts.items()}


def rdma_round_trip_ns(
    nbytes: ArrayLike = 64.0,
    op: ArrayLike = "read",
    link_gbit_s: ArrayLike = 100.0,
    n_switches: ArrayLike = 1,
    **kwargs: Any,
) -> np.ndarray:
    """Latency (ns) of a one-sided RDMA READ/WRITE; see :func:`rdma_round_trip_breakdown`.
    Defaults (64 B READ, 100 Gb/s InfiniBand, one switch) give ~2.1 us."""
    opc = _pick(op, RDMA_OPS, "RDMA operation")
    fab = _pick(kwargs.pop("fabric", "infiniband"), FABRICS, "fabric")

    def total(nbytes: Any, opc: Any, link: Any, sw: Any, fab: Any) -> Any:
        return sum(rdma_round_trip_breakdown(nbytes, opc, link, sw, fabric=fab, **kwargs).values())

    return chunked(total, np.asarray(nbytes, dtype=np.float64), opc, link_gbit_s, n_switches, fab)


def tcp_round_trip_ns(
    nbytes: ArrayLike = 64.0,
    link_gbit_s: ArrayLike = 25.0,
    n_switches: ArrayLike = 1,
    *,
    reply_b: ArrayLike = 64.0,
    cable_m: ArrayLike = 3.0,
    stack_ns: ArrayLike = TCP_STACK_NS,
    nic_ns: ArrayLike = RDMA_NIC_NS,
    switch_ns: ArrayLike = FABRIC_SWITCH_NS[1],
) -> np.ndarray:
    """Request/response round trip (ns) over kernel TCP: ``nbytes`` out, ``reply_b`` back.

    Four stack traversals (send and receive on each host), four NIC traversals, segments of
    ``TCP_MSS_B`` with ``TCP_HEADER_B`` each, store-and-forward serialization per hop.
    """
    out_b = np.asarray(nbytes, dtype=np.float64)
    back_b = np.asarray(reply_b, dtype=np.float64)
    seg_out = np.maximum(np.ceil(out_b / TCP_MSS_B), 1.0)
    seg_back = np.maximum(np.ceil(back_b / TCP_MSS_B), 1.0)
    wire = wire_time_ns(out_b + seg_out * TCP_HEADER_B, link_gbit_s) + wire_time_ns(back_b + seg_back * TCP_HEADER_B, link_gbit_s)
    sw = np.asarray(n_switches, dtype=np.float64)
    return (
        4.0 * np.asarray(stack_ns, dtype=np.float64)
        + 4.0 * np.asarray(nic_ns, dtype=np.float64)
        + (sw + 1.0) * wire
        + 2.0 * sw * np.asarray(switch_ns, dtype=np.float64)
        + 2.0 * np.asarray(cable_m, dtype=np.float64) * PROPAGATION_NS_PER_M
    )


def nvmeof_overhead_ns(
    io_b: ArrayLike = 4096.0,
    transport: ArrayLike = "rdma",
    link_gbit_s: ArrayLike = 100.0,
    n_switches: ArrayLike = 1,
    *,
    write: ArrayLike = False,
    target_ns: ArrayLike | None = None,
    cable_m: ArrayLike = 3.0,
) -> np.ndarray:
    """Latency (ns) NVMe-oF adds over a local NVMe command: the fabric exchange of the
    64 B command capsule, the data and the 16 B response capsule, plus target software.

    RDMA: command SEND + data by RDMA WRITE (reads) or READ (writes) + response SEND, each
    priced like one-sided verbs.  TCP: one request/response exchange with the data in the
    PDU.  The local command itself (see :func:`nvme_command_overhead_ns`) and the media
    time are not included.
    """
    tr = _pick(transport, NVMEOF_TRANSPORTS, "NVMe-oF transport")
    size = np.asarray(io_b, dtype=np.float64)
    is_write = np.asarray(write, dtype=bool)
    tgt = NVMEOF_TARGET_NS[tr] if target_ns is None else np.asarray(target_ns, dtype=np.float64)
    # RDMA: capsule SEND ~ a 64 B WRITE, data transfer, response ~ a 16 B WRITE
    capsule = rdma_round_trip_ns(64.0, "write", link_gbit_s, n_switches, cable_m=cable_m)
    data = rdma_round_trip_ns(size, np.where(is_write, 0, 1), link_gbit_s, n_switches, cable_m=cable_m)
    resp = rdma_round_trip_ns(16.0, "write", link_gbit_s, n_switches, cable_m=cable_m)
    rdma = capsule + data + resp
    out_b = 72.0 + np.where(is_write, size, 0.0)  # command PDU (+ in-capsule data for writes)
    back_b = 24.0 + np.where(is_write, 0.0, size)  # response PDU (+ C2H data for reads)
    tcp = tcp_round_trip_ns(out_b, link_gbit_s, n_switches, reply_b=back_b, cable_m=cable_m)
    return np.where(np.asarray(tr) == 0, rdma, tcp) + tgt
