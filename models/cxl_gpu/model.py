"""cxl-gpu: GPU memory expansion over CXL against UVM and GPUDirect Storage.

Source: "CXL-GPU: Pushing GPU Memory Boundaries with the Integration of CXL
Technologies" (FULL preprint and IEEE Micro 45(6), 2025; digest
shared/research/cxl-gpu.md).  A GPU with a CXL root complex reaches Type-3 endpoints
(DRAM, or Optane / Z-NAND / NAND behind an internal DRAM cache) with plain loads and
stores.  Time per (warp) instruction of a kernel, all variants normalized to GPU-DRAM:

    T = smooth-max(issue + off-chip loads x exposed load time,     (latency-bound stream)
                   off-chip stores x store drain,                  (posted stores)
                   link bytes / link bandwidth, DRAM-endpoint bytes / its bandwidth)
        + GC pauses (SSD endpoints, without DS) + page faults (UVM, GDS)

* Instruction mix (Table 1b, ``workloads.py``): off-chip loads and stores per
  instruction = memory share x load/store split x ``offchip_frac`` (fitted), x 0.125 for
  compute-intensive kernels (87.5% fewer accesses, 003:L226); their stores can be given
  another scale (``compute_store_scale``: 1 = Vortex's write-through caches).
* Loads (digest M2): each waits its memory's latency, overlapped by the 32-entry memory
  queue of a root port (003:L138) -- on the CXL path: controller round trip ``ctrl_rt_ns``
  + link (M1, ``paths.py``), then the DRAM endpoint's DDR5-5600, or the SSD endpoint's
  internal DRAM on a hit and the flash read on a miss (M5).  An SSD endpoint overlaps
  fewer misses than the queue holds: scattered misses ``miss_concurrency`` at a time,
  a stream's misses (one page, one die) ``seq_miss_concurrency`` (both fitted).
* Internal-DRAM hit rate by access pattern and SR policy, SR size by DevLoad (M6,
  ``speculative.py``).  A Rand (graph) access's address comes from loaded data, so the SR
  sees only ``min(queue, pointer_chains)`` requests ahead of it (``sr_lookahead_req``).
* The GPU-DRAM ideal keeps its 32-entry local queue of requests in flight; a CXL design
  with more root ports or deeper queues keeps more (``mlp_vs_ideal_x``) and may run faster
  than the ideal -- the only way a design beats it.
* Stores (M7): posted; they drain at ``store_ns`` each (fitted) in parallel with the
  loads, so the two join in a smooth roofline (the 4-norm).  On erase media a GC pause
  blocks the endpoint's writes; the GPU runs on until the 32-entry memory queue holds
  only blocked stores, then stalls whole, loads behind the stores (head-of-line
  blocking, 003:L190-197; ``hol_stall_us``).  A pause comes per ``interval_gib`` written
  (fitted) and lasts one erase for a sequential writer, an erase plus the victim's
  valid-page copies otherwise (flash block).  Deterministic store completes stores in GPU memory and keeps writes off a
  port that announced internal work: only writes overflowing the reserved GPU memory
  during a pause stall.
* UVM / GDS (M3, M4): a fault per page of non-resident data (x ``faults_per_page``,
  fitted), each costing the host runtime (``host_fault_us``: 45 us in MICRO, ~500 us in
  FULL) and the page copy over PCIe 5.0 x8 (link block); GDS adds the page's SSD read.

Cost: media $/GB (parameters), CXL and SSD controllers, internal DRAM, switches (cost
block).  Power: controllers, DRAM background or flash idle, and per-byte energy of the
link, DRAM and flash (energy block).  What each fitted constant was fitted to:
``calibration.py`` and ``calibration.toml``.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from dse.model import Batch, Metric, Model, Param
from dse.units import BITS_PER_BYTE, CACHELINE_B, GB, GIB, J_PER_PJ, KIB, MS_PER_S, NS_PER_S, NS_PER_US
from models.blocks import energy, flash, link, workload
from models.blocks.cost import component_price
from models.cxl_gpu import paths, speculative
from models.cxl_gpu import workloads as wl
from models.cxl_gpu.fitted import CAL

DESIGNS = ("gpu_dram", "uvm", "gds", "cxl", "cxl_naive", "cxl_dyn", "cxl_sr", "cxl_ds")
#: SR policy of each design (codes into speculative.POLICIES); CXL-DS adds DS to CXL-SR
#: (Fig 9b compares DS against SR, 003:L238).
DESIGN_POLICY = {d: speculative.POLICIES.index(pol) for d, pol in (
    ("gpu_dram", "none"), ("uvm", "none"), ("gds", "none"), ("cxl", "none"), ("cxl_naive", "naive"),
    ("cxl_dyn", "dyn"), ("cxl_sr", "sr"), ("cxl_ds", "sr"))}
#: Designs whose GPU reaches its expansion memory over CXL (the rest: GPU memory alone, UVM, GDS).
CXL_DESIGNS = ("cxl", "cxl_naive", "cxl_dyn", "cxl_sr", "cxl_ds")
MEDIA_LABELS = paths.MEDIA

KINSTR = 1000.0
#: Infeasible points (``run_full``'s reasons) and where metrics do not apply.
GDS_NEEDS_SSD = "GPUDirect Storage needs an SSD medium (media=dram)"
NO_FIT = "working set larger than GPU memory plus the endpoints' capacity"
NO_CXL = "designs without CXL (gpu_dram, uvm, gds)"
#: Passes a kernel makes over its data.  Assumption: with the working set inside GPU memory,
#: UVM still faults every page once (first touch) per 10 passes of reuse.
UVM_REUSE_PASSES = 10.0
#: GPU memory reserved for deterministic store, GiB.  The paper gives no size; digest
#: ambiguity 13 sizes it as write rate x GC pause (lambda_w x T_GC), the bytes a kernel
#: writes while one pause holds its writes back.  On Z-NAND (the DS study's medium) that
#: peaks at 0.062 GiB for gauss (~1 GB/s of writes x a 69 ms scattered-write pause); the
#: default doubles it and rounds to a power of two, since the need moves with the fitted
#: GC interval and the flash block's timings (test_ds_reserve_covers_every_pause).  The
#: previous default, an unsourced 1 GiB, took 16x the need from the 8 GiB of local memory.
DS_RESERVED_GIB = 0.125
#: CXL controller power, W.  Assumption as in the cxl-expander model (~8 W for a Type-3 ASIC).
CXL_CTRL_POWER_W = 8.0
#: SSD controller power, W.  Assumption: about half of an enterprise NVMe SSD's ~8-10 W
#: active power (Optane P4800X datasheet: 8-10 W read; anandtech review).
SSD_CTRL_POWER_W = 4.0
#: DRAM capacity served by one DDR5 subchannel (4 x8 16 Gb devices = 8 GiB), for the
#: background power per GiB.  Assumption: 16 Gb DDR5 devices.
GIB_PER_DDR5_SUBCHANNEL = 8.0

_E5 = energy.dram_standard_energy("DDR5-4800")  # energy block has no DDR5-5600 set; same core
DRAM_BG_W_PER_GIB = float(_E5["refresh_w"] + _E5["precharge_standby_w"]) / GIB_PER_DDR5_SUBCHANNEL
DRAM_PJ_PER_BIT = float(energy.dram_energy_per_bit_pj("DDR5-4800", 0.0, paths.READ_FRAC))
LINK_PJ_PER_BIT = energy.link_pj_per_bit("cxl_phy")
#: Energy of reading one fill from flash (array read + channel transfer), pJ, per medium.
FILL_PJ = np.array([
    0.0 if not paths.MEDIA_ROWS[m]["flash_config"] else
    float(energy.flash_page_energy_uj(
        "read", paths.MEDIA_TABLE["miss_ns"][i] / NS_PER_US, paths.FILL_B,
        flash.config(paths.MEDIA_ROWS[m]["flash_config"]).channel_gbps * 1e3,
    )) * 1e6
    for i, m in enumerate(paths.MEDIA)
])
FLASH_IDLE_W = energy.flash_idle_power_w(paths.MEDIA_TABLE["dies"])

_PRICE = {k: component_price(k) for k in ("cxl_memory_controller", "ssd_controller_enterprise", "dram_ddr4",
                                            "dram_hbm", "cxl_switch", "host_server_2s")}
_MEDIA_USD = dict(zip(paths.MEDIA, paths.MEDIA_TABLE["usd_per_gb"]))
_SRC_PRICE = {m: paths.MEDIA_ROWS[m]["source"] for m in paths.MEDIA}


def _price_param(m: str) -> Param:
    return Param(f"{m}_usd_per_gb", round(float(_MEDIA_USD[m]), 4), f"media.csv: {_SRC_PRICE[m]}", bounds=(0.01, 50.0),
                 doc=f"price of the {paths.MEDIA_ROWS[m]['device']} medium per GB")


#: The smooth roofline joining the load/compute stream, the drain of posted stores and the
#: bandwidth bounds is the 4-norm ``(sum t_i^4)^(1/4)``.  Assumption: exponent 4 (a hard
#: maximum would let a store-bound kernel hide all of its load latency; k = 8 fits the
#: DRAM-endpoint classes as well).


def roofline(*times: np.ndarray) -> np.ndarray:
    """Smooth maximum of the times (ns per instruction) of parts that overlap."""
    total = 0.0
    for t in times:
        t2 = np.square(t)
        total = total + np.square(t2)
    return np.sqrt(np.sqrt(total))


def hol_stall_us(pause_us: np.ndarray, queue_entries: np.ndarray, stores_per_ns: np.ndarray) -> np.ndarray:
    """GPU stall (us) of one GC pause that blocks the endpoint's writes (digest M5).  The
    GPU keeps issuing until its ``queue_entries`` memory-queue slots (003:L138) all hold
    blocked stores, which takes ``queue_entries / store rate``; loads wait behind them for
    the rest of the pause.  (Loads are taken to pass blocked stores until the queue is
    full; a strict FIFO would stall at the first blocked store, i.e. sooner.)"""
    rate = np.asarray(stores_per_ns, dtype=np.float64)
    with np.errstate(divide="ignore"):
        fill_us = np.where(rate > 0, queue_entries / np.maximum(rate, 1e-300) / NS_PER_US, np.inf)
    return np.maximum(pause_us - fill_us, 0.0)


class CxlGpu(Model):
    name = "cxl-gpu"
    version = "1"
    summary = "GPU memory expansion over CXL (DRAM / Optane / Z-NAND / NAND endpoints) vs UVM and GPUDirect Storage"
    source = "CXL-GPU (Panmnesia/KAIST), FULL preprint and IEEE Micro 45(6) 2025; digest shared/research/cxl-gpu.md"
    variant_param = "design"
    params = (
        Param("design", "cxl", "digest section 1: five GPU configurations + GPU-DRAM ideal + the SR ablation (003:L207, L248-262)",
              choices=DESIGNS),
        Param("media", "dram", "Table 1a: DDR5-5600, Optane P5800X, Z-NAND 983 ZET, NAND 980 Pro (003:L179-182)", choices=MEDIA_LABELS),
        Param("workload", "vadd", "Table 1b: 11 kernels + 2 real-world workloads (003:L173-185)", choices=wl.NAMES),
        Param("ctrl_rt_ns", 80.0, "digest M1 / ambiguity 1: 'two-digit ns' controller round trip, >3x below the 250 ns of SMT/TPP (003:L105-107); "
              "80 ns = the link block's four port traversals (Pond)", bounds=(10.0, 400.0),
              doc="round trip through the root-port and endpoint CXL controllers (protocol conversion included)"),
        *link.params(gens=paths.LINK_GENS, lanes=paths.LANES, default_gen="pcie5", default_lanes=8,
                     source={"link_gen": "Table 1a: PCIe 5.0 32 GT/s (003:L175-178)", "lanes": "Table 1a: x8 (003:L175)"}),
        Param("root_ports", 1, "digest ambiguity 14: one endpoint on one x8 link in the evaluation", bounds=(1, 8), integer=True),
        Param("eps_per_port", 1, "digest ambiguity 14: directly attached endpoint (more than one needs a switch)", bounds=(1, 4), integer=True),
        Param("ep_capacity_gib", 0.0,
              "0: sized to the footprint (what GPU memory does not hold, split over the endpoints); the study's spaces "
              "fix 256 GiB (983 ZET ships 480/960 GB; DRAM expanders 128-512 GiB)",
              bounds=(0.0, 8192.0), doc="capacity of each endpoint; 0 = the footprint's far part / endpoints"),
        Param("idram_gib", speculative.IDRAM_REF_GIB, "digest ambiguity 7: 1.5 GB internal DRAM (sibling article, 983 ZET)",
              bounds=(0.25, 16.0), doc="internal DRAM cache of an SSD endpoint"),
        Param("queue_entries", 32, "paper: SR and memory queues of 32 entries per root port (003:L138)", bounds=(8, 128), integer=True),
        Param("pointer_chains", paths.GPU_MAX_OUTSTANDING,
              "assumption: a graph kernel walks one vertex per warp; Vortex's 8 cores x 8 warps keep up to 64 independent "
              "chains in flight (paths.GPU_MAX_OUTSTANDING), range 1-64", bounds=(1, 256), integer=True,
              doc="independent pointer chains the GPU walks at once on Rand (graph, data-dependent) accesses; "
                  "below the queue depth they cut how far ahead a speculative read sees (sr_lookahead_req)"),
        Param("sr_gran_max_b", 1024, "paper: DevLoad adjusts the SR size from 256 B to 1024 B (003:L152)", choices=(256, 512, 768, 1024)),
        Param("sr_window", True, "paper: CXL-SR adds the address window (003:L156-162)", choices=(True, False)),
        Param("devload", True, "paper: SR size follows DevLoad (003:L148-154); off = always the largest size", choices=(True, False)),
        Param("devload_moderate_frac", 0.75, "digest ambiguity 10: thresholds 25/50/75% of backend utilization", bounds=(0.3, 0.95),
              doc="backend utilization DevLoad reports as moderate overload"),
        Param("gpu_local_gib", 8.0, "assumption: GPU local memory; with the 80 GiB working set the data is 10x it (digest ambiguity 8, 003:L213)",
              bounds=(1.0, 192.0)),
        Param("working_set_gib", 80.0, "digest ambiguity 8: dataset 10x GPU local memory (003:L213); the gpu-kernel "
              "workload's footprint_gib", bounds=(0.1, 65536.0)),
        Param("compute_store_scale", wl.COMPUTE_OFFCHIP_SCALE,
              "paper: compute-intensive kernels make 87.5% fewer memory accesses (003:L226), read as loads and stores; "
              "1.0 = Vortex's write-through data caches (vortexgpgpu/vortex hw/rtl/VX_config.vh, DCACHE_WRITEBACK 0) "
              "sending every store to memory", bounds=(wl.COMPUTE_OFFCHIP_SCALE, 1.0),
              doc="off-chip stores per store instruction of a compute-intensive kernel, relative to the other classes"),
        Param("ds_reserved_gib", DS_RESERVED_GIB,
              "digest ambiguity 13: reserve = write rate x GC pause (lambda_w x T_GC); the largest need of the 13 workloads "
              "is 0.062 GiB (gauss on Z-NAND, calibrated model), rounded up to 0.125 GiB",
              bounds=(0.0, 16.0), doc="GPU memory DS sets aside for writes held back during a GC pause (taken from local memory)"),
        Param("host_fault_us", 45.0, "digest ambiguity 2: 45 us host runtime per fault (MICRO 000:L3354); FULL uses ~500 us (003:L205)",
              bounds=(1.0, 1000.0)),
        Param("uvm_page_kib", 4, "digest ambiguity 9: 4 KiB fault granularity (64 KiB migration and 2 MiB pages as options)",
              choices=paths.UVM_PAGES_KIB),
        *(_price_param(m) for m in paths.MEDIA),
        # --- gpu-kernel system boundary: GPU(s) + host server + expansion
        Param("gpu_usd", 25000.0, "assumption: one data-centre GPU at H100 SXM street prices (~US$25-30k, 2023-24 press reports)",
              bounds=(0.0, 100000.0), doc="price of one GPU (the boundary's GPU; gpu_dram buys more of them)"),
        Param("gpu_power_w", 700.0, "NVIDIA H100 SXM datasheet: up to 700 W board power", bounds=(10.0, 2000.0),
              doc="GPU board power while the kernel runs"),
        Param("gpus_per_host", 8, "assumption: an 8-GPU HGX-class server", bounds=(1, 16), integer=True),
        Param("host_dram_gib", 256.0, "assumption: host DRAM of a GPU server for the OS and staging buffers (UVM adds the "
              "footprint's far part on top)", bounds=(0.0, 65536.0)),
    )
    metrics = (
        Metric("slowdown_x", "min", "execution time over GPU-DRAM (all data in local memory)"),
        Metric("time_per_instr_ns", "min", "GPU-wide time per warp instruction"),
        Metric("load_latency_ns", "min", "mean latency of an off-chip load (local and expander accesses)"),
        Metric("offchip_per_kinstr", None, "off-chip (LLC-miss) accesses per 1000 instructions"),
        Metric("cxl_round_trip_ns", "min", "controller + link round trip of a CXL.mem read (NaN without CXL)",
               nan_means=NO_CXL),
        Metric("idram_hit_frac", "max", "SSD endpoint internal-DRAM hit rate (NaN without an SSD endpoint)",
               nan_means="designs without a CXL SSD endpoint"),
        Metric("sr_gran_b", None, "speculative-read size in force (DevLoad average; NaN without SR)",
               nan_means="designs without speculative reads to an SSD endpoint"),
        Metric("sr_lookahead_req", None,
               "requests a speculative read sees ahead of its demand, access-weighted: the queue depth for computed "
               "(Seq, Around) addresses, min(queue, pointer_chains) for data-dependent Rand ones (NaN without SR)",
               nan_means="designs without speculative reads to an SSD endpoint"),
        Metric("mlp_vs_ideal_x", None,
               "off-chip requests the design keeps in flight over the GPU-DRAM ideal's (root ports x queue entries, at "
               "most the GPU's 64, over the local controller's 32); above 1 the design adds latency-bound bandwidth the "
               "ideal lacks and can run faster than it (slowdown_x < 1)"),
        Metric("gc_stall_frac", "min", "share of the run the GPU stalls on GC pauses of the endpoints (NaN without CXL)",
               nan_means=NO_CXL),
        Metric("backend_util_frac", "min", "utilization of the endpoints' media (NaN without CXL)", nan_means=NO_CXL),
        Metric("link_util_frac", "min", "utilization of the CXL links (NaN without CXL)", nan_means=NO_CXL),
        Metric("added_capacity_gib", "max", "memory added beyond GPU local memory"),
        Metric("expansion_usd", "min", "price of the added memory: media, controllers, switches"),
        Metric("usd_per_gb", "min", "expansion price per GB of added capacity (NaN when nothing is added)",
               nan_means="no memory added (the working set fits GPU memory)"),
        Metric("expansion_power_w", "min", "power of the added memory (controllers, media background, per-byte energy)"),
        # gpu-kernel family (work_per_s, capex_usd, power_w are added by the engine)
        Metric("kernel_time_ms", "min", "one kernel run: one pass over the footprint (footprint / 64 B off-chip accesses)"),
        Metric("gpu_count", None, "GPUs in the boundary: 1, or as many as the footprint needs in HBM (gpu_dram)"),
    )
    family = "gpu-kernel"
    workload_map = {"footprint_gib": "working_set_gib"}
    boundary = ("GPU system: the GPU(s) (gpu_dram: as many as hold the footprint in local memory), their host "
                "server with its DRAM, and the expansion (UVM host DRAM, GDS SSDs, or CXL endpoints, controllers, switches)")

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        """Time per instruction of each design, stage by stage (the module docstring's formula)."""
        f = _design_flags(p)  # which design, medium, access pattern
        mix = _instruction_mix(p)  # off-chip loads and stores per instruction (Table 1b)
        media = paths.calibrated_media()  # the media tables under the calibration in force
        g = _gpu_dram_ideal(p, mix, media)  # every access local (M2)
        c = _cxl_path(p)  # controller round trip + link (M1)
        pl = _placement(p, f, c)  # what GPU memory holds, what the endpoints hold
        ep = _endpoint(p, f, c, g, media)  # DRAM endpoint, SSD endpoint hit / miss (M1, M5)
        sr = _sr_size(p, f, mix, g, pl, ep)  # internal-DRAM hit rate at the DevLoad SR size (M6)
        gc = _gc_pauses(p, f, mix, pl)  # GC pauses per instruction and their length (M5, M7)
        bw = _bandwidth_roofline(p, f, mix, g, c, pl, ep, sr, gc)  # loads, stores and bandwidth bounds
        hol = _gc_stall(p, f, mix, pl, gc, bw)  # + head-of-line stalls of GC pauses, DS
        uv = _uvm_gds(p, mix, g)  # host-runtime page faults (M3, M4)
        time_ns = np.where(f.is_gpu, g.t_gpu, np.where(f.is_uvm, uv.t_uvm, np.where(f.is_gds, uv.t_gds, hol.t_cxl)))
        cap = _capacity(p, f, c, pl)  # the expansion must hold what GPU memory does not
        expansion_usd = _expansion_cost(p, f, c, pl, cap)  # cost block + media.csv
        power_w = _expansion_power(p, f, mix, c, pl, sr, uv, cap, time_ns)  # energy block
        load_lat = _load_latency(f, g, pl, ep, sr, uv)  # reported latency of an off-chip load
        system = _gpu_kernel_system(p, f, mix, time_ns, expansion_usd, power_w)  # gpu-kernel boundary
        return _metrics(p, f, mix, g, c, pl, ep, sr, bw, gc, cap, time_ns, load_lat, expansion_usd, power_w, system, hol)


# ----------------------------------------------------------------------------- stages of CxlGpu.evaluate
#: GB per GiB, for prices per GB of capacities in GiB.
_GB_PER_GIB = GIB / GB


def _design_flags(p: Batch) -> SimpleNamespace:
    """Which design (and SR policy) each point is, its medium, and its workload's access pattern."""
    t, w = wl.TABLE, p.workload
    return SimpleNamespace(
        is_gpu=p.is_("design", "gpu_dram"), is_uvm=p.is_("design", "uvm"), is_gds=p.is_("design", "gds"),
        is_cxl=p.pick("design", {k: k in CXL_DESIGNS for k in DESIGNS}), is_ds=p.is_("design", "cxl_ds"),
        policy=p.pick("design", DESIGN_POLICY), ssd=paths.IS_SSD[p.media],
        pat=(t["seq"][w], t["around"][w], t["rand"][w]), window=p.is_("sr_window", True),
    )


def _instruction_mix(p: Batch) -> SimpleNamespace:
    """Instruction mix (Table 1b): off-chip loads and stores per instruction.

    The per-workload quantities are computed on the 13-row table, then picked."""
    t, w, gpu = wl.TABLE, p.workload, CAL["gpu"]
    ld_w = gpu["offchip_frac"] * t["loads"]
    st = gpu["offchip_frac"] * (t["store_base"][w] + t["store_cs"][w] * p.compute_store_scale)
    return SimpleNamespace(ld_w=ld_w, ld=ld_w[w], st=st)


def _gpu_dram_ideal(p: Batch, mix: SimpleNamespace, media: dict) -> SimpleNamespace:
    """GPU-DRAM ideal (M2): every access local; posted stores and loads join as a smooth roofline."""
    t, w = wl.TABLE, p.workload
    dram_ns = media["dram_media_ns"]
    t_loc_w = paths.GPU_PATH_NS + t["seq"] * dram_ns[0] + t["around"] * dram_ns[1] + t["rand"] * dram_ns[2]
    mlp_loc = min(paths.LOCAL_QUEUE, paths.GPU_MAX_OUTSTANDING)
    t_store = mix.st * CAL["gpu"]["store_ns"]
    t_gpu = roofline((paths.ISSUE_NS + mix.ld_w * t_loc_w / mlp_loc)[w], t_store)
    return SimpleNamespace(mlp_loc=mlp_loc, t_loc=t_loc_w[w], t_store=t_store, t_gpu=t_gpu)


def _cxl_path(p: Batch) -> SimpleNamespace:
    """CXL path (M1): controller round trip + link wire time (+ a switch per extra EP), queue depth."""
    lk = link.from_batch(p)  # each generation's own flit (paths.GEN_FLIT): no flit_mode parameter
    lane_code = np.searchsorted(np.asarray(paths.LANES, dtype=np.float64), lk.lanes)
    li = lk.gen_index * len(paths.LANES) + lane_code  # index into paths.LINK_TABLE (gens x lanes)
    fan_out = p.eps_per_port > 1
    cxl_rt = p.ctrl_rt_ns + paths.LINK_TABLE["wire_ns"][li] + np.where(fan_out, paths.LINK_TABLE["switch_ns"][li], 0.0)
    return SimpleNamespace(li=li, fan_out=fan_out, cxl_rt=cxl_rt, n_ep=p.root_ports * p.eps_per_port,
                           mlp_cxl=np.minimum(p.queue_entries * p.root_ports, paths.GPU_MAX_OUTSTANDING))


def _placement(p: Batch, f: SimpleNamespace, c: SimpleNamespace) -> SimpleNamespace:
    """Placement of the working set: the share GPU memory holds (less DS's reserve), each endpoint's capacity."""
    reserved = np.where(f.is_ds, p.ds_reserved_gib, 0.0)
    f_loc = np.clip((p.gpu_local_gib - reserved) / p.working_set_gib, 0.0, 1.0)
    # endpoint capacity: as set, or (0) what GPU memory does not hold, split over the endpoints
    ep_cap = np.where(p.ep_capacity_gib > 0, p.ep_capacity_gib,
                      np.maximum(p.working_set_gib - p.gpu_local_gib + reserved, 0.0) / c.n_ep)
    return SimpleNamespace(reserved=reserved, f_loc=f_loc, ep_cap=ep_cap, far=1.0 - f_loc)


def _endpoint(p: Batch, f: SimpleNamespace, c: SimpleNamespace, g: SimpleNamespace, media: dict) -> SimpleNamespace:
    """Endpoint latency (M1, M5): DRAM endpoint, or SSD endpoint hit / miss, and the misses it overlaps."""
    med, n_ep, ssd_k = p.media, c.n_ep, CAL["ssd"]
    backend_gbps = np.where(f.ssd, n_ep * paths.FILL_B / np.maximum(media["fill_ns"][med], 1e-9),
                            n_ep * media["dram_ep_bw_gbps"])
    return SimpleNamespace(
        miss_ns=paths.MEDIA_TABLE["miss_ns"][med], t_dram_ep=g.t_loc + c.cxl_rt,
        t_hit=paths.GPU_PATH_NS + c.cxl_rt + media["idram_ns"], backend_gbps=backend_gbps,
        # a data-dependent (Rand) address enters the SR queue only when its chain's previous
        # load returns: the SR sees min(queue, chains) requests ahead (speculative.sr_lookahead_req)
        rand_queue=speculative.sr_lookahead_req(p.queue_entries, p.pointer_chains),
        # an SSD endpoint serves only ``miss_concurrency`` flash misses at a time (fitted)
        miss_overlap=np.minimum(c.mlp_cxl, ssd_k["miss_concurrency"] * n_ep),
        seq_overlap=np.minimum(c.mlp_cxl, ssd_k["seq_miss_concurrency"] * n_ep),
        mlp_cxl=c.mlp_cxl,
    )


def _ssd_hits(p: Batch, f: SimpleNamespace, ep: SimpleNamespace, gran: np.ndarray,
              rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Hit rates at SR size ``gran`` of the points in ``rows`` (all when None)."""
    cols = [f.policy, *f.pat, f.window, ep.miss_ns, p.queue_entries, p.idram_gib, ep.rand_queue]
    if rows is not None:
        cols = [np.broadcast_to(c, (p.n,))[rows] for c in cols]
    pol, seq, around, rand, win, miss, queue, cache, rq = cols
    return speculative.hit_rates(pol, (seq, around, rand), gran, win, miss, queue, cache, rand_queue=rq)


def _exposed_ld_ns(f: SimpleNamespace, ep: SimpleNamespace, h: dict[str, np.ndarray]) -> np.ndarray:
    """Exposed time per far load: latency over the overlap the path allows."""
    t_ssd = (ep.t_hit / ep.mlp_cxl
             + ((1.0 - h["hit"] - h["miss_seq"]) / ep.miss_overlap + h["miss_seq"] / ep.seq_overlap) * ep.miss_ns)
    return np.where(f.ssd, t_ssd, ep.t_dram_ep / ep.mlp_cxl)


def _cxl_lat(f: SimpleNamespace, mix: SimpleNamespace, g: SimpleNamespace, pl: SimpleNamespace,
             ep: SimpleNamespace, h: dict[str, np.ndarray]) -> np.ndarray:
    """Latency-bound stream of a CXL design: issue + local and far loads' exposed time per instruction."""
    return paths.ISSUE_NS + mix.ld * (pl.f_loc * g.t_loc / g.mlp_loc + pl.far * _exposed_ld_ns(f, ep, h))


def _sr_size(p: Batch, f: SimpleNamespace, mix: SimpleNamespace, g: SimpleNamespace, pl: SimpleNamespace,
             ep: SimpleNamespace) -> SimpleNamespace:
    """SR size under DevLoad (M6), one fixed-point step from the largest size, and its hit rates."""
    ld, st, far = mix.ld, mix.st, pl.far
    gmax = p.sr_gran_max_b * np.ones(p.n)
    first = _ssd_hits(p, f, ep, gmax)
    acc_per_ns = (ld + st) * far / roofline(_cxl_lat(f, mix, g, pl, ep, first), g.t_store)
    ld_share = np.where(ld + st > 0, ld / np.maximum(ld + st, 1e-30), 1.0)
    fill_b = ld_share * (1.0 - first["hit"]) * paths.FILL_B + (1.0 - ld_share) * CACHELINE_B
    adapt = np.isin(f.policy, speculative.SIZES_SR) & p.is_("devload", True)
    gran = np.where(adapt, speculative.devload_gran_b(gmax, p.devload_moderate_frac, ep.backend_gbps, acc_per_ns, fill_b,
                                                      ld_share * first["sr_b"]), gmax)
    # second pass only where DevLoad moved the size
    rows = np.nonzero(np.broadcast_to(adapt & f.ssd & (gran < gmax), (p.n,)))[0]
    hr = {k: np.array(np.broadcast_to(v, (p.n,)), dtype=np.float64) for k, v in first.items()}
    if rows.size:
        again = _ssd_hits(p, f, ep, np.broadcast_to(gran, (p.n,))[rows], rows)
        for k in hr:
            hr[k][rows] = again[k]
    return SimpleNamespace(gran=gran, hr=hr, hit=np.where(f.ssd, hr["hit"], 1.0))


def _gc_pauses(p: Batch, f: SimpleNamespace, mix: SimpleNamespace, pl: SimpleNamespace) -> SimpleNamespace:
    """Garbage collection (M5, M7): a pause per interval of written bytes, on erase media.

    A sequential writer overwrites whole blocks, so its victims hold no valid pages and a
    pause is one erase; scattered writes leave victims with valid pages to copy (flash block
    greedy-GC model at the device's over-provisioning)."""
    med, seq = p.media, f.pat[0]
    gc_rand_us, gc_seq_us = paths.gc_pauses_us()
    written_b = mix.st * pl.far * CACHELINE_B  # bytes written to the endpoints per instruction
    return SimpleNamespace(
        rand_us=gc_rand_us, seq_us=gc_seq_us, pause_ns=NS_PER_US * (seq * gc_seq_us[med] + (1.0 - seq) * gc_rand_us[med]),
        written_b=written_b, pauses=written_b / (CAL["gc"]["interval_gib"] * GIB),  # GC pauses per instruction
    )


def _bandwidth_roofline(p: Batch, f: SimpleNamespace, mix: SimpleNamespace, g: SimpleNamespace, c: SimpleNamespace,
                        pl: SimpleNamespace, ep: SimpleNamespace, sr: SimpleNamespace,
                        gc: SimpleNamespace) -> SimpleNamespace:
    """Run time without GC: the load stream, the store drain and the links' and DRAM endpoints' bandwidth bounds.

    The flash backend's load acts through DevLoad (the SR size) and is reported; the flash
    block's configurations are not these devices' controllers, so it is no bound."""
    ld, far = mix.ld, pl.far
    link_gbps = c.n_ep / p.eps_per_port * paths.LINK_TABLE["bw_gbps"][c.li]
    link_b = (ld + mix.st) * far * CACHELINE_B
    media_b = np.where(f.ssd, ld * far * ((1.0 - sr.hit) * paths.FILL_B + sr.hr["sr_b"]) + gc.written_b, link_b)
    t_run = roofline(_cxl_lat(f, mix, g, pl, ep, sr.hr), g.t_store, link_b / link_gbps,
                     np.where(f.ssd, 0.0, media_b / ep.backend_gbps))
    return SimpleNamespace(link_gbps=link_gbps, link_b=link_b, media_b=media_b, t_run=t_run)


def _gc_stall(p: Batch, f: SimpleNamespace, mix: SimpleNamespace, pl: SimpleNamespace, gc: SimpleNamespace,
              bw: SimpleNamespace) -> SimpleNamespace:
    """Head-of-line blocking of GC pauses (M5), and DS absorbing the writes of a pause (M7)."""
    # a pause blocks the endpoint's writes; the GPU runs on until the root ports' memory
    # queues hold only blocked stores, then stalls whole
    med, seq, t_run = p.media, f.pat[0], bw.t_run
    st_per_ns = mix.st * pl.far / t_run
    q_total = p.queue_entries * p.root_ports
    stall_ns = NS_PER_US * (seq * hol_stall_us(gc.seq_us[med], q_total, st_per_ns)
                            + (1.0 - seq) * hol_stall_us(gc.rand_us[med], q_total, st_per_ns))
    gc_ns = gc.pauses * stall_ns
    # DS: writes during a pause go to reserved GPU memory; only the overflow stalls
    w_rate = gc.written_b / t_run  # B/ns
    with np.errstate(divide="ignore", invalid="ignore"):
        overflow = np.clip(1.0 - p.ds_reserved_gib * GIB / np.maximum(w_rate * gc.pause_ns, 1e-30), 0.0, 1.0)
    gc_ns = np.where(f.is_ds, overflow, 1.0) * gc_ns
    return SimpleNamespace(gc_ns=gc_ns, t_cxl=t_run + gc_ns)


def _uvm_gds(p: Batch, mix: SimpleNamespace, g: SimpleNamespace) -> SimpleNamespace:
    """UVM and GDS (M3, M4): host-runtime page faults on non-resident data (GDS: + the SSD read)."""
    uvm_k = CAL["uvm"]
    page_b = p.uvm_page_kib * KIB
    page_code = np.searchsorted(np.asarray(paths.UVM_PAGES_KIB, dtype=np.float64), p.uvm_page_kib)
    nonres = np.maximum(1.0 - p.gpu_local_gib / p.working_set_gib, 1.0 / UVM_REUSE_PASSES)
    faults = (mix.ld + mix.st) * nonres * CACHELINE_B / page_b
    fault_ns = p.host_fault_us * NS_PER_US + paths.HOST_COPY_NS[page_code]
    gds_io = paths.GDS_IO_NS[p.media, page_code]
    return SimpleNamespace(
        page_b=page_b, nonres=nonres, faults=faults, fault_ns=fault_ns, gds_io=gds_io,
        t_uvm=g.t_gpu + faults * fault_ns * uvm_k["faults_per_page"],
        t_gds=g.t_gpu + faults * (fault_ns + gds_io) * uvm_k["faults_per_page"],
    )


def _capacity(p: Batch, f: SimpleNamespace, c: SimpleNamespace, pl: SimpleNamespace) -> SimpleNamespace:
    """Capacity: the expansion must hold what GPU memory does not; GDS needs an SSD medium."""
    ext = f.is_cxl | f.is_gds
    added_gib = np.where(ext, c.n_ep * pl.ep_cap, np.maximum(p.working_set_gib - p.gpu_local_gib, 0.0))
    fits = np.where(ext, added_gib + p.gpu_local_gib - pl.reserved >= p.working_set_gib * (1 - 1e-12), True)
    gds_dram = f.is_gds & ~f.ssd  # GDS reads pages from an SSD: a DRAM medium is no such design
    valid = fits & ~gds_dram
    return SimpleNamespace(added_gib=added_gib, fits=fits, gds_dram=gds_dram, nan=np.where(valid, 1.0, np.nan))


def _expansion_cost(p: Batch, f: SimpleNamespace, c: SimpleNamespace, pl: SimpleNamespace,
                    cap: SimpleNamespace) -> np.ndarray:
    """Cost of the expansion (cost block + media.csv): media, controllers, internal DRAM, switches."""
    usd_gb = np.choose(p.media, [np.broadcast_to(p[f"{m}_usd_per_gb"], (p.n,)) for m in paths.MEDIA])
    ssd_extra = _PRICE["ssd_controller_enterprise"].value + p.idram_gib * _PRICE["dram_ddr4"].value
    ep_usd = pl.ep_cap * _GB_PER_GIB * usd_gb + np.where(f.ssd, ssd_extra, 0.0)
    cxl_usd = c.n_ep * (ep_usd + _PRICE["cxl_memory_controller"].value) + p.root_ports * c.fan_out * _PRICE["cxl_switch"].value
    host_dram_usd = cap.added_gib * _GB_PER_GIB * p.dram_usd_per_gb
    hbm_usd = cap.added_gib * _PRICE["dram_hbm"].value
    return np.where(f.is_gpu, hbm_usd, np.where(f.is_uvm, host_dram_usd, np.where(f.is_gds, c.n_ep * ep_usd, cxl_usd)))


def _expansion_power(p: Batch, f: SimpleNamespace, mix: SimpleNamespace, c: SimpleNamespace, pl: SimpleNamespace,
                     sr: SimpleNamespace, uv: SimpleNamespace, cap: SimpleNamespace, time_ns: np.ndarray) -> np.ndarray:
    """Power of the expansion (energy block): controllers, media background, per-byte energy."""
    med, ld, far, n_ep, added_gib = p.media, mix.ld, pl.far, c.n_ep, cap.added_gib
    far_acc_per_s = (ld + mix.st) * far / time_ns * NS_PER_S
    link_w = far_acc_per_s * CACHELINE_B * BITS_PER_BYTE * LINK_PJ_PER_BIT * J_PER_PJ
    dram_dyn_w = far_acc_per_s * CACHELINE_B * BITS_PER_BYTE * DRAM_PJ_PER_BIT * J_PER_PJ
    fills_per_s = ld * far * (1.0 - sr.hit) / time_ns * NS_PER_S
    flash_dyn_w = (fills_per_s + ld * far * sr.hr["sr_b"] / paths.FILL_B / time_ns * NS_PER_S) * FILL_PJ[med] * J_PER_PJ
    ssd_ep_w = SSD_CTRL_POWER_W + FLASH_IDLE_W[med] + p.idram_gib * DRAM_BG_W_PER_GIB
    ep_w = np.where(f.ssd, ssd_ep_w + flash_dyn_w / n_ep, pl.ep_cap * DRAM_BG_W_PER_GIB + dram_dyn_w / n_ep)
    cxl_w = n_ep * (ep_w + CXL_CTRL_POWER_W) + link_w
    uvm_fault_per_s = uv.faults / time_ns * NS_PER_S
    page_b = uv.page_b
    uvm_w = added_gib * DRAM_BG_W_PER_GIB + uvm_fault_per_s * page_b * BITS_PER_BYTE * LINK_PJ_PER_BIT * J_PER_PJ
    gds_w = (n_ep * ssd_ep_w + uvm_fault_per_s * page_b * BITS_PER_BYTE * (LINK_PJ_PER_BIT * J_PER_PJ)
             + uvm_fault_per_s * page_b / paths.FILL_B * FILL_PJ[med] * J_PER_PJ)
    return np.where(f.is_gpu, added_gib * DRAM_BG_W_PER_GIB, np.where(f.is_uvm, uvm_w, np.where(f.is_gds, gds_w, cxl_w)))


def _load_latency(f: SimpleNamespace, g: SimpleNamespace, pl: SimpleNamespace, ep: SimpleNamespace,
                  sr: SimpleNamespace, uv: SimpleNamespace) -> np.ndarray:
    """Reported latency of an off-chip load: local, endpoint hit / miss, or page fault."""
    ep_lat = np.where(f.ssd, ep.t_hit + (1.0 - sr.hit) * ep.miss_ns, ep.t_dram_ep)
    fault_lat = (uv.nonres * CACHELINE_B / uv.page_b * CAL["uvm"]["faults_per_page"]
                 * np.where(f.is_gds, uv.fault_ns + uv.gds_io, uv.fault_ns))
    t_loc = g.t_loc
    return np.where(f.is_gpu, t_loc, np.where(f.is_uvm | f.is_gds, t_loc + fault_lat, pl.f_loc * t_loc + pl.far * ep_lat))


def _gpu_kernel_system(p: Batch, f: SimpleNamespace, mix: SimpleNamespace, time_ns: np.ndarray,
                       expansion_usd: np.ndarray, power_w: np.ndarray) -> SimpleNamespace:
    """The gpu-kernel boundary: one pass over the footprint on as many GPUs and hosts as it takes.

    A run is footprint / 64 B off-chip accesses; gpu_dram holds it in HBM on as many GPUs as
    that takes (the kernel split evenly, no traffic between them), every other design runs it
    on one GPU."""
    instr_per_run = p.working_set_gib * GIB / CACHELINE_B / (mix.ld + mix.st)
    gpus = np.where(f.is_gpu, np.maximum(1.0, np.ceil(p.working_set_gib / p.gpu_local_gib - 1e-9)), 1.0)
    kernel_ms = instr_per_run * time_ns / gpus / NS_PER_S * MS_PER_S
    hosts = np.ceil(gpus / p.gpus_per_host - 1e-9)
    host_usd = hosts * (_PRICE["host_server_2s"].value + p.host_dram_gib * _GB_PER_GIB * p.dram_usd_per_gb)
    host_w = hosts * workload.host_server(p.host_dram_gib)["power_w"]
    return SimpleNamespace(
        gpus=gpus, kernel_ms=kernel_ms,
        usd=gpus * p.gpu_usd + host_usd + np.where(f.is_gpu, 0.0, expansion_usd),
        w=gpus * p.gpu_power_w + host_w + np.where(f.is_gpu, 0.0, power_w),
    )


def _metrics(p: Batch, f: SimpleNamespace, mix: SimpleNamespace, g: SimpleNamespace, c: SimpleNamespace,
             pl: SimpleNamespace, ep: SimpleNamespace, sr: SimpleNamespace, bw: SimpleNamespace, gc: SimpleNamespace,
             cap: SimpleNamespace, time_ns: np.ndarray, load_lat: np.ndarray, expansion_usd: np.ndarray,
             power_w: np.ndarray, system: SimpleNamespace, hol: SimpleNamespace) -> dict[str, np.ndarray]:
    """The metric columns; NaN where the design does not fit or a metric does not apply."""
    ssd, is_cxl, policy, pat, nan, added_gib = f.ssd, f.is_cxl, f.policy, f.pat, cap.nan, cap.added_gib
    cxl_nan = np.where(is_cxl, 1.0, np.nan)
    sends_sr, sizes_sr = np.isin(policy, speculative.SENDS_SR), np.isin(policy, speculative.SIZES_SR)
    sr_nan = np.where(is_cxl & ssd & sends_sr, 1.0, np.nan)
    lookahead = (pat[0] + pat[1]) * p.queue_entries + pat[2] * ep.rand_queue
    return {
        "infeasible": {GDS_NEEDS_SSD: cap.gds_dram, NO_FIT: ~cap.fits},
        "slowdown_x": time_ns / g.t_gpu * nan,
        "time_per_instr_ns": time_ns * nan,
        "load_latency_ns": load_lat * nan,
        "offchip_per_kinstr": (mix.ld + mix.st) * KINSTR * nan,
        "cxl_round_trip_ns": c.cxl_rt * cxl_nan,
        "idram_hit_frac": np.where(ssd & is_cxl, sr.hit, np.nan) * nan,
        "sr_gran_b": np.where(is_cxl & ssd & sends_sr, np.where(sizes_sr, sr.gran, speculative.NAIVE_GRAN_B),
                              np.nan) * nan,
        "sr_lookahead_req": lookahead * sr_nan * nan,
        "mlp_vs_ideal_x": np.where(is_cxl, c.mlp_cxl / g.mlp_loc, 1.0) * nan,
        "gc_stall_frac": np.where(ssd, hol.gc_ns / time_ns, 0.0) * cxl_nan * nan,
        "backend_util_frac": bw.media_b / time_ns / ep.backend_gbps * cxl_nan * nan,
        "link_util_frac": bw.link_b / time_ns / bw.link_gbps * cxl_nan * nan,
        "added_capacity_gib": added_gib * nan,
        "expansion_usd": expansion_usd * nan,
        "usd_per_gb": np.divide(expansion_usd, added_gib * _GB_PER_GIB, out=np.full(np.shape(expansion_usd), np.nan),
                                where=added_gib > 0) * nan,
        "expansion_power_w": power_w * nan,
        "kernel_time_ms": system.kernel_ms * nan,
        "gpu_count": system.gpus,
        "work_per_s": MS_PER_S / system.kernel_ms * nan,
        "capex_usd": system.usd * nan,
        "power_w": system.w * nan,
    }
