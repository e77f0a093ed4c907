"""bandslim: how a KV-SSD PUT's value crosses PCIe / CXL, and what it costs.

A PUT of a ``v``-byte value with a 4 B key (kvssd.md §2), one at a time (QD1; the
article derives throughput from response times, kvssd.md §7 ambiguity 5):

    host NVMe stack -> doorbell -> SQE fetch -> firmware -> CQE -> completion
                                                 (one round per NVMe command;   link block)
    firmware KV work (MemTable insert, vLog append), once per PUT
    value transfer, by mode:
      baseline    PRP DMA of whole 4 KiB pages                          (link block)
      piggyback   the value inside 1 + ceil((v - 35) / 56) commands
      cxl         CXL.mem stores + clflush per 64 B line, one NVMe command for the key
      adaptive_p  piggyback below tau = alpha_x * tau_b, PRP from tau on
      adaptive_c  CXL below tau, PRP from tau on

Traffic counts the bytes the host's PCIe counters see: per command the 64 B SQE, the
16 B CQE and two 4 B doorbells (NVMe spec sizes), plus the PRP pages or the CXL flits.
Workload value-size mixes come from ``workloads.csv`` (``workloads.py``).

Calibration (``calibration.py``): ``dma_eff_frac`` (the device's PRP DMA rate as a share of
the raw link rate) is fitted to the article's "response time halved for values up to
32 B" on the Gen2 OpenSSD.  Nothing else is fitted; the firmware times are stated
assumptions.  Gen5 is the article's own study: the same firmware, a faster link.

System (kv-object family): one dual-socket host (workload block ``host_server``) drives one
KV-SSD.  A PUT is the family's operation; ``value_b`` is both the article's W(A) value size
and the family knob.  At ``queue_depth`` PUTs in flight the rate is the smallest of
QD / response time (Little), the SSD's serial firmware and DMA engine, the link's bytes
per second and the host cores' NVMe-stack time; at QD1 (the article's) it is 1 / response
time, ``put_rate_kiops``.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from dse.model import Batch, Metric, Model, Param
from dse import units
from dse.units import B_PER_S_PER_GBPS, BITS_PER_BYTE, J_PER_NJ, J_PER_PJ, NS_PER_S, NS_PER_US, US_PER_S
from models.blocks import dram, energy, link, workload
from models.blocks.cost import component_price
from models.blocks.calibration import per_calibration
from models.bandslim import transfer, workloads
from models.bandslim.transfer import B

MODES = ("baseline", "piggyback", "cxl", "adaptive_p", "adaptive_c")
#: Which fine-grained method each mode uses below its threshold (True: CXL stores).
_FINE_IS_CXL = {"baseline": False, "piggyback": False, "cxl": True, "adaptive_p": False, "adaptive_c": True}
#: Threshold rule: 0 = all PRP, 1 = all fine-grained, 2 = alpha_x * tau_b.
_TAU_RULE = {"baseline": 0, "piggyback": 1, "cxl": 1, "adaptive_p": 2, "adaptive_c": 2}

WORKLOADS = workloads.names()
PCIE_GENS = (2, 3, 4, 5, 6)
#: CXL.mem needs the PCIe 5.0 PHY or later (CXL 1.1/2.0 spec); the 68 B flit ends at
#: 32 GT/s (CXL 3.0 §6.2.3).
CXL_MIN_GEN = 5
CXL_FLITS = ("68B", "256B")
#: How interconnect traffic is counted (``traffic_count``).
TRAFFIC_COUNTS = ("payload", "tlp")
#: Infeasible points (``run_full``'s reasons).
CXL_NEEDS_GEN5 = "CXL.mem needs the PCIe 5.0 PHY or later (pcie_gen < 5)"

# ----------------------------------------------------------------------------- constants
#: NVMe doorbell register write, bytes (32-bit registers; NVMe Base Spec 2.0 §3.1.2).
DOORBELL_B = 4.0
#: Interconnect bytes per NVMe command: SQE + CQE + SQ tail and CQ head doorbells.
#: Source: NVMe spec sizes (link block NVME_SQE_B, NVME_CQE_B); payload bytes as Intel
#: PCM reports them, without TLP headers (kvssd.md §7 ambiguity 7 leaves this open).
CMD_TRAFFIC_B = link.NVME_SQE_B + link.NVME_CQE_B + 2.0 * DOORBELL_B
#: Host core to CXL home agent and back, ns: the value the cxl-expander pilot uses
#: (assumption there: Xeon path that gives ~110 ns local DDR5 idle latency).
CXL_HOST_PATH_NS = 42.0
#: CXL device memory of the measured 256 GB expander (kvssd.md §3): DDR5-4800.
#: Assumption: the common medium of 2024 CXL memory expanders (Micron CZ120, Samsung CMM-D).
CXL_DEVICE_DRAM = "DDR5-4800"
#: CXL link round trips per 64 B line: a store to a cacheable line first reads it
#: (read-for-ownership), then clflush writes it back (kvssd.md §2: stores + clflush).
CXL_TRIPS_PER_LINE = {"clflush": 2.0, "nt_store": 1.0}
#: SSD DRAM per TB of NAND, GiB.  Assumption: the usual 1 GiB per TiB FTL/buffer ratio.
DRAM_GIB_PER_TB = 1.0

_CUM = workloads.cumulative_bases()
_TAU_IDX_MAX = _CUM.shape[1] - 1
#: one flat (workload x threshold) table per basis, for cheap gathers
_CUM_BY_BASIS = [np.ascontiguousarray(_CUM[:, :, b]).reshape(-1) for b in range(transfer.N_BASES)]
_WA = WORKLOADS.index("wa")


class BandSlim(Model):
    name = "bandslim"
    version = "1"
    summary = "KV-SSD value transfer: NVMe PRP vs command piggybacking vs CXL.mem stores (BandSlim)"
    source = "Park et al., IEEE Micro 2025 (DOI 10.1109/MM.2025.3572475), digest shared/research/kvssd.md"
    variant_param = "mode"
    params = (
        Param("mode", "adaptive_p", "kvssd.md §1: the article's variants; Adaptive (piggyback <-> PRP) is BandSlim's default",
              choices=MODES),
        Param("workload", "wa", "kvssd.md §5: db_bench W(A)-W(D), W(M) (workloads.csv)", choices=WORKLOADS),
        Param("value_b", 32.0, "kvssd.md §5: W(A) sweeps 4 B - 8 KB; 32 B is the amplification example (~L2525)",
              bounds=(1.0, 64.0 * units.MIB),
              doc="value size of W(A) (other workloads use their own size mix); also the kv-object family knob (bounds cover the family's 8 B - 64 MiB)"),
        Param("pcie_gen", 2, "kvssd.md §3: Cosmos+ OpenSSD on PCIe Gen2 x8 (~L2587); the CXL study runs at Gen5",
              choices=PCIE_GENS),
        Param("lanes", 8, "kvssd.md §3: OpenSSD PCIe Gen2 x8; x8 assumed for Gen5 too (§7 ambiguity 6)",
              choices=(1, 2, 4, 8, 16)),
        Param("tau_b", 128.0, "kvssd.md §3: 128 B on the Gen2 platform (~L2639); 64 B in the Gen5 study (~L2641)",
              bounds=(1.0, 8192.0), doc="adaptive modes: values below alpha_x * tau_b go fine-grained"),
        Param("alpha_x", 1.0, "kvssd.md §3: alpha = 1 keeps the response-time-optimal threshold (~L2566)", bounds=(1.0, 16.0),
              doc="threshold scale: > 1 trades response time for less traffic"),
        Param("fw_cmd_us", 5.0,
              "assumption: a few us of Cosmos+ OpenSSD firmware (ARM Cortex-A9) per NVMe command; the article gives T_cmd only in a figure",
              bounds=(0.1, 100.0), doc="device firmware time per NVMe command (fetch to completion post)"),
        Param("fw_kv_us", 2.5,
              "assumption: MemTable skiplist insert (~20 levels of ~100 ns DRAM accesses) + vLog append on the ARM firmware, ~2-3 us",
              bounds=(0.0, 100.0), doc="device firmware KV work per PUT (once, whatever the transfer mode)"),
        Param("dma_eff_frac", 0.0818,
              "fitted (calibration.py) to kvssd.md §4 pb_resp_time_small: Piggyback halves Baseline's response time for values up to 32 B on Gen2 x8",
              bounds=(0.005, 1.0), doc="device PRP DMA rate at QD1 as a fraction of the raw link rate"),
        Param("host_stack", "kernel_irq", "kvssd.md §5: db_bench issues NVMe passthrough ioctls through the kernel driver",
              choices=link.NVME_STACKS[:3]),
        Param("completion", "interrupt", "link block default for the kernel passthrough path", choices=link.NVME_COMPLETION_MODES),
        Param("traffic_count", "payload",
              "kvssd.md §1: traffic as Intel PCM reports it (payload bytes); 'tlp' adds PCIe TLP headers, DLL and framing (§7 ambiguity 7)",
              choices=TRAFFIC_COUNTS,
              doc="payload: NVMe/PRP payload bytes (the article's counters); tlp: wire bytes with TLP header, sequence/LCRC and framing per TLP"),
        Param("cxl_flit", "68B", "kvssd.md §3: BandSlim uses the default 68-byte flit mode (~L2549)", choices=CXL_FLITS),
        Param("cxl_store", "clflush", "kvssd.md §2: values written with CXL.mem stores and clflush", choices=tuple(CXL_TRIPS_PER_LINE)),
        Param("cxl_ctrl_ns", 40.0, "cxl-expander pilot: ASIC controller 'tens of ns' (CXL-GPU digest); assumption 40 ns",
              bounds=(0.0, 1000.0), doc="CXL device controller time per access"),
        Param("header_flits", 0.0, "assumption: headers packed in data flits' slots; kvssd.md §7 ambiguity 4 suggests 1",
              bounds=(0.0, 4.0), integer=True, doc="extra 68 B header flits per CXL value"),
        Param("capacity_tb", 1.0, "kvssd.md §3: the OpenSSD carries 1 TB of NAND (~L2587)", bounds=(0.25, 64.0)),
        Param("nand_usd_per_gb", component_price("nand_tlc").value, "cost block: nand_tlc (Omdia, Q3 2024)",
              bounds=(0.01, 2.0)),
        # --- the system of the kv-object family (work_per_s, capex_usd, power_w)
        Param("queue_depth", 1.0, "kvssd.md §7 ambiguity 5: the article measures one PUT at a time (QD1)", bounds=(1.0, 1024.0),
              doc="PUTs in flight (family metrics only; the article's metrics are at QD1)"),
        Param("host_threads", workload.THREADS, "workload block THREADS: 2 sockets x 32 cores, one thread each", bounds=(1.0, 1024.0),
              integer=True, doc="host threads issuing PUTs (bounds the host's NVMe-stack time)"),
        Param("host_dram_gib", 64.0, "assumption: a storage head with 64 GiB DDR5 (the KV store's index lives on the SSD)",
              bounds=(0.0, 4096.0), doc="host DRAM, priced and powered by the workload block"),
        Param("ssd_power_w", 10.0, "assumption: enterprise NVMe SSD active power ~8-12 W (PM983-class 10 W, as rdio's prices.csv)",
              bounds=(1.0, 50.0), doc="KV-SSD wall power while serving PUTs"),
    )
    boundary = (
        "one dual-socket host server (CPUs, board, NIC, host_dram_gib of DDR5; workload block host_server) plus one KV-SSD "
        "(NAND, controller, DRAM, board, CXL premium in CXL modes); power: the host near full load plus the SSD"
    )
    family = "kv-object"
    metrics = (
        Metric("put_latency_us", "min", "mean PUT response time at QD1"),
        Metric("put_rate_kiops", "max", "PUTs per second at QD1, thousands (1 / mean response time)"),
        Metric("traffic_per_put_b", "min", "interconnect bytes per PUT (commands, PRP pages, CXL flits)"),
        Metric("mean_value_b", None, "mean value size of the workload"),
        Metric("amplification_x", "min", "interconnect bytes per value byte"),
        Metric("traffic_saving_frac", "max", "1 - traffic / Baseline traffic on the same workload and link"),
        Metric("speedup_vs_baseline_x", "max", "Baseline response time / this mode's"),
        Metric("cmds_per_put_count", "min", "NVMe commands per PUT"),
        Metric("tau_opt_b", None,
               "size from which the mode's fine-grained method is no faster than PRP, as the article's power-of-two search reports it"),
        Metric("link_gbps", None, "interconnect bandwidth used at QD1"),
        Metric("link_energy_per_put_nj", "min", "link PHY energy per PUT (energy block, 6 pJ/bit)"),
        Metric("host_cpu_per_put_us", "min", "host CPU time per PUT (NVMe stack per command, CXL flush stalls)"),
        Metric("device_usd", "min", "SSD bill of materials (NAND, controller, DRAM, board; CXL premium)"),
        Metric("cost_per_kiops_usd", "min", "device cost per thousand PUT/s"),
        Metric("cmd_traffic_b", None, "interconnect bytes of one NVMe command round (SQE fetch, CQE, two doorbells), as traffic_count counts them"),
        Metric("page_dma_ns", None, "one 4 KiB PRP page: DMA round trip + transfer at the device's DMA rate"),
        Metric("cxl_line_ns", None, "one 64 B CXL.mem line stored and flushed (read-for-ownership + clflush write-back; cxl_store)"),
        Metric("page_dma_over_line_x", None, "page_dma_ns / cxl_line_ns: CXL lines one PRP page DMA buys (sets the CXL/PRP threshold)"),
        Metric("op_latency_us", "min", "mean PUT latency at queue_depth (Little: queue_depth / work_per_s; QD1: put_latency_us)"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        """One PUT's value across PCIe / CXL, stage by stage (the module docstring's path)."""
        n = p.n
        gen = np.broadcast_to(np.asarray(p.pcie_gen, dtype=np.float64), (n,))
        gen_i = gen.astype(np.int64)
        cmd = _command_round(p, gen_i)  # one NVMe command round + firmware
        prp = _prp_dma(p, gen_i)  # PRP: DMA round trip, 4 KiB pages
        cxl = _cxl_line(p, gen, gen_i)  # CXL.mem: a 64 B line's stores + flush
        e = _fine_grained_split(p)  # expected work below / at-or-above tau
        rt = _response_time(cmd, prp, cxl, e)  # fine-grained part + PRP part
        tr = _traffic(p, gen_i, cxl, e)  # bytes the host's PCIe counters see
        tau_opt = _switch_threshold(cmd, prp, cxl, e)  # the threshold the article's search would find
        # host CPU: the stack per command; CXL stores stall the core for their flushes
        cpu_ns = cmd.host_sw_ns * tr.cmds + cxl.line_ns * tr.lines_cpu
        device_usd = _device_cost(p, e)  # cost block
        ok = np.where(e.fine_cxl & ~cxl.cxl_ok, np.nan, 1.0)
        work = _system_rate(p, cmd, prp, cxl, e, rt, tr, cpu_ns, ok)  # kv-object family: PUTs/s at queue_depth
        return _metrics(p, gen, cmd, prp, cxl, e, rt, tr, tau_opt, cpu_ns, device_usd, ok, work)


# ----------------------------------------------------------------------------- stages of BandSlim.evaluate
def _command_round(p: Batch, gen_i: np.ndarray) -> SimpleNamespace:
    """One NVMe command round (link block): host stack, doorbell, SQE fetch, CQE, completion, firmware."""
    parts = link.nvme_command_breakdown(
        link.NVME_SQE_B, gen_i, p.lanes, write=True, completion=p.completion, stack=p.host_stack
    )
    host_sw_ns = parts["sw_submit"] + parts["sw_complete"] + parts["completion"]
    cmd_ns = host_sw_ns + parts["doorbell"] + parts["sqe_fetch"] + parts["cqe"] + p.fw_cmd_us * NS_PER_US
    return SimpleNamespace(host_sw_ns=host_sw_ns, cmd_ns=cmd_ns, kv_ns=p.fw_kv_us * NS_PER_US)


def _prp_dma(p: Batch, gen_i: np.ndarray) -> SimpleNamespace:
    """PRP: one DMA round trip to start, each 4 KiB page at the device's DMA rate."""
    raw_gbps = link.raw_bw_gbps(gen_i, p.lanes)
    return SimpleNamespace(raw_gbps=raw_gbps, page_ns=transfer.PAGE_B / (p.dma_eff_frac * raw_gbps),
                           dma_rt_ns=link.PCIE_DMA_READ_RT_NS)


def _cxl_line(p: Batch, gen: np.ndarray, gen_i: np.ndarray) -> SimpleNamespace:
    """CXL.mem per 64 B line: host path + link round trip + controller + DRAM, for the RFO and the clflush."""
    cxl_ok = gen >= CXL_MIN_GEN
    flit256 = p.is_("cxl_flit", "256B")
    cxl_ok = cxl_ok & (flit256 | (gen <= CXL_MIN_GEN))
    cxl_gen = np.where(cxl_ok, gen_i, CXL_MIN_GEN)
    flit_code = np.where(flit256 | (cxl_gen > CXL_MIN_GEN), 1, 0)
    cxl_rt_ns = link.cxl_round_trip_ns(cxl_gen, p.lanes, flit_code, media_ns=_dram_idle_ns())
    line_ns = p.pick("cxl_store", CXL_TRIPS_PER_LINE) * (CXL_HOST_PATH_NS + cxl_rt_ns + p.cxl_ctrl_ns)
    return SimpleNamespace(cxl_ok=cxl_ok, flit256=flit256, line_ns=line_ns)


def _fine_grained_split(p: Batch) -> SimpleNamespace:
    """Which values go fine-grained: each workload's expected bases below and at-or-above tau."""
    n = p.n
    tau = np.select(
        [p.pick("mode", _TAU_RULE) == 0, p.pick("mode", _TAU_RULE) == 1],
        [0.0, np.inf],
        np.asarray(p.alpha_x * p.tau_b, dtype=np.float64),
    )
    tau = np.broadcast_to(tau, (n,))
    wl = np.broadcast_to(np.asarray(p.workload), (n,))
    idx = np.clip(np.ceil(np.minimum(tau, _TAU_IDX_MAX)), 0, _TAU_IDX_MAX).astype(np.int64)
    row = wl * _CUM.shape[1]
    at_tau, at_end = row + idx, row + _TAU_IDX_MAX
    # W(A): the single value size of the point, below tau or not
    is_wa = wl == _WA
    v = np.broadcast_to(np.asarray(p.value_b, dtype=np.float64), (n,))
    below = v < tau
    wa_bases = transfer.basis_columns(v)

    def expect(name: str) -> tuple[np.ndarray, np.ndarray]:
        """(E[basis; v < tau], E[basis; v >= tau]) of each point's workload."""
        table = _CUM_BY_BASIS[B[name]]
        fine, every = table[at_tau], table[at_end]
        b = wa_bases[name]
        fine = np.where(is_wa, np.where(below, b, 0.0), fine)
        every = np.where(is_wa, b, every)
        return fine, every - fine

    e = SimpleNamespace(fine_cxl=np.broadcast_to(p.pick("mode", _FINE_IS_CXL), (n,)))  # the fine-grained method
    e.one_f, e.one_p = expect("one")
    e.ncmd_f, _ = expect("ncmd")
    e.lines_f, _ = expect("lines")
    e.f256_f, _ = expect("flits256")
    e.pages_f, e.pages_p = expect("pages")
    e.list_f, e.list_p = expect("prp_list")
    e.ent_f, e.ent_p = expect("prp_entries")
    e.val_f, e.val_p = expect("value")
    return e


def _response_time(cmd: SimpleNamespace, prp: SimpleNamespace, cxl: SimpleNamespace,
                   e: SimpleNamespace) -> SimpleNamespace:
    """Response time: the fine-grained part + the PRP part, and the all-PRP baseline's."""
    kv_ns, cmd_ns, page_ns, dma_rt_ns = cmd.kv_ns, cmd.cmd_ns, prp.page_ns, prp.dma_rt_ns
    fine_ns = np.where(
        e.fine_cxl,
        (kv_ns + cmd_ns) * e.one_f + cxl.line_ns * e.lines_f,
        kv_ns * e.one_f + cmd_ns * e.ncmd_f,
    )
    prp_fixed_ns = kv_ns + cmd_ns + dma_rt_ns
    latency_ns = fine_ns + prp_fixed_ns * e.one_p + page_ns * e.pages_p + dma_rt_ns * e.list_p
    baseline_ns = (prp_fixed_ns * (e.one_f + e.one_p) + page_ns * (e.pages_f + e.pages_p)
                   + dma_rt_ns * (e.list_f + e.list_p))
    return SimpleNamespace(latency_ns=latency_ns, baseline_ns=baseline_ns)


def _traffic(p: Batch, gen_i: np.ndarray, cxl: SimpleNamespace, e: SimpleNamespace) -> SimpleNamespace:
    """Traffic per PUT: the same split; per command, per page and per PRP entry as traffic_count counts them."""
    n, fine_cxl = p.n, e.fine_cxl
    tlp = np.broadcast_to(p.is_("traffic_count", "tlp"), (n,))
    wire = transfer_wire_b(gen_i)
    cmd_b = np.where(tlp, wire["cmd"], CMD_TRAFFIC_B)
    page_b = np.where(tlp, wire["page"], transfer.PAGE_B)
    entry_b = np.where(tlp, wire["prp_entry"], transfer.PRP_ENTRY_B)
    cxl_flit_b = np.where(
        cxl.flit256, transfer.FLIT256_B * e.f256_f,
        transfer.FLIT68_B * (e.lines_f + p.header_flits * e.one_f),
    )
    fine_b = np.where(fine_cxl, cmd_b * e.one_f + cxl_flit_b, cmd_b * e.ncmd_f)
    return SimpleNamespace(
        cmd_b=cmd_b,
        traffic_b=fine_b + cmd_b * e.one_p + page_b * e.pages_p + entry_b * e.ent_p,
        baseline_b=cmd_b * (e.one_f + e.one_p) + page_b * (e.pages_f + e.pages_p) + entry_b * (e.ent_f + e.ent_p),
        value_mean_b=e.val_f + e.val_p,
        cmds=np.where(fine_cxl, e.one_f, e.ncmd_f) + e.one_p,
        lines_cpu=np.where(fine_cxl, e.lines_f, 0.0),
    )


def _switch_threshold(cmd: SimpleNamespace, prp: SimpleNamespace, cxl: SimpleNamespace,
                      e: SimpleNamespace) -> np.ndarray:
    """The switch threshold the article's search would find for this link (next power of two)."""
    page_total_ns = prp.page_ns + prp.dma_rt_ns
    tau_pb = transfer.next_power_of_two(transfer.piggyback_crossover_b(page_total_ns / cmd.cmd_ns))
    tau_cxl = transfer.next_power_of_two(transfer.cxl_crossover_b(page_total_ns, cxl.line_ns))
    return np.where(e.fine_cxl, tau_cxl, tau_pb)


def _device_cost(p: Batch, e: SimpleNamespace) -> np.ndarray:
    """Device cost (cost block): NAND + controller + DRAM + board; CXL parts carry a premium."""
    ctrl_dram_usd = _CTRL_USD + DRAM_GIB_PER_TB * p.capacity_tb * _DRAM_USD_PER_GIB
    premium = np.where(e.fine_cxl, _CXL_PREMIUM, 0.0)
    return p.capacity_tb * _GB_PER_TB * p.nand_usd_per_gb + ctrl_dram_usd * (1.0 + premium) + _OTHER_USD


def _system_rate(p: Batch, cmd: SimpleNamespace, prp: SimpleNamespace, cxl: SimpleNamespace, e: SimpleNamespace,
                 rt: SimpleNamespace, tr: SimpleNamespace, cpu_ns: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """PUTs per second at queue_depth (kv-object family): the smallest of the bounds.

    Little's QD / response time, the SSD's serial work per PUT (firmware per command and per
    PUT, PRP page DMA, the controller per CXL line), the link per direction and the host
    threads' NVMe-stack and flush time.  At QD1 the first wins: 1 / response time."""
    dev_ns = (cmd.kv_ns * (e.one_f + e.one_p) + p.fw_cmd_us * NS_PER_US * tr.cmds + prp.page_ns * e.pages_p
              + p.cxl_ctrl_ns * tr.lines_cpu)
    link_ns = tr.traffic_b / prp.raw_gbps  # bytes / (GB/s) = ns
    host_ns = cpu_ns / p.host_threads
    return np.minimum(p.queue_depth * NS_PER_S / rt.latency_ns,
                      NS_PER_S / np.maximum(np.maximum(dev_ns, link_ns), host_ns)) * ok


def _metrics(p: Batch, gen: np.ndarray, cmd: SimpleNamespace, prp: SimpleNamespace, cxl: SimpleNamespace,
             e: SimpleNamespace, rt: SimpleNamespace, tr: SimpleNamespace, tau_opt: np.ndarray, cpu_ns: np.ndarray,
             device_usd: np.ndarray, ok: np.ndarray, work: np.ndarray) -> dict[str, np.ndarray]:
    """The metric columns; NaN where the point's CXL link cannot exist."""
    n, fine_cxl, latency_ns, line_ns = p.n, e.fine_cxl, rt.latency_ns, cxl.line_ns
    page_total_ns = prp.page_ns + prp.dma_rt_ns
    host = workload.host_server(p.host_dram_gib)
    latency_us = latency_ns / NS_PER_US * ok
    puts_per_s = NS_PER_S / latency_ns * ok  # QD1: one PUT at a time
    kops = puts_per_s / OPS_PER_KIOPS
    traffic = tr.traffic_b * ok
    return {
        "infeasible": {CXL_NEEDS_GEN5: fine_cxl & (gen < CXL_MIN_GEN), link.NO_68B_FLIT_REASON: fine_cxl & ~cxl.cxl_ok},
        "put_latency_us": latency_us,
        "put_rate_kiops": kops,
        "traffic_per_put_b": traffic,
        "mean_value_b": tr.value_mean_b,
        "amplification_x": traffic / np.maximum(tr.value_mean_b, 1.0),
        "traffic_saving_frac": 1.0 - traffic / tr.baseline_b,
        "speedup_vs_baseline_x": rt.baseline_ns / latency_ns * ok,
        "cmds_per_put_count": tr.cmds * ok,
        "tau_opt_b": tau_opt * ok,
        "link_gbps": traffic * puts_per_s / B_PER_S_PER_GBPS,
        "link_energy_per_put_nj": traffic * BITS_PER_BYTE * energy.link_pj_per_bit("pcie_phy") * J_PER_PJ / J_PER_NJ,
        "host_cpu_per_put_us": cpu_ns / NS_PER_US * ok,
        "device_usd": device_usd,
        "cost_per_kiops_usd": device_usd / kops,
        "work_per_s": work,
        "op_latency_us": p.queue_depth / work * US_PER_S,
        "cmd_traffic_b": tr.cmd_b * np.ones(n),
        "page_dma_ns": page_total_ns * np.ones(n),
        "cxl_line_ns": line_ns * ok,
        "page_dma_over_line_x": page_total_ns / line_ns * ok,
        "capex_usd": host["capex_usd"] + device_usd,
        "power_w": host["power_w"] + p.ssd_power_w,
    }


# ----------------------------------------------------------------------------- cost and media tables
_GB_PER_TB = 1000.0
OPS_PER_KIOPS = 1000.0
_CTRL_USD = component_price("ssd_controller_enterprise").value
_OTHER_USD = component_price("ssd_other").value
_DRAM_USD_PER_GIB = component_price("dram_ddr4").value
_CXL_PREMIUM = component_price("cxl_premium_frac").value


def tlp_overhead_b(gen: np.ndarray) -> np.ndarray:
    """Wire bytes a PCIe TLP adds to its payload (link block constants): the 16 B header,
    6 B sequence number + LCRC and the framing symbols before flit mode; in flit mode (6.0+)
    the header plus its share of the flit's 20 B of DLP/CRC/FEC per 236 B of TLP space."""
    g = link.gen_code(gen)
    flit = link.GEN_FLIT_MODE[g]
    hdr = link.PCIE_TLP_HEADER_B
    return np.where(flit, hdr * link.PCIE_FLIT_B / link.PCIE_FLIT_TLP_B, hdr + link.PCIE_DLL_B + link.PCIE_FRAMING_B[g])


def transfer_wire_b(gen: np.ndarray) -> dict[str, np.ndarray]:
    """Wire bytes (TLP framing counted) of what a PUT moves, per PCIe generation (kvssd.md §7
    ambiguity 7 suggests ~24 B per transaction; here from the PCIe spec sizes of the link block):

    * ``cmd``: SQE fetch (a read request TLP and its 64 B completion), the 16 B CQE write and
      two 4 B doorbell writes: five TLPs around 88 B of payload;
    * ``page``: a 4 KiB PRP page, DMA-read as read requests and completions of at most
      ``link.PCIE_MPS_B`` bytes each;
    * ``prp_entry``: one 8 B PRP list entry, its share of 256 B completions and requests."""
    ovh = tlp_overhead_b(gen)
    mps = link.PCIE_MPS_B
    tlps_per_page = np.ceil(transfer.PAGE_B / mps)
    return {
        "cmd": CMD_TRAFFIC_B + 5.0 * ovh,
        "page": transfer.PAGE_B + 2.0 * tlps_per_page * ovh,
        "prp_entry": transfer.PRP_ENTRY_B * (1.0 + 2.0 * ovh / mps),
    }


@per_calibration
def _dram_idle_ns() -> float:
    """Idle latency of the CXL device's DRAM (dram block, DRAMsim3-calibrated)."""
    return float(dram.idle_latency_ns(CXL_DEVICE_DRAM, "random"))
