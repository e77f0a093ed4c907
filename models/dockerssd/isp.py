"""dockerssd-isp: end-to-end latency of a workload under six data-processing models
(article Fig. 4, L1013-1031).

    host      the program runs on the 3.8-GHz host; data crosses the host link
    pisp_r    programmable ISP (Willow-like): bare-metal code on the SSD; every OS service
              it needs is done by the host kernel (kernel-ctx) and carried by an RPC
    pisp_v    the same, carried by NVMe vendor commands (Biscuit-like)
    d_naive   container on a separate processor with full Linux; data copied between it
              and the controller complex
    d_fullos  container and firmware share the controller's cores under full Linux
    d_virtfw  DockerSSD: Linux replaced by virtual-FW (syscalls as function calls, lambda-FS
              resolves paths on the device, Ether-oN carries the network)

Each workload (Fig. 4a counts, ``workloads.csv``) costs six additive terms (L1017,
digest M1):

    network    TCP packets x stack cost (host Linux, device Linux, or the virtual-FW
               network handler + one Ether-oN NVMe frame command; P.ISP-R adds an RPC
               message per remoted OS service)
    kernel_ctx P.ISP only: every syscall of the offloaded code is serviced by the host
               kernel (context switch + transport)
    lba_set    P.ISP only: every newly opened file costs an LBA-list handshake (L1013)
    storage    I/Os x (block layer + firmware) + bytes / bandwidth: the flash back end
               (flash block), behind the host link for the host (link block); D-Naive adds
               the inter-complex copy
    system     syscalls, path walks, file opens and the kernel-to-user copy of I/O data on
               Linux (host or device clock); virtual-FW: function-call syscalls and
               lambda-FS lookups
    compute    the program's own work: the host's share of the Fig. 4a time on the article's
               hardware, its core part slowed by 3.8/2.2 on the device (Amdahl's law across
               core counts), its off-chip memory stalls not

Software time (the program's and Linux's) is counted in microseconds of the 3.8-GHz
reference host and split as a CPI stack (the memssd block's ``stall_time_ns`` form): the
core's share (``1 - mem_stall_frac``) scales with the clock ratio (and ``dev_ipc_ratio``),
the off-chip memory stalls (``mem_stall_frac``) are DRAM latency in ns, the same DDR4 on
both sides, and do not.  The Fig. 4a times are taken as the host's on the article's
hardware; the program's compute is what they leave after the host's other terms there, so
the knobs change every design's time but not the work.  Four unit costs the article gives
no value for are fitted to its per-mechanism attributions (``calibration.py``): the OS cost scale, the kernel-ctx
and LBA-set handshakes and the D-Naive copy bandwidth.

System (kv-object family): the family's operation is one storage I/O of the workload (Fig.
4a's I/O count: RocksDB gets and puts, nginx/vsftpd file reads and writes, the scans' and
lookups' reads), done at the rate the design runs the workload: ``work_per_s`` = I/Os /
latency, ``op_latency_us`` = latency / I/Os.  ``size_from = "value_b"`` re-cuts the
workload's bytes into I/Os of ``value_b`` each (more, smaller I/Os cost more block-layer and
firmware time and a smaller flash/link transfer size); the program's own work stays the
article's.  The boundary is one host server (hardware.py) with one 400 GB SSD, a
DockerSSD (cores, DRAM) for the in-storage designs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import BITS_PER_BYTE, GB, J_PER_PJ, NS_PER_US, US_PER_S
from models.blocks import link
from models.blocks.calibration import per_calibration
from models.blocks.numeric import first_match, where
from models.dockerssd import hardware as hw

DESIGNS = ("host", "pisp_r", "pisp_v", "d_naive", "d_fullos", "d_virtfw")
WL = hw.isp_workloads()
WORKLOADS = WL["labels"]
HOST_LINKS = ("pcie3", "pcie4", "pcie5")
#: Lanes of the SSD's host link.  Assumption: a x4 NVMe SSD.
HOST_LANES = 4
#: The hardware the Fig. 4a times were taken on (the reference for the workloads' compute):
#: the 3.8-GHz host (L1007) with the digest's default core count, the SSD's PCIe 3.0 x4 link
#: (assumption, see host_link) and the 48-die MLC flash (flash block).
REF_CLOCK_GHZ = hw.HOST_CLOCK_GHZ
REF_HOST_CORES = 6
REF_HOST_LINK = "pcie3"

# ----------------------------------------------------------------------------- Linux unit costs
# Host microseconds at 3.8 GHz, before the fitted os_cost_scale.
#: Syscall entry/exit plus the VFS work of a typical file syscall.  Assumption: LEBench-class
#: measurements of small read/write/stat syscalls on mitigated kernels (Ren et al., SOSP'19).
SYSCALL_US = 0.5
#: One path walk (dentry lookups of a path).  Assumption: about two syscalls' worth.
PATHWALK_US = 1.0
#: One file open beyond its path walk (file object, permission checks).  Assumption.
FILE_OPEN_US = 2.0
#: TCP/IP stack per packet (send or receive path): link block TCP_STACK_NS.
TCP_PACKET_US = link.TCP_STACK_NS / NS_PER_US
#: Block layer + NVMe driver + interrupt per I/O (link block, kernel_irq stack: submit,
#: complete and interrupt delivery).
BLOCK_IO_US = float(link.NVME_STACK_SUBMIT_NS[0] + link.NVME_STACK_COMPLETE_NS[0] + link.NVME_COMPLETION_NS[0]) / NS_PER_US
#: One Ether-oN frame: an NVMe vendor command carrying a 1.5-KB Ethernet frame (link block:
#: doorbell, SQE fetch, data, CQE, interrupt; no block layer).
ETHERON_FRAME_B = 1500.0
#: Kernel-to-user copy of I/O data, host cycles per byte.  Assumption: single-core memcpy
#: near 9.5 GB/s at 3.8 GHz.
COPY_CYCLES_PER_BYTE = 0.4
#: Firmware cycles per I/O on the SSD (FTL lookup, NVMe/queue handling).  Assumption.
FW_IO_CYCLES = 2000.0
#: Cycles of a virtual-FW syscall: a function-call wrapper (L907).  Assumption: 100 cycles.
VFW_SYSCALL_CYCLES = 100.0
#: Share of Linux's path-walk, open and TCP work that lambda-FS and the virtual-FW network
#: handler still do (no mode switches, no generic VFS/socket layers).  Assumption.
VFW_SERVICE_FRAC = 0.5
#: Device DRAM latency over the host's, per off-chip miss.  Both are DDR4 (hardware.py: the
#: host's DDR4-3200 channels, the SSD's x32 DDR4 interface of the same part); a narrower
#: interface halves bandwidth but not the row/column timings, so a miss takes the same ns.
DEV_MEM_LATENCY_RATIO = 1.0
#: FW-pool kept out of the ISP memory, GB (L974: page-granular FW-pool / ISP-pool).
#: Assumption: mapping-table cache and buffers take 0.5 GB of the 2 GB.
FW_POOL_GB = 0.5
#: Infeasible points (``run_full``'s reasons).
NO_ISP_POOL = f"device DRAM at or below the firmware's share (dev_dram_gb <= {FW_POOL_GB:g}): no pool left for ISP"


def etheron_frame_us(gen: str = "pcie3") -> float:
    parts = link.nvme_command_breakdown(ETHERON_FRAME_B, gen, HOST_LANES, stack="none")
    return float(sum(parts.values())) / NS_PER_US


_FRAME_US = {g: etheron_frame_us(g) for g in HOST_LINKS}


def etheron_host_us(gen: str = "pcie3") -> float:
    """Host-core part of one Ether-oN frame (digest M2: the host driver rings the doorbell of a
    transmit-frame command and takes the interrupt of a receive-frame completion; link block)."""
    parts = link.nvme_command_breakdown(ETHERON_FRAME_B, gen, HOST_LANES, stack="none")
    return float(parts["doorbell"] + parts["completion"]) / NS_PER_US


_FRAME_HOST_US = {g: etheron_host_us(g) for g in HOST_LINKS}
_FLASH_PJ = hw.flash_read_pj_per_bit()


@per_calibration
def _reference_bandwidths() -> tuple[np.ndarray, np.ndarray]:
    """Per workload: flash bandwidth of the article's SSD (48 MLC dies, 12 channels) and the
    PCIe 3.0 x4 host link's DMA bandwidth at the workload's mean I/O size."""
    avg_b = WL["io_gb"] * GB / WL["io_count"]
    fl = hw.flash_bw_gbps(hw.flash_arrays(), avg_b, WL["read_frac"], WL["sequential"] > 0.5)
    return fl, link.pcie_dma_bw_gbps(REF_HOST_LINK, HOST_LANES, avg_b)


def pisp_rpc_s(p: Batch | Any, n_sys: Any, n_pkt: Any, msg_s: Any) -> tuple[np.ndarray, np.ndarray]:
    """P.ISP-R's RPC messages (s), as (kernel-ctx part, network part).  Willow-style
    programmable ISP remotes every OS service to the host by RPC (digest M1: "T_network =
    N_tcp_pkts*c_pkt plus RPC round trips for P.ISP-R"; L1021: P.ISP-V "avoids the RPC and
    network responses"), one host-stack message each.  ``pisp_rpc = packets``: the
    message of a remoted syscall is the transport of its kernel-ctx service and is booked there;
    only a networked workload's packets, which the device has no stack to send, are relayed as
    RPC messages in the network term -- so workloads without packets pay no network time.
    ``syscalls`` (default): every remoted syscall's message in the network term, as L1021 ties
    P.ISP-R's network cost to its RPCs (packet-free workloads pay it too)."""
    old = p.is_("pisp_rpc", "syscalls")
    return where(old, 0.0, n_sys * msg_s), where(old, n_sys * msg_s, n_pkt * msg_s)


def cpu_split(t: dict[str, np.ndarray], design: Any) -> dict[str, np.ndarray]:
    """Where a run's processor time goes, per workload and design (digest section 6: host CPU
    offload as an objective; L911: ISP "reduces host-side computation overhead").

    ``host_cpu_s``: seconds the host's cores work for the run -- everything but the SSD's
    firmware and the flash/link transfer for ``host``; for P.ISP the host kernel's service of
    every remoted syscall (kernel-ctx: heavy for read-heavy key-value stores, whose gets are
    syscalls), the LBA-list handshakes and the host-stack TCP/RPC work of networked workloads;
    for the D-* designs only the Ether-oN driver's doorbell and interrupt per frame
    (``etheron_host_us``): their containers, OS work and network stack run on the SSD.
    ``dev_cpu_s``: the rest of the run's software time, on the SSD's cores.  Transfer time
    (flash and link) is neither."""
    d = {k: np.asarray(design) == i for i, k in enumerate(DESIGNS)}
    pisp = d["pisp_r"] | d["pisp_v"]
    xfer = t["xfer_s"]
    host_cpu = first_match(((d["host"], t["network_s"] + t["system_s"] + t["compute_s"] + t["storage_s"] - xfer - t["fw_s"]),
                            (pisp, t["kernel_ctx_s"] + t["lba_set_s"] + t["network_s"])), t["frame_host_s"])
    total = t["network_s"] + t["kernel_ctx_s"] + t["lba_set_s"] + t["storage_s"] + t["system_s"] + t["compute_s"]
    dev_cpu = total - xfer - host_cpu
    return {"host_cpu_s": host_cpu, "dev_cpu_s": dev_cpu}


def isp_terms(p: Batch | Any, design: Any, v: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
    """The six terms (s) of ``design`` (codes into DESIGNS) for the points of ``p``; ``v``:
    :func:`isp_inputs` of ``p`` when the caller already has them (they do not depend on
    the design)."""
    return _design_terms(p, design, isp_inputs(p) if v is None else v)


def isp_inputs(p: Batch | Any) -> dict[str, Any]:
    """Everything the designs share: workload counts, CPU scales, the flash and link
    bandwidths, Linux work, the program's compute and the host's and device's terms."""
    v = _workload_counts(p)
    v.update(_cpu_scales(p))
    v.update(_device_bandwidths(p, v))
    v.update(_linux_work(p, v))
    v.update(_program_compute(p, v))
    v.update(_host_terms(v))
    v.update(_device_terms(p, v))
    return v


def _workload_counts(p: Batch | Any) -> dict[str, Any]:
    """The workload's bytes and event counts (I/Os, syscalls, path walks, files, TCP packets)."""
    col = {k: p.pick("workload", dict(zip(WORKLOADS, WL[k]))) for k in
           ("io_gb", "io_count", "syscalls", "pathwalks", "files", "tcp_packets", "exec_s", "read_frac", "sequential")}
    io_b = col["io_gb"] * GB
    ref_n_io = col["io_count"]  # the article's I/Os (its Fig. 4a times were taken with them)
    # kv-object family: the same bytes in I/Os of value_b (size_from = value_b)
    n_io = where(p.is_("size_from", "value_b"), np.ceil(io_b / p.value_b), ref_n_io)
    return {"col": col, "io_b": io_b, "ref_n_io": ref_n_io, "n_sys": col["syscalls"], "n_walk": col["pathwalks"],
            "n_open": col["files"], "n_pkt": col["tcp_packets"], "n_io": n_io, "avg_b": io_b / n_io}


def _cpu_scales(p: Batch | Any) -> dict[str, Any]:
    """Host and device software-time scales over the 3.8-GHz reference host (CPI stack)."""
    # Software time is counted in microseconds of the 3.8-GHz reference host; it takes
    # h_scale of that on this point's host and d_scale on the device's cores.  CPI stack
    # (memssd block's stall_time_ns form): the core's cycles scale with its clock (and IPC),
    # the off-chip memory stalls are DRAM latency in ns and do not
    m = p.mem_stall_frac
    h_scale = (1 - m) * REF_CLOCK_GHZ / p.host_clock_ghz + m
    d_scale = (1 - m) * REF_CLOCK_GHZ / p.dev_clock_ghz * p.dev_ipc_ratio + m * DEV_MEM_LATENCY_RATIO
    return {"h_scale": h_scale, "d_scale": d_scale}


def _device_bandwidths(p: Batch | Any, v: dict[str, Any]) -> dict[str, Any]:
    """Bandwidths: flash back end (flash block) and the host link (link block); firmware and frame times."""
    us = 1.0 / US_PER_S
    fl = hw.flash_arrays(p.flash_channels, p.flash_chips_per_channel, p.flash_channel_gbps)
    flash_gbps = hw.flash_bw_gbps(fl, v["avg_b"], v["col"]["read_frac"], v["col"]["sequential"] > 0.5)
    link_gbps = np.zeros_like(flash_gbps)
    for g in HOST_LINKS:  # three labels, not a loop over points; only those some point has
        on = p.is_("host_link", g)
        if on.any():
            link_gbps = where(on, link.pcie_dma_bw_gbps(g, HOST_LANES, v["avg_b"]), link_gbps)
    fw_s = v["n_io"] * FW_IO_CYCLES / (p.dev_clock_ghz * hw.HZ_PER_GHZ)
    frame_s = p.pick("host_link", _FRAME_US) * us
    return {"flash_gbps": flash_gbps, "link_gbps": link_gbps, "fw_s": fw_s, "frame_s": frame_s}


def _linux_work(p: Batch | Any, v: dict[str, Any]) -> dict[str, Any]:
    """Linux work in reference-host seconds: syscalls/path walks/opens, copies, block I/O, TCP."""
    us = 1.0 / US_PER_S
    k = p.os_cost_scale
    linux_sys = k * (v["n_sys"] * SYSCALL_US + v["n_walk"] * PATHWALK_US + v["n_open"] * FILE_OPEN_US) * us
    copy = v["io_b"] * COPY_CYCLES_PER_BYTE / (REF_CLOCK_GHZ * hw.HZ_PER_GHZ)
    block = k * v["n_io"] * BLOCK_IO_US * us
    ref_block = k * v["ref_n_io"] * BLOCK_IO_US * us
    tcp = k * v["n_pkt"] * TCP_PACKET_US * us
    return {"linux_sys": linux_sys, "copy": copy, "block": block, "ref_block": ref_block, "tcp": tcp}


def _program_compute(p: Batch | Any, v: dict[str, Any]) -> dict[str, Any]:
    """The program's own work on the host and on the device cores (Amdahl over cores)."""
    # the listed time is the host's on the article's hardware; what its other terms leave
    # there is the program's own work, at least a floor share of the listed time
    # (filedown's and fileup's listed times are below their own I/O and OS time)
    exec_s = v["col"]["exec_s"]
    ref_flash_gbps, ref_link_gbps = _reference_bandwidths()
    ref_flash = p.pick("workload", dict(zip(WORKLOADS, ref_flash_gbps)))
    ref_link = p.pick("workload", dict(zip(WORKLOADS, ref_link_gbps)))
    ref_fw = v["ref_n_io"] * FW_IO_CYCLES / (hw.DEV_CLOCK_GHZ * hw.HZ_PER_GHZ)
    ref_other = (v["ref_block"] + ref_fw + v["io_b"] / (np.minimum(ref_flash, ref_link) * GB) + v["linux_sys"] + v["copy"]
                 + v["tcp"])
    compute_ref = np.maximum(exec_s - ref_other, p.compute_floor_frac * exec_s)
    amdahl = lambda cores: (1 - p.parallel_frac) + p.parallel_frac / cores  # noqa: E731
    compute_host = compute_ref * v["h_scale"] * amdahl(p.host_cores) / amdahl(REF_HOST_CORES)
    compute_dev = compute_ref * v["d_scale"] * amdahl(p.dev_cores) / amdahl(REF_HOST_CORES)
    return {"compute_host": compute_host, "compute_dev": compute_dev}


def _host_terms(v: dict[str, Any]) -> dict[str, Any]:
    """Host design's storage (block layer + firmware + transfer), system and TCP terms."""
    h_scale = v["h_scale"]
    host_storage = h_scale * v["block"] + v["fw_s"] + v["io_b"] / (np.minimum(v["flash_gbps"], v["link_gbps"]) * GB)
    return {"host_storage": host_storage, "host_system": h_scale * (v["linux_sys"] + v["copy"]),
            "host_tcp": h_scale * v["tcp"]}


def _device_terms(p: Batch | Any, v: dict[str, Any]) -> dict[str, Any]:
    """Device-side terms: ISP storage, Linux on the device, virtual firmware, P.ISP RPCs and LBA sets."""
    us = 1.0 / US_PER_S
    k = p.os_cost_scale
    d_scale, n_sys, n_pkt, tcp, frame_s = v["d_scale"], v["n_sys"], v["n_pkt"], v["tcp"], v["frame_s"]
    vfw_sys = n_sys * VFW_SYSCALL_CYCLES / (p.dev_clock_ghz * hw.HZ_PER_GHZ) + d_scale * VFW_SERVICE_FRAC * k * (
        v["n_walk"] * PATHWALK_US + v["n_open"] * FILE_OPEN_US) * us
    rpc_ctx, rpc = pisp_rpc_s(p, n_sys, n_pkt, v["h_scale"] * k * TCP_PACKET_US * us)
    return {
        "isp_storage": v["fw_s"] + v["io_b"] / (v["flash_gbps"] * GB),
        "dev_linux": d_scale * (v["linux_sys"] + v["copy"]),
        "dev_tcp": n_pkt * frame_s + d_scale * tcp,
        "vfw_sys": vfw_sys,
        "vfw_tcp": n_pkt * frame_s + d_scale * VFW_SERVICE_FRAC * tcp,
        "ctx": n_sys * p.kernel_ctx_us * us,
        "rpc_ctx": rpc_ctx, "rpc": rpc,
        "lba": v["n_open"] * p.lba_set_us * us,
        "naive_copy": v["io_b"] / (p.naive_copy_gbps * GB),
    }


def _design_terms(p: Batch | Any, design: Any, v: dict[str, Any]) -> dict[str, np.ndarray]:
    """Each point's six terms: the host's or the device-side ones its design uses."""
    us = 1.0 / US_PER_S
    d = {k: np.asarray(design) == i for i, k in enumerate(DESIGNS)}
    io_b, flash_gbps, link_gbps, naive_copy = v["io_b"], v["flash_gbps"], v["link_gbps"], v["naive_copy"]
    host_tcp, host_storage, isp_storage = v["host_tcp"], v["host_storage"], v["isp_storage"]
    compute_host = v["compute_host"]
    z = np.zeros_like(compute_host)
    pisp = d["pisp_r"] | d["pisp_v"]
    dlinux = d["d_naive"] | d["d_fullos"]
    network = first_match(((d["host"], host_tcp), (pisp, host_tcp + where(d["pisp_r"], v["rpc"], 0.0)),
                           (dlinux, v["dev_tcp"]), (d["d_virtfw"], v["vfw_tcp"])))
    kernel_ctx = where(pisp, v["ctx"] + where(d["pisp_r"], v["rpc_ctx"], 0.0), z)
    lba_set = where(pisp, v["lba"], z)
    storage = first_match(((d["host"], host_storage),
                           (dlinux, isp_storage + v["d_scale"] * v["block"] + where(d["d_naive"], naive_copy, 0.0))),
                          isp_storage)
    system = first_match(((d["host"], v["host_system"]), (dlinux, v["dev_linux"]), (d["d_virtfw"], v["vfw_sys"])), z)
    compute = where(d["host"], compute_host, v["compute_dev"])
    host_total = host_tcp + host_storage + v["host_system"] + compute_host
    # transfer time inside the storage term (flash, link, D-Naive's copy): no core works on it
    xfer = where(d["host"], io_b / (np.minimum(flash_gbps, link_gbps) * GB), io_b / (flash_gbps * GB)) + where(
        d["d_naive"], naive_copy, 0.0)
    return {"network_s": network, "kernel_ctx_s": kernel_ctx, "lba_set_s": lba_set, "storage_s": storage,
            "system_s": system, "compute_s": compute, "host_latency_s": host_total, "io_b": io_b,
            "flash_gbps": flash_gbps, "link_gbps": link_gbps, "io_count": v["n_io"], "xfer_s": xfer, "fw_s": v["fw_s"],
            "frame_host_s": v["n_pkt"] * p.pick("host_link", _FRAME_HOST_US) * us}


class DockerSsdIsp(Model):
    name = "dockerssd-isp"
    version = "1"
    summary = "In-storage processing on DockerSSD vs host and P.ISP/D-* designs: six-way latency breakdown, BOM, energy"
    source = "DockerSSD, IEEE Micro 2025 (DOI 10.1109/MM.2025.3574261), Fig. 4 and L1013-1031; research/dockerssd.md"
    variant_param = "design"
    family = "kv-object"
    family_fixed = {"size_from": "value_b"}
    boundary = (
        "one host server (hardware.py: server without DRAM + 64 GB DDR4) and one 400 GB SSD: a DockerSSD with its cores and "
        "DRAM for the in-storage designs (D-Naive's second processor included), a conventional SSD for host; power: the "
        "run's busy power and traffic energy over its time, the host platform idling while the SSD computes"
    )
    params = (
        Param("design", "d_virtfw", "the six data-processing models of Fig. 4 (L1013)", choices=DESIGNS),
        Param("workload", "embed_rm1", "the 13 workloads of Fig. 4a (workloads.csv)", choices=WORKLOADS),
        Param("host_clock_ghz", hw.HOST_CLOCK_GHZ, "3.8-GHz host CPU (L1007)", bounds=(1.0, 6.0)),
        Param("dev_clock_ghz", hw.DEV_CLOCK_GHZ, "2.2-GHz SSD processor (L1009)", bounds=(0.5, 5.0)),
        Param("dev_ipc_ratio", 1.0, "assumption: host and device cores do the same work per cycle (digest ambiguity 2)",
              bounds=(0.25, 4.0), doc="host instructions per cycle / device instructions per cycle"),
        Param("host_cores", 6, "assumption: as many host cores as the SSD has (compute differs by clock only)",
              bounds=(1, 128), integer=True),
        Param("dev_cores", hw.DEV_CORES, "six RISC-V cores (L1007; digest ambiguity 13)", bounds=(1, 64), integer=True),
        Param("mem_stall_frac", 0.5,
              "assumption: half of the software's time on the host is memory stall, which a slower core clock does "
              "not stretch (DBMSs on a server core stall almost half their time, 90% of it on L2-data and "
              "L1-instruction misses: Ailamaki et al., VLDB'99; OLAP engines stall 25-82% of their cycles: Sirin "
              "& Ailamaki, arXiv 1908.04718).  Not fitted; claims.yaml intro-vs-host gives the sensitivity",
              bounds=(0.0, 1.0), doc="share of host software time (3.8 GHz) spent waiting on off-chip memory"),
        Param("parallel_frac", 0.5, "assumption: half of a program's compute spreads over cores (Amdahl)", bounds=(0.0, 1.0)),
        Param("dev_dram_gb", hw.DEV_DRAM_GB, "2 GB DRAM per SSD (L1009); the ISP pool is what the FW-pool leaves (L974)",
              bounds=(0.25, 64.0)),
        Param("flash_channels", hw.FLASH_CHANNELS, "12 flash channels (L1009)", bounds=(1, 64), integer=True),
        Param("flash_chips_per_channel", hw.FLASH_CHIPS_PER_CHANNEL, "48 MLC packages over 12 channels (L1009)",
              bounds=(1, 32), integer=True),
        Param("flash_channel_gbps", hw.FLASH_CHANNEL_GBPS, "flash block dockerssd_mlc (assumption: 1.2 GB/s channels)",
              bounds=(0.1, 10.0)),
        Param("host_link", "pcie3", "assumption: PCIe 3.0 x4, the SSD host interface of gem5 + SimpleSSD setups",
              choices=HOST_LINKS),
        Param("os_cost_scale", 1.343,
              "fitted (calibration.py) to the article's attributions L1025/L1031 (9.3%, 12.8%, 8.4%, 30.9%): multiplies the "
              "Linux unit costs (syscall 0.5 us, path walk 1 us, open 2 us, TCP packet 2.5 us, block I/O 4.5 us)",
              bounds=(0.05, 20.0)),
        Param("kernel_ctx_us", 3.124, "fitted (calibration.py) to the same attributions: host-kernel service of one P.ISP syscall",
              bounds=(0.0, 1000.0)),
        Param("lba_set_us", 26.11, "fitted (calibration.py) to the same attributions: LBA-list handshake per opened file (P.ISP)",
              bounds=(0.0, 10000.0)),
        Param("naive_copy_gbps", 3.711, "fitted (calibration.py) to the same attributions: D-Naive's inter-complex copy",
              bounds=(0.05, 1000.0)),
        Param("pisp_rpc", "syscalls",
              "digest M1 (L1021): P.ISP-R adds RPC round trips, which P.ISP-V avoids.  syscalls (default): one "
              "host-stack RPC message per remoted syscall, in the network term; packets: that message booked as the "
              "transport of the syscall's kernel-ctx service, and the network term only for workloads that send "
              "packets (one relayed RPC message each).  The default is the reading the article's ratios favour: "
              "with packets (constants refitted) every ISP headline ratio drops by 10-13% (claims.yaml mot-communicate note)",
              choices=("packets", "syscalls"), doc="what P.ISP-R's RPC messages carry"),
        Param("compute_floor_frac", 0.05, "assumption: compute is at least 5% of a workload's listed time", bounds=(0.0, 1.0)),
        *knob_params("kv-object"),
        Param("size_from", "workload",
              "assumption: the workload's own I/O sizes (Fig. 4a bytes / I/Os) win unless a family comparison selects value_b",
              choices=("workload", "value_b"), doc="which sets the I/O size: the workload table or the family knob value_b"),
    )
    metrics = (
        Metric("latency_s", "min", "end-to-end execution time of the workload"),
        Metric("network_s", None, "TCP packets and RPCs"),
        Metric("kernel_ctx_s", None, "host-kernel service of P.ISP system calls"),
        Metric("lba_set_s", None, "LBA-list handshakes of P.ISP"),
        Metric("storage_s", None, "I/O path and flash/link transfer"),
        Metric("system_s", None, "syscalls, path walks, opens, kernel-to-user copies"),
        Metric("compute_s", None, "the program's own work"),
        Metric("speedup_vs_host_x", "max", "host latency / this design's latency"),
        Metric("flash_bw_gbps", None, "flash back-end bandwidth at the workload's I/O size"),
        Metric("energy_j", "min", "energy of the run: busy processor and platform power x time + flash/DRAM/PCIe traffic"),
        Metric("energy_vs_host_x", "min", "energy of the run / the host's energy for the same workload"),
        Metric("device_usd", "min", "bill of materials of the compute that runs the workload (cost block)"),
        Metric("op_latency_us", "min", "run time per storage I/O of the workload (latency_s / I/Os)"),
        Metric("host_cpu_s", "min", "host core seconds of the run (cpu_split: kernel-ctx, LBA-set, host TCP/RPC for P.ISP)"),
        Metric("dev_cpu_s", None, "SSD core seconds of the run (firmware, and for ISP designs the program and its OS work)"),
        Metric("host_offload_frac", "max", "1 - host_cpu_s / the host design's host core seconds for the same workload"),
    )

    def evaluate(self, p: Batch) -> dict[str, Any]:
        shared = isp_inputs(p)
        t = isp_terms(p, p.design, shared)
        parts = ("network_s", "kernel_ctx_s", "lba_set_s", "storage_s", "system_s", "compute_s")
        latency = sum(t[k] for k in parts)
        host = p.is_("design", "host")
        naive = p.is_("design", "d_naive")

        # --- energy: busy power x time, plus per-bit traffic energy (energy block)
        host_w = hw.HOST_PLATFORM_W + hw.core_power_w(p.host_cores, p.host_clock_ghz, hw.HOST_CORE_W, hw.HOST_CLOCK_GHZ)
        dev_w = hw.DEV_BASE_W + hw.core_power_w(p.dev_cores, p.dev_clock_ghz, hw.DEV_CORE_W, hw.DEV_CLOCK_GHZ)
        dev_w = dev_w * where(naive, 2.0, 1.0) - where(naive, hw.DEV_BASE_W, 0.0)  # a second processor
        # P.ISP keeps the host busy for the remoted syscalls and LBA handshakes
        pisp_host_s = t["kernel_ctx_s"] + t["lba_set_s"]
        power_s = where(host, host_w * latency + hw.DEV_BASE_W * latency,
                           dev_w * latency + host_w * pisp_host_s)
        bits = t["io_b"] * BITS_PER_BYTE
        traffic_j = bits * J_PER_PJ * (_FLASH_PJ + where(host, hw.PCIE_PJ_PER_BIT + hw.DRAM_PJ_PER_BIT,
                                                                          hw.DRAM_PJ_PER_BIT))
        energy = power_s + traffic_j
        host_j = (host_w + hw.DEV_BASE_W) * t["host_latency_s"] + bits * J_PER_PJ * (
            _FLASH_PJ + hw.PCIE_PJ_PER_BIT + hw.DRAM_PJ_PER_BIT)

        # --- BOM: the SSD (with its controller cores), plus the host server for the host design
        ssd = hw.ssd_usd(hw.SSD_CAPACITY_GB, p.dev_dram_gb, p.dev_cores)
        ssd = ssd + where(naive, hw.SSD_CONTROLLER_USD * p.dev_cores / hw.CONTROLLER_REF_CORES, 0.0)
        device_usd = where(host, hw.host_usd(hw.HOST_DRAM_GB) + hw.ssd_usd(hw.SSD_CAPACITY_GB, hw.DEV_DRAM_GB), ssd)

        # --- the system (kv-object family): I/Os per second of the run; one host + one SSD
        ops = t["io_count"] / latency
        capex = where(host, device_usd, hw.host_usd(hw.HOST_DRAM_GB) + ssd)
        idle_host_j = where(host, 0.0, hw.HOST_PLATFORM_W * np.maximum(latency - pisp_host_s, 0.0))
        power = (energy + idle_host_j) / latency

        cpu = cpu_split(t, p.design)
        host_code = np.zeros_like(np.asarray(p.design))  # the host design's code, per point
        host_ref_cpu = cpu_split(isp_terms(p, host_code, shared), host_code)

        no_pool = np.asarray(p.dev_dram_gb <= FW_POOL_GB)
        ok = where(no_pool, np.nan, 1.0)  # the ISP pool must exist
        out = {k: t[k] * ok for k in parts}
        out["infeasible"] = {NO_ISP_POOL: no_pool}
        out.update({
            "latency_s": latency * ok,
            "speedup_vs_host_x": t["host_latency_s"] / latency * ok,
            "flash_bw_gbps": t["flash_gbps"],
            "energy_j": energy * ok,
            "energy_vs_host_x": energy / host_j * ok,
            "device_usd": device_usd,
            "work_per_s": ops * ok,
            "op_latency_us": latency / t["io_count"] * US_PER_S * ok,
            "capex_usd": capex,
            "power_w": power * ok,
            "host_cpu_s": cpu["host_cpu_s"] * ok,
            "dev_cpu_s": cpu["dev_cpu_s"] * ok,
            "host_offload_frac": (1.0 - cpu["host_cpu_s"] / host_ref_cpu["host_cpu_s"]) * ok,
        })
        return out
