"""espresso: a CXL JBOF whose SSDs share processors and DRAM (Espresso, digest
shared/research/espresso.md).

The JBOF: a DPU host (16 ARM cores at 2.1 GHz, 16 GB DDR5) and 12 SSDs on a CXL 3.0 tree
(PCIe 6.0 x2 per SSD).  ``lenders`` SSDs are idle (or lightly loaded); the others, the
borrowers, run the workload.  Metrics are per borrower SSD unless named ``jbof_``.

Request path and where it queues (per borrower SSD, digest M1):

    host NVMe stack + fixed controller path      HOST_NVME_US (link block) + fixed_latency_us
    firmware on the SSD processor                 cmd + ceil(size/4 KiB) x slice cycles
      (OC: the FTL runs on the DPU host; VH: a hypervisor on the host adds its cycles)
    mapping-table lookup in DRAM                  miss -> one more flash read (flash block)
    flash backbone                                flash block, Espresso TLC backbone
    CXL link                                      link block, PCIe 6.0 flit mode x2

Throughput is the bottleneck of the processor (own cores, or own + lent cycles under
the article's load-balance formula, harvest.py), the DPU host (its NVMe driver per
command, ``host_cmd_kcycles``; OC's FTL; VH's hypervisor), the flash
backbone, the link and the rated data path; at queue depth QD the asymptotic bound X = min(X_sat, QD / L0) holds and
the mean latency is QD / X (Little).

Designs (``design``, paper L237): ``conv`` 6 cores + 1 GB/TB; ``shrunk`` half the compute
(``cores_per_ssd``, ``dram_gb_per_tb``); ``oc`` open-channel SSDs with the FTL and the
mapping table on the host; ``vh`` Shrunk + a host hypervisor that redirects writes to
lenders and copies them back; ``vh_ideal`` the same without copyback; ``proch`` Shrunk +
processor harvesting; ``espresso`` processor + DRAM harvesting.

System (kv-object family): one I/O request is the family's operation and the JBOF does
``iops`` per borrower times its borrowers (idle lenders do none of their own).  The
boundary is one DPU's share of the reference chassis: the DPU (BlueField-3 class, with its
16 GB), its ``jbof_ssds`` SSDs (BOM), the CXL switch and half of the 24-bay enclosure.  The
microbenchmark's request size is ``io_size_kib`` (the article's) unless ``size_from =
"value_b"``, when the family knob ``value_b`` (bytes) sets it.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import BITS_PER_BYTE, J_PER_PJ, KIB, NS_PER_US, US_PER_S
from models.blocks import energy, flash, link, queueing
from models.blocks.cost import component_price
from models.blocks.numeric import where
from models.espresso import bom, data, mechanisms as mech, ssd
from models.espresso.harvest import borrowed_dram_gb_per_tb, harvest_capacity, redirect_frac

#: Metrics that need a borrower (NaN for a JBOF of lenders only).
PERF_METRICS = (
    "throughput_gbps", "iops", "jbof_throughput_gbps", "latency_us", "qd1_latency_us", "loaded_latency_us",
    "saturation_gbps", "proc_util_frac", "borrower_util_frac", "lender_proc_util_frac", "redirect_frac",
    "bottleneck_code", "iops_per_usd", "gbps_per_kusd", "energy_per_io_uj", "ssd_power_w",
    "work_per_s", "op_latency_us", "power_w",
)
DESIGNS = ("conv", "oc", "shrunk", "vh", "vh_ideal", "proch", "espresso")
#: Infeasible points (``run_full``'s reasons).
NO_BORROWER = "no borrower: lenders >= jbof_ssds"
NO_BORROWER_WORK = "vh_ideal redirects every write of a write-only load: the borrower serves nothing (lenders' flash not modeled)"
PATTERNS = ("random", "sequential")

#: Cores of the SSD whose controller costs $48 (Conv, Table 2 L213: 6 cores).
REF_CORES = 6
#: The host NVMe driver's CPU time per command in cycles of the DPU: the link block's Linux
#: kernel stack (submit 1.5 + interrupt handler 1.0 + completion 2.0 us = ssd.HOST_CMD_CPU_US;
#: the article's host side is the Linux 5.15 NVMe driver, digest section 1) at the DPU's
#: 2.1 GHz (L211); assumption: its ARM cores take the time measured on x86 hosts.  The
#: default of ``host_cmd_kcycles`` (claims.yaml: real-oc-loss, breakeven-cxl-premium).
HOST_GHZ = 2.1  # paper L211: the DPU's ARM cores
HOST_DRIVER_KCYCLES_LINK = ssd.HOST_CMD_CPU_US * HOST_GHZ
#: Energy per processor cycle: the article's 6.45 W SSD processor (L217) over Conv's
#: 6 cores x 1 GHz.  Assumption: the DPU's cores spend the same per cycle.
PROC_W = 6.45  # paper L217: SSD processor power
J_PER_CYCLE = PROC_W / (REF_CORES * 1e9)
UJ_PER_J = 1e6
#: Bytes of DRAM touched per 4 KiB unit for its mapping entry (one 64 B burst).
MAP_ACCESS_B = 64.0
#: Data passes the SSD's DRAM data buffer twice (in and out).  Assumption.
BUFFER_PASSES = 2.0

_T = data.workloads()
#: Per-workload columns of the table, indexed by the workload parameter's code.
_RF = np.asarray([_T[w]["read_frac"] for w in data.WORKLOADS])
_RD_KIB = np.asarray([_T[w]["read_kib"] for w in data.WORKLOADS])
_WR_KIB = np.asarray([_T[w]["write_kib"] for w in data.WORKLOADS])
#: A 64 B CXL.mem round trip between SSDs through the JBOF's switch (link block, PCIe 6.0
#: x2, 256 B flits, one switch): a lender reading the borrower's mapping table, or a
#: borrower's lookup in a lent DRAM segment ("sub-microsecond", digest ambiguity 7).
_CXL_RT_NS = float(link.cxl_round_trip_ns(ssd.LINK_GEN, 2, "256B", n_switches=1))
#: Energy per byte (uJ) over the CXL/PCIe PHY (6 pJ/bit, L217) and per DRAM byte (22 pJ/bit).
_PHY_UJ_PER_B = float(energy.link_energy_pj(1.0, "cxl_phy")) * J_PER_PJ * UJ_PER_J
_DRAM_UJ_PER_B = energy.DRAM_ACCESS_PJ_PER_BIT["ddr4"][0] * BITS_PER_BYTE * J_PER_PJ * UJ_PER_J
#: Array energy (uJ) of a mean TLC page read / program at the article's 3.3 V, 25 mA (L217).
_E_TR_UJ = float(energy.flash_op_energy_uj(ssd.TR_MEAN_US, energy.FLASH_ICC_MA["read"]))
_E_TPROG_UJ = float(energy.flash_op_energy_uj(ssd.TPROG_MEAN_US, energy.FLASH_ICC_MA["program"]))


#: DRAM on the DPU card, priced with the card (paper L211: 16 GB DDR5-5600; BlueField-3 has 16-32 GB on board).
DPU_ONBOARD_DRAM_GB = 16.0
_DDR5_USD_PER_GIB = component_price("dram_ddr5").value


#: Fig 3b (L76): a 4 TB (binary) PCIe 4.0 SSD's controller + DRAM (1 GB/TB) are 23.2% of its BOM.
GEN4_CONTROLLER_USD = mech.gen4_controller_usd(0.232, 4096 * bom.NAND_USD_PER_GB, 4.0 * bom.DRAM_USD_PER_GB, bom.OTHER_USD)


def _fit(name: str) -> tuple[float, str]:
    return data.fitted_value(name), data.fitted_source(name)


class Espresso(Model):
    name = "espresso"
    version = "1"
    summary = "Espresso CXL JBOF: SSDs harvest idle SSDs' processors and DRAM; throughput, latency, BOM, IOPS/$"
    source = "Espresso (Yi, An, Peng, ..., Jie Zhang; PKU), digest shared/research/espresso.md"
    variant_param = "design"
    family = "kv-object"
    family_fixed = {"size_from": "value_b"}
    boundary = (
        "one DPU's share of the CXL JBOF: the DPU host (card with its 16 GB, extra DRAM per GiB), all jbof_ssds SSDs "
        "(BOM), the CXL switch and half of the 24-bay enclosure (PSUs, fans, backplane); power: borrowers at their "
        "throughput, idle lenders' flash, the DPU, the switch and the enclosure"
    )
    #: points per evaluate call: measured with `dse bench espresso` (131,072 random points),
    #: 65,536 gave ~7% more points/s than the engine's 32,768 (fewer per-call and flash-solver
    #: slice overheads); 131,072 was no faster
    eval_chunk = 65536
    params = (
        Param("design", "espresso", "paper L237: the seven compared designs", choices=DESIGNS),
        # --- workload
        Param("workload", "micro", "Table 3 traces (workloads.csv) or the microbenchmark ('micro')", choices=data.WORKLOADS),
        Param("pattern", "sequential", "microbenchmarks run sequential and random I/O (Fig 10); used by 'micro' only", choices=PATTERNS),
        Param("read_frac", 1.0, "microbenchmark read share (Fig 10 runs pure reads and pure writes); 'micro' only", bounds=(0.0, 1.0)),
        Param("io_size_kib", 256.0, "Fig 10: 64-256 KB requests (Fig 11: 4 KB); 'micro' only", bounds=(4.0, 1024.0)),
        *knob_params("kv-object"),
        Param("size_from", "io_size_kib",
              "assumption: the article's io_size_kib wins unless a family comparison selects the family knob value_b",
              choices=("io_size_kib", "value_b"), doc="which parameter sets the microbenchmark's request size ('micro' only)"),
        Param("qd", 64.0, "paper L248: I/O depth 64 for the throughput tests (1 for the latency test); 'micro' only", bounds=(1.0, 256.0)),
        Param("load_frac", 0.7, "assumption: an open-loop load at 70% of saturation for loaded_latency_us", bounds=(0.0, 0.99)),
        Param("trace_qd", *_fit("trace_qd"), bounds=(1.0, 256.0),
              doc="queue depth the traces are replayed at (closed loop; the paper does not give their replay intensity)"),
        Param("trace_footprint_frac", 0.227,
              "Fig 4c: Tencent workload 0 needs 0.17 GB/TB for a 25% miss ratio -> a uniform footprint of 0.17/0.75 = 22.7% of the SSD; assumption: every trace",
              bounds=(0.001, 1.0)),
        # --- the JBOF
        Param("jbof_ssds", 12, "paper L209: at most 12 SSDs per DPU", bounds=(2, 24), integer=True),
        Param("lenders", 6, "paper L239/L244: workloads on 6 of 12 SSDs, 6 idle (lenders)", bounds=(0, 23), integer=True),
        Param("lender_util_frac", 0.0, "digest ambiguity 13: lenders idle unless swept (Fig 14 loads them)", bounds=(0.0, 1.0)),
        Param("lender_qd", 0.0, "digest ambiguity 13: lenders idle by default; Fig 14 (L279) runs them at QD 1-32",
              bounds=(0.0, 64.0), doc="queue depth of each lender's own 4 KiB sequential writes (Fig 14's lender workload); "
              "their cycles are not lent (mechanisms.lender_own_load)"),
        Param("capacity_tb", 4.0, "Table 2 L213: 4 TB SSDs for performance (2 TB for the BOM, Fig 13); binary TB", bounds=(0.5, 32.0)),
        # --- SSD compute
        Param("cores_per_ssd", 3, "paper L237: Shrunk/VH/ProcH/Espresso have 3 ARM cores", bounds=(1, 12), integer=True),
        Param("dram_gb_per_tb", 0.5, "paper L237: 0.5 GB DRAM per TB for the half-compute designs", bounds=(0.05, 2.0)),
        Param("conv_cores_per_ssd", 6, "Table 2 L213: 6 cores @ 1 GHz (Conv)", bounds=(1, 16), integer=True),
        Param("conv_dram_gb_per_tb", 1.0, "Table 2 L215: 1 GB DRAM per TB flash (Conv)", bounds=(0.05, 2.0)),
        Param("core_ghz", 1.0, "Table 2 L213: SSD cores at 1 GHz", bounds=(0.2, 4.0)),
        Param("core_contention_frac", 0.0,
              "assumption: linear core scaling as in the article's simulator (SimpleSSD's firmware cores are independent "
              "servers); range 0-0.2 (USL sigma of shared locks / DRAM / command queues)", bounds=(0.0, 0.5),
              doc="USL contention (sigma) of an SSD's cores: the share of firmware work serialized on shared resources"),
        Param("core_crosstalk_frac", 0.0,
              "assumption: no coherence cost between cores, as in the article's simulator; range 0-0.02 (USL kappa)",
              bounds=(0.0, 0.1), doc="USL crosstalk (kappa) of an SSD's cores: pairwise coherence cost"),
        Param("controller_gen", 5, "Table 2 L213 / L76: the article's SSDs have PCIe 5.0-class controllers (14/10 GB/s)",
              choices=mech.CONTROLLER_GENS, doc="SSD controller generation: 5 (the article's) or 4 (PCIe 4.0 x4 rated path, Fig 3b's price)"),
        Param("gen4_controller_usd", GEN4_CONTROLLER_USD,
              "paper L76 Fig 3b: controller + DRAM are 23.2% of a 4 TB PCIe 4.0 SSD's BOM; at the article's NAND and DRAM "
              "prices (L267) that is a $20.9 controller (digest M6)", bounds=(0.0, 500.0),
              doc="price of a PCIe 4.0 SSD controller (controller_gen 4)"),
        Param("slice_kcycles", *_fit("slice_kcycles"), bounds=(0.05, 50.0),
              doc="firmware cycles (thousands) per 4 KiB unit of a request"),
        Param("cmd_kcycles", *_fit("cmd_kcycles"), bounds=(0.0, 100.0), doc="firmware cycles (thousands) per command"),
        Param("miss_kcycles", data.fitted_value("slice_kcycles"),
              "assumption: handling a mapping miss (issue and install a map-page read) costs one unit of work (= slice_kcycles)",
              bounds=(0.0, 50.0)),
        Param("write_cycles_scale_x", *_fit("write_cycles_scale_x"), bounds=(0.1, 10.0),
              doc="firmware cycles of a 4 KiB write unit relative to a read unit"),
        # --- flash and link
        Param("channels", 8, "Table 2 L213: 8 channels", bounds=(2, 32), integer=True),
        Param("dies_per_channel", 8, "Table 2 L213: 8 dies per channel (4 planes each)", bounds=(1, 32), integer=True),
        Param("channel_mts", 2400.0, "Table 2 L213: 2400 MT/s, 8-bit channels", bounds=(400.0, 4800.0)),
        Param("gc_wa_x", 1.0, "digest ambiguity 14: GC is local and its rate is not given; 1 = no GC (fresh drive)", bounds=(1.0, 5.0)),
        Param("link_lanes", 2, "Table 2 L216: CXL 3.0 / PCIe 6.0 x2 per SSD", choices=(1, 2, 4, 8)),
        Param("rated_read_gbps", 14.0, "Table 2 L213: read 14 GB/s", bounds=(1.0, 64.0)),
        Param("rated_write_gbps", 10.0, "Table 2 L213: write 10 GB/s", bounds=(1.0, 64.0)),
        Param("fixed_latency_us", *_fit("fixed_latency_us"), bounds=(0.0, 500.0),
              doc="per-request latency outside firmware, flash and link (controller data path, DMA, ECC)"),
        # --- host (DPU)
        Param("host_cores", 16, "paper L211: 16-core DPU", bounds=(1, 128), integer=True),
        Param("host_ghz", HOST_GHZ, "paper L211: 2.1 GHz ARM DPU cores", bounds=(0.5, 5.0)),
        Param("host_dram_gb", 16.0, "paper L211: 16 GB DDR5-5600 on the DPU", bounds=(1.0, 1024.0)),
        Param("oc_ftl_scale_x", *_fit("oc_ftl_scale_x"), bounds=(0.1, 20.0),
              doc="host cycles per unit of SSD-firmware work when the FTL runs on the DPU (OC)"),
        Param("host_cmd_kcycles", HOST_DRIVER_KCYCLES_LINK,
              "link block: Linux NVMe driver CPU per command (submit + interrupt + completion, 4.5 us) at the DPU's "
              "2.1 GHz; assumption: ARM cores as fast per command as the x86 hosts measured",
              bounds=(0.0, 100.0), doc="DPU cycles (thousands) of the host NVMe driver per command it sends to an SSD"),
        Param("hyp_kcycles", 4.2,
              "assumption: ~2 us of DPU time per command (4.2 k cycles at 2.1 GHz) for a software NVMe virtualization layer; the paper gives none",
              bounds=(0.0, 500.0), doc="VH hypervisor host cycles (thousands) per command"),
        # --- harvesting
        Param("busy_watermark_frac", 0.75, "paper L158: a resource is busy above a 75% watermark", bounds=(0.05, 1.0)),
        Param("remote_overhead_frac", 0.031, "paper: +3.1% processor time for a redirected request (remote mapping table over CXL)",
              bounds=(0.0, 1.0)),
        Param("wrr_weight_ratio_x", 1.0, "assumption: equal NVMe WRR weights for borrower and shadow queues (L179 formula)", bounds=(0.1, 10.0)),
        Param("miss_target_frac", 0.10, "paper L185: borrow DRAM until the miss ratio is below 10%", bounds=(0.0, 1.0)),
        Param("agent_ns", 114.2, "paper L199: data-end agent dequeues one redirected op in 114.2 ns (DaisyPlus)", bounds=(0.0, 10000.0)),
        Param("host_lb_ns", 20.0, "paper L292: load-balance formula costs 20 ns host CPU per I/O", bounds=(0.0, 10000.0)),
        Param("redo_log_ns", 321.9, "paper L199: redo-log commit of a write to a lender-cached entry, 321.9 ns", bounds=(0.0, 10000.0)),
        Param("vh_redirect_frac", 0.29, "paper L105: copyback costs 22.5% of lifetime at 1 DWPD -> 1/0.775 - 1 = 0.29 extra writes",
              bounds=(0.0, 1.0)),
        # --- cost
        Param("cxl_premium_frac", bom.CXL_PREMIUM_FRAC, "paper L267: CXL controller + DRAM 10% above Shrunk's (cost block)", bounds=(0.0, 2.0)),
        Param("nand_usd_per_gb", bom.NAND_USD_PER_GB, "paper L267: $4.95 per 128 GB (cost block nand_espresso)", bounds=(0.001, 1.0)),
        Param("dram_usd_per_gb", bom.DRAM_USD_PER_GB, "paper L267: DDR4 $7.2 per GB (cost block dram_ddr4)", bounds=(0.1, 50.0)),
        Param("controller_usd", bom.CONTROLLER_USD, "paper L267: $48 enterprise SSD controller (cost block)", bounds=(0.0, 500.0)),
        Param("other_usd", bom.OTHER_USD, "paper L267: $6 PCB, packaging (cost block)", bounds=(0.0, 100.0)),
        Param("proc_idle_frac", 0.1,
              "assumption: a clock-gated idle ARM SSD processor draws ~10% of its active 6.45 W (L217); range 0.05-0.3",
              bounds=(0.0, 1.0), doc="idle power of an SSD processor as a share of its active power (idle lenders, idle cores)"),
        Param("oc_controller_usd", *_fit("oc_controller_usd"), bounds=(0.0, 200.0),
              doc="flash-only controller of an OC SSD (no FTL cores, no DRAM; the paper gives no price, digest ambiguity 1)"),
        # --- the JBOF around the SSDs (family metrics only; the article prices SSDs alone, digest ambiguity 12)
        Param("dpu_usd", component_price("dpu_bluefield3").value, "cost block: dpu_bluefield3 (street price, 2026)",
              bounds=(0.0, 20000.0), doc="the DPU host card, its 16 GB on board"),
        Param("dpu_power_w", component_price("dpu_bluefield3_power_w").value, "cost block: dpu_bluefield3_power_w (NVIDIA manual, max)",
              bounds=(0.0, 500.0), doc="DPU power (taken near full load)"),
        Param("cxl_switch_usd", component_price("cxl_switch").value, "cost block: cxl_switch (assumption, dated)", bounds=(0.0, 10000.0),
              doc="the JBOF's one CXL switch (the model's CXL round trips cross one switch)"),
        Param("cxl_switch_power_w", component_price("cxl_switch_power_w").value, "cost block: cxl_switch_power_w (FS2 digest, PEX8796 class)",
              bounds=(0.0, 200.0)),
        Param("enclosure_usd", 2000.0,
              "assumption: half of a ~US$4,000 2U 24-bay NVMe JBOF enclosure (redundant PSUs, fans, backplane); the reference "
              "chassis holds two DPUs (digest L66); no public price found",
              bounds=(0.0, 20000.0), doc="one DPU's share of the enclosure"),
        Param("enclosure_power_w", 60.0,
              "assumption: half of ~120 W of fans, backplane and PSU loss of a loaded 2U 24-bay enclosure",
              bounds=(0.0, 1000.0), doc="one DPU's share of the enclosure's own power"),
    )
    metrics = (
        Metric("throughput_gbps", "max", "per borrower SSD at the queue depth"),
        Metric("iops", "max", "requests/s per borrower SSD"),
        Metric("jbof_throughput_gbps", "max", "all borrowers together"),
        Metric("latency_us", "min", "mean request latency at the queue depth"),
        Metric("qd1_latency_us", "min", "unloaded latency of one request (nothing redirected)"),
        Metric("loaded_latency_us", "min", "mean latency of open-loop (Poisson) requests at load_frac of saturation"),
        Metric("saturation_gbps", "max", "bottleneck throughput with unlimited queue depth"),
        Metric("proc_util_frac", "max", "mean processor utilization over the JBOF's SSDs (OC: the DPU's)"),
        Metric("borrower_util_frac", None, "processor utilization of a borrower (OC: the DPU)"),
        Metric("lender_proc_util_frac", None, "processor utilization of a lender, own work + lent"),
        Metric("redirect_frac", None, "share of a borrower's commands served by lenders"),
        Metric("miss_ratio_frac", "min", "mapping-table cache miss ratio"),
        Metric("bottleneck_code", None, "what limits throughput", labels=("processor/host", "flash", "link", "rated data path", "queue depth")),
        Metric("firmware_kcycles_per_io", None, "SSD firmware work of one request (thousands of cycles; OC: before host scaling)"),
        Metric("data_end_iops", None, "the data-end bound: flash, link and rated data path"),
        Metric("bom_usd", "min", "bill of materials of one SSD"),
        Metric("bom_compute_usd", None, "controller + DRAM of one SSD, CXL premium included"),
        Metric("usd_per_tb", "min", "SSD bill of materials per TB of flash"),
        Metric("iops_per_usd", "max", "IOPS per BOM dollar of one SSD"),
        Metric("gbps_per_kusd", "max", "throughput per 1000 BOM dollars of one SSD"),
        Metric("energy_per_io_uj", "min", "energy of one request: flash, link PHY, DRAM, processors (lent cycles included)"),
        Metric("ssd_power_w", "min", "borrower SSD power at its throughput (flash idle included)"),
        Metric("lifetime_x", "max", "flash lifetime relative to writing each page once (VH copyback < 1)"),
        Metric("op_latency_us", "min", "mean request latency at the queue depth (= latency_us)"),
        *(Metric(k, None, v) for k, v in mech.BREAKDOWN.items()),
        Metric("harvest_gain_cap_frac", None, "most processor harvesting could add at this queue depth (0: queue-depth limited)"),
        Metric("lender_own_util_frac", None, "a lender's processor utilization by its own workload (lender_qd)"),
        Metric("lender_slowdown_frac", "min", "loss of a lender's own throughput from lending (its requests wait for cores)"),
        Metric("coherence_energy_per_io_uj", None, "CXL PHY energy of harvesting's traffic per request (mapping lines, lent DRAM)"),
        Metric("remote_dram_energy_per_io_uj", None, "energy of DRAM accesses made over CXL per request (lent DRAM, lender's lookups, redo)"),
        Metric("lender_power_w", "min", "one lender's power: flash idle + its processor's unlent idle share"),
        Metric("core_scaling_frac", None, "effective cores over cores (USL; 1 = linear)"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        """One borrower SSD's requests through the JBOF, stage by stage (the module docstring's path)."""
        d = _designs(p)  # which design
        w = _workload(p)  # read share, request sizes, pattern, footprint
        r = _roles(p)  # borrowers and lenders
        s = _ssd_resources(p, d, r)  # cores, DRAM, rated path, controller price
        m = _mapping_cache(p, d, w, r, s)  # miss ratio, lookups in lent DRAM (M3)
        v = _vh_redirect(p, d, w, r)  # VH's writes to lenders (M4)
        fw = _firmware_work(p, w, v, m)  # cycles per request
        de = _data_end(p, w, v, m, s)  # flash, link, rated data path
        pr = _processor(p, d, r, s, fw, de)  # own + lent cycles (M2)
        h = _dpu_host(p, d, r, s, v, m, fw, pr)  # the DPU's driver, OC's FTL, VH's hypervisor
        sat = _saturation(p, w, v, fw, de, pr, h)  # + the data-end agent: X_sat
        lat = _unloaded_latency(p, d, w, v, m, s, fw, de, h, sat)  # L0 at QD1
        cl = _closed_loop(p, d, w, v, fw, de, pr, h, sat, lat)  # X = min(X_sat, QD / L0), Little
        loaded = _open_loop(p, d, r, s, fw, de, pr, h, sat, cl)  # latency at load_frac of X_sat
        u = _utilizations(d, r, s, fw, de, pr, h, sat, cl)  # utilizations, bottleneck
        b = _bill_of_materials(p, d, s)  # one SSD's BOM (M6)
        e = _energy(p, d, w, v, m, s, fw, pr, h, lat, cl, u)  # energy and power (M7)
        j = _jbof(p, r, b, e)  # the JBOF's price and power
        out = _metrics(p, d, r, s, v, m, fw, de, pr, sat, lat, cl, loaded, u, b, e, j)
        return _mask_infeasible(out, r.valid, v.no_work)


# ----------------------------------------------------------------------------- stages of Espresso.evaluate
def _designs(p: Batch) -> SimpleNamespace:
    """Which of the seven compared designs (paper L237) each point is."""
    conv, oc = p.is_("design", "conv"), p.is_("design", "oc")
    vh, vh_ideal = p.is_("design", "vh"), p.is_("design", "vh_ideal")
    proch, espresso = p.is_("design", "proch"), p.is_("design", "espresso")
    return SimpleNamespace(conv=conv, oc=oc, vh=vh, vh_ideal=vh_ideal, proch=proch, espresso=espresso,
                           harvester=proch | espresso, any_vh=vh | vh_ideal)


def _workload(p: Batch) -> SimpleNamespace:
    """The workload: Table 3 statistics, or the microbenchmark's knobs."""
    micro = p.is_("workload", "micro")
    rf = where(micro, p.read_frac, _RF[p.workload])
    io_b = where(p.is_("size_from", "value_b"), p.value_b, p.io_size_kib * KIB)
    rd_b = where(micro, io_b, _RD_KIB[p.workload] * KIB)
    wr_b = where(micro, io_b, _WR_KIB[p.workload] * KIB)
    seq = micro & p.is_("pattern", "sequential")
    footprint = where(micro, 1.0, p.trace_footprint_frac)
    return SimpleNamespace(micro=micro, rf=rf, rd_b=rd_b, wr_b=wr_b, seq=seq, footprint=footprint)


def _roles(p: Batch) -> SimpleNamespace:
    """The JBOF's roles: borrowers run the workload, lenders are idle or light."""
    n_ssd = p.jbof_ssds
    n_l = p.lenders
    n_b = n_ssd - n_l
    valid = np.asarray(n_b >= 1)  # an array: ~valid must not be ~True == -2
    n_b = np.maximum(n_b, 1)
    return SimpleNamespace(n_ssd=n_ssd, n_l=n_l, n_b=n_b, valid=valid, lend_ratio=n_l / n_b)


def _ssd_resources(p: Batch, d: SimpleNamespace, r: SimpleNamespace) -> SimpleNamespace:
    """Resources of one SSD (Conv keeps the full compute; OC has none on the SSD), USL cores, controller generation."""
    cores = where(d.conv, p.conv_cores_per_ssd, p.cores_per_ssd)
    dram = where(d.conv, p.conv_dram_gb_per_tb, p.dram_gb_per_tb)
    # OC: the DPU's DRAM holds the mapping tables of all the JBOF's SSDs (M5)
    dram = where(d.oc, p.host_dram_gb / (r.n_ssd * p.capacity_tb), dram)
    # cores share the SSD's resources: universal scalability law (linear by default)
    eff_cores = mech.usl_cores(cores, p.core_contention_frac, p.core_crosstalk_frac)
    eff_lender_cores = mech.usl_cores(p.cores_per_ssd, p.core_contention_frac, p.core_crosstalk_frac)
    # controller generation: a PCIe 4.0 controller's rated data path and price
    gen4 = p.controller_gen == 4
    return SimpleNamespace(
        cores=cores, dram=dram, core_hz=p.core_ghz * 1e9, host_hz=p.host_cores * p.host_ghz * 1e9,
        eff_cores=eff_cores, eff_lender_cores=eff_lender_cores,
        rated_r=where(gen4, np.minimum(p.rated_read_gbps, mech.GEN4_READ_GBPS), p.rated_read_gbps),
        rated_w=where(gen4, np.minimum(p.rated_write_gbps, mech.GEN4_WRITE_GBPS), p.rated_write_gbps),
        controller_usd=where(gen4, p.gen4_controller_usd, p.controller_usd),
    )


def _mapping_cache(p: Batch, d: SimpleNamespace, w: SimpleNamespace, r: SimpleNamespace,
                   s: SimpleNamespace) -> SimpleNamespace:
    """Mapping cache (M3): miss ratio, with Espresso's borrowed DRAM of idle lenders.

    An idle lender needs none of its own DRAM; its DRAM is shared evenly among the borrowers."""
    need = ssd.MAP_GB_PER_TB * w.footprint
    m_local = where(w.seq, 0.0, ssd.miss_ratio(s.dram, w.footprint))
    borrowed = where(
        d.espresso & ~w.seq & (m_local > p.miss_target_frac),
        borrowed_dram_gb_per_tb(s.dram, need, p.miss_target_frac, r.lend_ratio * p.dram_gb_per_tb),
        0.0,
    )
    miss = where(w.seq, 0.0, ssd.miss_ratio(s.dram + borrowed, w.footprint))
    remote_lookup = np.minimum(borrowed / np.maximum(need, 1e-12), 1.0)  # lookups hitting a lent segment
    return SimpleNamespace(miss=miss, remote_lookup=remote_lookup)


def _vh_redirect(p: Batch, d: SimpleNamespace, w: SimpleNamespace, r: SimpleNamespace) -> SimpleNamespace:
    """VH (M4): the share of writes sent to lenders' flash (with copyback it comes back).

    The lenders' own capacity to absorb them is not checked: they are idle by default."""
    redirect_w = where(d.any_vh & (r.n_l >= 1), p.vh_redirect_frac, 0.0)
    # VH-ideal redirecting every write of a write-only load leaves the borrower no work:
    # the lenders' flash, not modeled, would bound it (infeasible; evaluated without it)
    no_work = d.vh_ideal & (w.rf <= 0.0) & (redirect_w >= 1.0)
    redirect_w = where(no_work, 0.0, redirect_w)
    local_w = where(d.vh_ideal, 1.0 - redirect_w, 1.0)  # share of writes the borrower serves
    wf = 1.0 - w.rf
    rf_w = wf * local_w  # the borrower's own writes per request
    return SimpleNamespace(redirect_w=redirect_w, no_work=no_work, wf=wf, rf_w=rf_w)


def _firmware_work(p: Batch, w: SimpleNamespace, v: SimpleNamespace, m: SimpleNamespace) -> SimpleNamespace:
    """Firmware work per request (cycles, M1): command, 4 KiB units, mapping misses."""
    rf, rf_w = w.rf, v.rf_w
    sl_r, sl_w = ssd.slices(w.rd_b), ssd.slices(w.wr_b)
    c_io = (
        p.cmd_kcycles * (rf + rf_w) + (rf * sl_r + rf_w * sl_w * p.write_cycles_scale_x) * p.slice_kcycles
        + m.miss * p.miss_kcycles
    ) * 1e3
    return SimpleNamespace(sl_r=sl_r, sl_w=sl_w, pg_r=ssd.flash_pages(w.rd_b), pg_w=ssd.flash_pages(w.wr_b), c_io=c_io)


def _data_end(p: Batch, w: SimpleNamespace, v: SimpleNamespace, m: SimpleNamespace,
              s: SimpleNamespace) -> SimpleNamespace:
    """Data-end stations: flash (block), link (block) and the rated data path."""
    bw_link = p.link_lanes * ssd.LINK_LANE_PAYLOAD_GBPS * 1e9
    rd_bytes, wr_bytes = w.rf * w.rd_b, v.rf_w * w.wr_b
    x_link = bw_link / np.maximum(rd_bytes, wr_bytes)
    x_rated = 1e9 / (rd_bytes / s.rated_r + wr_bytes / s.rated_w)
    x_other = np.minimum(x_link, x_rated)
    fa = ssd.flash_arrays(p.channels, p.dies_per_channel, p.channel_mts, m.miss)
    # writes are log-structured: multi-plane programs whatever the LBA pattern.  The
    # flash IOPS 1 / (rf / x_read + rf_w / x_write) is resolved where it can bind the data
    # end; +inf where it provably exceeds the link and the rated path (ssd.flash_data_end)
    x_flash, l_r, l_w = ssd.flash_data_end(fa, w.rd_b, w.wr_b, w.seq, p.gc_wa_x, w.rf, v.rf_w, x_other, p.n)
    return SimpleNamespace(bw_link=bw_link, x_link=x_link, fa=fa, x_flash=x_flash, l_r=l_r, l_w=l_w,
                           x_data=np.minimum(x_flash, x_other))


def _processor(p: Batch, d: SimpleNamespace, r: SimpleNamespace, s: SimpleNamespace, fw: SimpleNamespace,
               de: SimpleNamespace) -> SimpleNamespace:
    """Processor bound (M2): own cores, or own + lent cycles under the L179 split."""
    c_b = s.eff_cores * s.core_hz
    # the lenders' own workload takes cycles they would otherwise lend
    lender = _lender_load(p, de.fa, de.bw_link, s.eff_lender_cores * s.core_hz)
    u0 = np.minimum(p.lender_util_frac + lender["util"], 1.0)
    w_mark = p.busy_watermark_frac
    busy = de.x_data * fw.c_io > w_mark * c_b  # the borrower would be busy above the watermark
    borrow = d.harvester & (r.n_l >= 1) & busy & (u0 < w_mark)
    c_l = where(borrow, r.lend_ratio * s.eff_lender_cores * s.core_hz, 0.0)
    o, omega = p.remote_overhead_frac, p.wrr_weight_ratio_x
    cap_cycles, p_cap = harvest_capacity(c_b, c_l, u0, o, w_mark)
    return SimpleNamespace(c_b=c_b, lender=lender, u0=u0, w_mark=w_mark, borrow=borrow, c_l=c_l, o=o, omega=omega,
                           cap_cycles=cap_cycles, p_cap=p_cap, x_proc=cap_cycles / fw.c_io)


def _dpu_host(p: Batch, d: SimpleNamespace, r: SimpleNamespace, s: SimpleNamespace, v: SimpleNamespace,
              m: SimpleNamespace, fw: SimpleNamespace, pr: SimpleNamespace) -> SimpleNamespace:
    """The DPU host bound: its NVMe driver per command, OC's FTL (M5), VH's hypervisor (M4).

    The driver sends every command to the SSDs (all designs; its time is also in every
    design's latency, HOST_NVME_US).  OC: the FTL of every active SSD runs on the same cores,
    and a mapping miss is a map-page read the host FTL sends, one more command.  VH: a central
    hypervisor handles every command (+ the copybacks, each one more command)."""
    c_ftl_oc = p.oc_ftl_scale_x * fw.c_io
    hyp_cmds = 1.0 + where(d.vh, v.wf * v.redirect_w, 0.0)
    hyp_c = p.hyp_kcycles * 1e3 * hyp_cmds
    host_cmds = where(d.oc, 1.0 + m.miss, hyp_cmds)
    c_host = p.host_cmd_kcycles * 1e3 * host_cmds + where(d.oc, c_ftl_oc, 0.0) + where(d.any_vh, hyp_c, 0.0)
    x_host = s.host_hz / (r.n_b * np.maximum(c_host, 1e-9))
    x_proc = where(d.oc, x_host, np.minimum(pr.x_proc, x_host))
    return SimpleNamespace(c_ftl_oc=c_ftl_oc, hyp_c=hyp_c, c_host=c_host, x_host=x_host, x_proc=x_proc)


def _saturation(p: Batch, w: SimpleNamespace, v: SimpleNamespace, fw: SimpleNamespace, de: SimpleNamespace,
                pr: SimpleNamespace, h: SimpleNamespace) -> SimpleNamespace:
    """Saturation throughput: processor/host, data end and the borrower's data-end agent (L199)."""
    # the borrower's data-end agent dequeues every redirected DMA/flash op (L199)
    pages = w.rf * fw.pg_r + v.wf * fw.pg_w
    x_agent = 1e9 / np.maximum(pr.p_cap * pages * p.agent_ns, 1e-30)
    return SimpleNamespace(pages=pages, x_sat=np.minimum(np.minimum(h.x_proc, de.x_data), x_agent))


def _unloaded_latency(p: Batch, d: SimpleNamespace, w: SimpleNamespace, v: SimpleNamespace, m: SimpleNamespace,
                      s: SimpleNamespace, fw: SimpleNamespace, de: SimpleNamespace, h: SimpleNamespace,
                      sat: SimpleNamespace) -> SimpleNamespace:
    """Unloaded latency (QD1: nothing is busy, nothing redirected, M1) and a redirect's extra time."""
    t_fw = where(d.oc, h.c_ftl_oc / (p.host_ghz * 1e9), fw.c_io / s.core_hz) * US_PER_S
    # OC: a mapping miss is a read the host FTL issues to the SSD, one more command trip
    t_host = ssd.HOST_NVME_US + where(d.oc, m.miss * ssd.HOST_NVME_US, 0.0)
    t_host = t_host + where(d.any_vh, p.hyp_kcycles * 1e3 / (p.host_ghz * 1e9) * US_PER_S, 0.0)
    bytes_io = w.rf * w.rd_b + v.wf * w.wr_b
    t_xfer = bytes_io / de.bw_link * US_PER_S
    # Espresso: lookups in lent DRAM cross the CXL fabric; writes to them commit a redo log
    t_remote_dram = m.remote_lookup * (_CXL_RT_NS + v.wf * p.redo_log_ns) / NS_PER_US
    l0 = t_host + p.fixed_latency_us + t_fw + w.rf * de.l_r + v.wf * de.l_w + t_xfer + t_remote_dram
    # a redirected request adds the host's LB formula, the lender's mapping-line fetches
    # over CXL and the borrower's agent dequeuing its ops
    map_lines = np.ceil(np.maximum(fw.sl_r, fw.sl_w) / ssd.MAP_ENTRIES_PER_LINE)
    t_redirect = (p.host_lb_ns + map_lines * _CXL_RT_NS + sat.pages * p.agent_ns) / NS_PER_US
    return SimpleNamespace(t_fw=t_fw, t_host=t_host, bytes_io=bytes_io, t_xfer=t_xfer, t_remote_dram=t_remote_dram,
                           l0=l0, map_lines=map_lines, t_redirect=t_redirect)


def _closed_loop(p: Batch, d: SimpleNamespace, w: SimpleNamespace, v: SimpleNamespace, fw: SimpleNamespace,
                 de: SimpleNamespace, pr: SimpleNamespace, h: SimpleNamespace, sat: SimpleNamespace,
                 lat: SimpleNamespace) -> SimpleNamespace:
    """Closed loop at the queue depth: asymptotic bound, Little for the latency, the redirect split.

    A borrower redirects only while its own processor would be busy (above the watermark)."""
    qd = where(w.micro, p.qd, p.trace_qd)
    x_sat, l0 = sat.x_sat, lat.l0

    def split(load):
        on = pr.borrow & (load * fw.c_io > pr.w_mark * pr.c_b)
        return where(on, redirect_frac(load * fw.c_io, pr.c_b, pr.c_l, pr.u0, pr.o, pr.omega, pr.w_mark), 0.0)

    # the split is taken at the load the queue depth allows without the redirect latency
    p_red = split(np.minimum(x_sat, qd * US_PER_S / l0))
    l0_loaded = l0 + p_red * lat.t_redirect
    x = np.minimum(x_sat, qd * US_PER_S / l0_loaded)
    latency = np.maximum(qd / x * US_PER_S, l0_loaded)
    breakdown = mech.latency_breakdown(lat.t_host, np.broadcast_to(p.fixed_latency_us, l0.shape), lat.t_fw,
                                       w.rf * de.l_r + v.wf * de.l_w, lat.t_xfer, lat.t_remote_dram, p_red * lat.t_redirect)
    # what harvesting could add at this queue depth (unlimited lent cycles; OC has no SSD processor)
    x_own = where(d.oc, h.x_host, np.minimum(np.minimum(pr.c_b / fw.c_io, h.x_host), de.x_data))
    gain_cap = where(d.oc, 0.0, mech.harvest_gain_cap_frac(x_own, np.minimum(h.x_host, de.x_data), qd * US_PER_S / l0))
    return SimpleNamespace(p_red=p_red, l0_loaded=l0_loaded, x=x, latency=latency, breakdown=breakdown,
                           gain_cap=gain_cap)


def _open_loop(p: Batch, d: SimpleNamespace, r: SimpleNamespace, s: SimpleNamespace, fw: SimpleNamespace,
               de: SimpleNamespace, pr: SimpleNamespace, h: SimpleNamespace, sat: SimpleNamespace,
               cl: SimpleNamespace) -> np.ndarray:
    """Open loop at load_frac of saturation: M/M/c at the processor (Sakasegawa), M/D/1 at the data end."""
    lam = p.load_frac * sat.x_sat
    servers = where(d.oc, p.host_cores, np.maximum(np.rint(pr.cap_cycles / s.core_hz), 1.0))
    # each server runs at cap_cycles / servers so the station saturates at x_proc, the
    # processor bound of x_sat: with a whole number of cores (c_io / core_hz each) the
    # rounded count of lent cores fell below the capacity and rho passed 1 before x_sat
    svc = where(d.oc, h.c_host / (p.host_ghz * 1e9), fw.c_io * servers / pr.cap_cycles)
    lam_proc = where(d.oc, r.n_b * lam, lam)
    w_proc = mmc_wait_approx(lam_proc, svc, servers)
    w_data = queueing.md1_wait(lam, 1.0 / de.x_data)
    return cl.l0_loaded + (w_proc + w_data) * US_PER_S


def _utilizations(d: SimpleNamespace, r: SimpleNamespace, s: SimpleNamespace, fw: SimpleNamespace,
                  de: SimpleNamespace, pr: SimpleNamespace, h: SimpleNamespace, sat: SimpleNamespace,
                  cl: SimpleNamespace) -> SimpleNamespace:
    """Processor utilizations at the achieved load and split, and the bottleneck's code."""
    x, p_red = cl.x, cl.p_red
    demand = x * fw.c_io
    u_b = (1.0 - p_red) * demand / pr.c_b
    u_l = pr.u0 + where(pr.borrow, p_red * demand * (1.0 + pr.o) / np.maximum(pr.c_l, 1e-30), 0.0)
    u_host_oc = r.n_b * x * h.c_host / s.host_hz
    u_b = where(d.oc, u_host_oc, u_b)
    u_l = where(d.oc, 0.0, u_l)
    util = where(d.oc, u_host_oc, (r.n_b * u_b + r.n_l * u_l) / r.n_ssd)
    x_data = de.x_data
    code = where(
        x < sat.x_sat * (1.0 - 1e-9), 4,
        where(sat.x_sat == x_data, where(x_data == de.x_flash, 1, where(x_data == de.x_link, 2, 3)), 0),
    )
    return SimpleNamespace(u_b=u_b, u_l=u_l, util=util, code=code)


def _bill_of_materials(p: Batch, d: SimpleNamespace, s: SimpleNamespace) -> SimpleNamespace:
    """Bill of materials of one SSD (M6); proch and espresso pay the CXL premium."""
    premium = where(d.harvester, p.cxl_premium_frac, 0.0)
    ssd_usd, compute_usd = bom.ssd_bom_usd(
        p.capacity_tb, s.cores, REF_CORES, s.dram, premium, nand_usd_per_gb=p.nand_usd_per_gb,
        dram_usd_per_gb=p.dram_usd_per_gb, controller_usd=s.controller_usd, other_usd=p.other_usd,
    )
    oc_usd = bom.oc_bom_usd(p.capacity_tb, p.oc_controller_usd, nand_usd_per_gb=p.nand_usd_per_gb, other_usd=p.other_usd)
    return SimpleNamespace(bom_usd=where(d.oc, oc_usd, ssd_usd),
                           compute_usd=where(d.oc, p.oc_controller_usd, compute_usd))


def _energy(p: Batch, d: SimpleNamespace, w: SimpleNamespace, v: SimpleNamespace, m: SimpleNamespace,
            s: SimpleNamespace, fw: SimpleNamespace, pr: SimpleNamespace, h: SimpleNamespace, lat: SimpleNamespace,
            cl: SimpleNamespace, u: SimpleNamespace) -> SimpleNamespace:
    """Energy per request (M7: flash ops, link PHY, DRAM, processor cycles) and SSD power."""
    rf, wf, p_red = w.rf, v.wf, cl.p_red
    e_xfer = energy.flash_transfer_energy_uj(ssd.FLASH_BASE.page_bytes, p.channel_mts)
    e_read = _E_TR_UJ + e_xfer
    e_prog = _E_TPROG_UJ + e_xfer
    copyback = where(d.vh, wf * v.redirect_w * fw.pg_w, 0.0)  # pages read on the lender and programmed again
    flash_uj = rf * fw.pg_r * e_read + wf * fw.pg_w * p.gc_wa_x * e_prog + m.miss * e_read + copyback * (e_read + e_prog)
    link_bytes = lat.bytes_io + where(d.vh, 2.0 * wf * v.redirect_w * w.wr_b, 0.0)
    phy_uj = link_bytes * _PHY_UJ_PER_B
    dram_uj = (BUFFER_PASSES * lat.bytes_io + (rf * fw.sl_r + wf * fw.sl_w) * MAP_ACCESS_B) * _DRAM_UJ_PER_B
    # (the DPU's driver cycles are left out for every design: the SSD's energy, as before)
    cycles = fw.c_io * (1.0 + p_red * pr.o) + where(d.oc, h.c_ftl_oc - fw.c_io, 0.0) + where(d.any_vh, h.hyp_c, 0.0)
    # harvesting's own traffic: mapping lines and lent-DRAM lookups over CXL, redo records
    coh_uj, remote_dram_uj, redo_uj = mech.coherence_energy_uj(
        p_red, lat.map_lines, m.remote_lookup, wf, _PHY_UJ_PER_B, _DRAM_UJ_PER_B)
    e_io_uj = flash_uj + phy_uj + dram_uj + cycles * J_PER_CYCLE * UJ_PER_J + coh_uj + redo_uj
    flash_idle_w = energy.flash_idle_power_w(p.channels * p.dies_per_channel)
    # idle processors: a borrower's idle share (OC SSDs have none), a lender's unlent share
    idle_b_w = where(d.oc, 0.0, mech.idle_processor_power_w(s.cores, REF_CORES, PROC_W, p.proc_idle_frac, u.u_b))
    idle_l_w = where(d.oc, 0.0, mech.idle_processor_power_w(p.cores_per_ssd, REF_CORES, PROC_W, p.proc_idle_frac, u.u_l))
    return SimpleNamespace(e_io_uj=e_io_uj, coh_uj=coh_uj, remote_dram_uj=remote_dram_uj,
                           power_w=e_io_uj / UJ_PER_J * cl.x + flash_idle_w + idle_b_w, lender_w=flash_idle_w + idle_l_w)


def _jbof(p: Batch, r: SimpleNamespace, b: SimpleNamespace, e: SimpleNamespace) -> SimpleNamespace:
    """The JBOF (kv-object family): every SSD, the DPU, the switch and the enclosure; price and power."""
    extra_dram_gib = np.maximum(p.host_dram_gb - DPU_ONBOARD_DRAM_GB, 0.0)  # binary GB, as bom.py
    jbof_usd = r.n_ssd * b.bom_usd + p.dpu_usd + extra_dram_gib * _DDR5_USD_PER_GIB + p.cxl_switch_usd + p.enclosure_usd
    jbof_w = r.n_b * e.power_w + r.n_l * e.lender_w + p.dpu_power_w + p.cxl_switch_power_w + p.enclosure_power_w
    return SimpleNamespace(usd=jbof_usd, w=jbof_w)


def _metrics(p: Batch, d: SimpleNamespace, r: SimpleNamespace, s: SimpleNamespace, v: SimpleNamespace,
             m: SimpleNamespace, fw: SimpleNamespace, de: SimpleNamespace, pr: SimpleNamespace, sat: SimpleNamespace,
             lat: SimpleNamespace, cl: SimpleNamespace, loaded: np.ndarray, u: SimpleNamespace, b: SimpleNamespace,
             e: SimpleNamespace, j: SimpleNamespace) -> dict[str, np.ndarray]:
    """The metric columns: per borrower SSD, per SSD's BOM, and the JBOF's (family) columns."""
    x, bytes_io, lender = cl.x, lat.bytes_io, pr.lender
    gbps = x * bytes_io / 1e9
    return {
        "throughput_gbps": gbps,
        "iops": x,
        "jbof_throughput_gbps": gbps * r.n_b,
        "latency_us": cl.latency,
        "qd1_latency_us": lat.l0,
        "loaded_latency_us": loaded,
        "saturation_gbps": sat.x_sat * bytes_io / 1e9,
        "proc_util_frac": u.util,
        "borrower_util_frac": u.u_b,
        "lender_proc_util_frac": u.u_l,
        "redirect_frac": cl.p_red,
        "miss_ratio_frac": m.miss,
        "bottleneck_code": u.code,
        "firmware_kcycles_per_io": fw.c_io * 1e-3,
        "data_end_iops": de.x_data,
        "bom_usd": b.bom_usd,
        "bom_compute_usd": b.compute_usd,
        "usd_per_tb": b.bom_usd / p.capacity_tb,
        "iops_per_usd": x / b.bom_usd,
        "gbps_per_kusd": gbps / b.bom_usd * 1e3,
        "energy_per_io_uj": e.e_io_uj,
        "ssd_power_w": e.power_w,
        "work_per_s": x * r.n_b,
        "op_latency_us": cl.latency,
        "capex_usd": j.usd,
        "power_w": j.w,
        "lifetime_x": where(d.vh, 1.0 / (1.0 + v.redirect_w), 1.0),
        **cl.breakdown,
        "harvest_gain_cap_frac": cl.gain_cap,
        "lender_own_util_frac": lender["util"],
        "lender_slowdown_frac": mech.lender_slowdown_frac(
            lender["latency_us"], lender["service_us"], fw.c_io / s.core_hz * US_PER_S, p.cores_per_ssd, lender["util"], u.u_l),
        "coherence_energy_per_io_uj": e.coh_uj,
        "remote_dram_energy_per_io_uj": e.remote_dram_uj,
        "lender_power_w": e.lender_w,
        "core_scaling_frac": s.eff_cores / s.cores,
    }


def _mask_infeasible(out: dict, valid: np.ndarray, no_work: np.ndarray) -> dict:
    """Declare the infeasible points and NaN the metrics that have no meaning there."""
    # a JBOF without a borrower has no workload: its performance metrics are NaN
    out["infeasible"] = {NO_BORROWER: ~valid, NO_BORROWER_WORK: no_work}
    if not np.all(valid):
        nan_or_one = where(valid, 1.0, np.nan)
        for k in PERF_METRICS:
            out[k] = out[k] * nan_or_one
    if np.any(no_work):  # evaluated with nothing redirected: no number of it holds
        nan_or_one = where(no_work, np.nan, 1.0)
        for k in (*PERF_METRICS, "firmware_kcycles_per_io", "data_end_iops"):
            out[k] = out[k] * nan_or_one
    return out


def _lender_load(p: Batch, fa: dict, bw_link, lender_hz) -> dict[str, np.ndarray]:
    """A lender's own workload (Fig 14: 4 KiB sequential writes at ``lender_qd``), from the
    same stations as a borrower's request: the host's NVMe path, the fixed controller
    latency, its firmware (one 4 KiB write unit + the command), the flash block's program
    path and the link.  Idle lenders (``lender_qd`` 0 everywhere) skip the flash call."""
    n = p.n
    kcycles = p.cmd_kcycles + p.slice_kcycles * p.write_cycles_scale_x
    service_us = np.broadcast_to(kcycles * 1e3 / (p.core_ghz * 1e9) * US_PER_S, (n,))
    if not np.any(np.asarray(p.lender_qd) > 0):
        zero = np.zeros(n)
        return {"util": zero, "iops": zero, "latency_us": service_us, "service_us": service_us}
    l_flash = flash.unloaded_latency_us(fa, mech.LENDER_IO_B, 0.0, True, wa=p.gc_wa_x)
    latency = ssd.HOST_NVME_US + p.fixed_latency_us + service_us + l_flash + mech.LENDER_IO_B / bw_link * US_PER_S
    iops, util = mech.lender_own_load(p.lender_qd, latency, kcycles, lender_hz)
    return {"util": np.broadcast_to(util, (n,)), "iops": iops, "latency_us": np.broadcast_to(latency, (n,)), "service_us": service_us}


def mmc_wait_approx(lam, service, servers) -> np.ndarray:
    """M/M/c mean wait by Sakasegawa's approximation (Sakasegawa 1977; Hopp & Spearman,
    Factory Physics, eq. 8.8): W = S rho^(sqrt(2(c+1)) - 1) / (c (1 - rho)); inf at rho >= 1.
    Used instead of the queueing block's exact Erlang C, whose special functions are too
    slow for per-point server counts at a million points per second."""
    rho = lam * service / servers
    ok = rho < 1.0
    r = where(ok, rho, 0.5)
    w = service * r ** (np.sqrt(2.0 * (servers + 1.0)) - 1.0) / (servers * (1.0 - r))
    return where(ok, w, np.inf)


__all__ = ["Espresso", "DESIGNS", "PATTERNS"]
