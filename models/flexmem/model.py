"""flexmem: VM image pages shared through a tiered host/pool cache (FlexMem, IEEE Micro;
shared/research/vm-image-cache.md).

Mechanism (digest §2):

* **Per-VM memory.**  A virtio-blk guest reads its image through the block layer into its
  own page cache: every VM holds a private copy of the image pages it touched.  A FlexMem
  guest maps the image as a virtio-pmem device with DAX: no guest page cache; the host
  keeps one copy of the touched pages shared by all its VMs, and each VM pays struct
  pages for the PMem window (64 B per 4 KB), host PTEs (4 B per 4 KB) and reverse-map
  entries for the shared pages.
* **Density.**  VMs per host = (host RAM - reserve - shared copy) / memory per VM.
* **Start-up.**  Boot CPU work plus one fault per touched image page: a virtio-blk read
  (guest block layer, virtqueue, QEMU qcow2 lookup, copy) or a DAX fault (EPT fault and a
  reverse-map insert under a host-wide mutex, an M/M/1 station fed by all booting VMs,
  queueing block).  Parallel VMs share the host's cores.  If another host holds the
  pages, FlexMem fetches them by one-sided 4 KB RDMA reads over 100 Gb/s (link block);
  a cold start downloads the image from the registry first.
* **Cost.**  Hosts for a fleet of VMs, each a dual-socket server with 1 TB of DRAM (cost
  block DRAM price, energy block DRAM power, TCO with PUE and $/kWh).

Common metrics (family ``vm-host``, ``_system``): the fleet's ``fleet_vms`` VMs run around the
clock, ``fleet_vms`` VM-hours per hour.  Each is a guest whose memory in use is ``vm_mem_gib``:
a virtio-blk guest holds its touched image pages in that memory as page cache; a FlexMem guest
holds the same data without them, plus the PMem struct pages, and the host keeps one shared
copy.  Density, and so the hosts the fleet needs, follow from the same per-VM memory as the
article's; ``startup_s`` is the article's start-up time.
"""

from __future__ import annotations

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import GB, GIB, MIB, NS_PER_S, S_PER_HOUR, US_PER_S
from models.blocks import cost, energy, link, queueing
from models.flexmem import calibration as cal

VM_TYPES = ("virtio_blk", "flexmem")
STARTS = ("warm_local", "warm_remote", "cold")

# ----------------------------------------------------------------------------- start-up assumptions
#: Guest boot + WordPress (Apache/PHP) initialization, CPU seconds per VM, excluding the
#: image page faults.  Assumption: a trimmed kernel boots in ~0.1-0.2 s (Firecracker,
#: NSDI'20: ~125 ms to init) and the web stack takes a few hundred ms more.
BOOT_CPU_S = 0.4
#: One 4 KB image read through virtio-blk when the image file sits in the host page cache:
#: guest fault + block layer + virtqueue notify + QEMU qcow2 layer lookup + copy, us.
#: Assumption: 25 us, in the range of published QEMU virtio-blk 4 KiB read latencies.
VIRTIO_PAGE_US = 25.0
#: One DAX fault on a virtio-pmem page backed by a resident host page (EPT violation exit,
#: host page-table walk, map), us.  Assumption: a KVM exit/entry round trip plus a minor fault.
DAX_FAULT_US = 2.5
#: The trimmed Linux 6.1 guest kernel of the article's VMs, MiB (14 MB, L2157; taken as MiB).
GUEST_KERNEL_MIB = 14.0
#: Reverse-map insert under the host mutex: base + per tree level (log2 of the VMs sharing
#: the page), us.  Assumption: red-black-tree insert of a few hundred ns.
RMAP_BASE_US = 0.3
RMAP_PER_LEVEL_US = 0.02

# ----------------------------------------------------------------------------- server cost / power
#: Intel Xeon Silver 4316 recommended customer price, US$ (Intel ARK, 2021); 2 per host (L2157).
CPU_USD = 1002.0
CPUS_PER_HOST = 2
#: Server without CPUs and DRAM (board, chassis, PSU, 100 Gb/s RNIC, boot SSD), US$.
#: Assumption: ~US$4,000 for a 2U dual-socket platform with a ConnectX-class NIC.
SERVER_BASE_USD = 4000.0
#: Xeon Silver 4316 TDP 150 W (Intel ARK); assumption: hosts run at ~60 % of TDP.
CPU_W = 150.0 * 0.6
#: Rest of the server (board, fans, NIC, SSD), W.  Assumption.
SERVER_BASE_W = 100.0
#: DRAM background power per GiB from the energy block's DDR4-3200 set (8 GiB ranks).
_DDR4 = energy.dram_standard_energy("DDR4-3200")
DRAM_W_PER_GIB = float(_DDR4["refresh_w"] + _DDR4["precharge_standby_w"]) / 8.0


def per_vm_memory_mib(is_flex: np.ndarray, image_mib, touched_mib, guest_base_mib, resident_vms) -> dict[str, np.ndarray]:  # noqa: ANN001
    """Per-VM memory (MiB) by component; the shared host copy is charged 1/resident_vms."""
    kib = 1.0 / cal.KIB_PER_MIB
    image_pages = image_mib * MIB / cal.PAGE_B
    touched_pages = touched_mib * MIB / cal.PAGE_B
    qemu = cal.QEMU_KIB * kib + cal.QEMU_HEAP_KIB * kib - np.where(is_flex, cal.FLEXMEM_HEAP_SAVING_KIB * kib, 0.0)
    host_meta = cal.HOST_META_KIB * kib + np.where(
        is_flex, (image_pages * cal.HOST_PTE_B + touched_pages * cal.RMAP_B_PER_PAGE) / MIB, 0.0)
    page_cache = np.where(is_flex, 0.0, touched_mib)
    pmem = np.where(is_flex, image_pages * cal.STRUCT_PAGE_B / MIB, 0.0)
    shared = np.where(is_flex, cal.HOST_IMAGE_COPY_MIB * touched_mib / cal.TOUCHED_IMAGE_MIB / resident_vms, 0.0)
    private = qemu + host_meta + guest_base_mib + page_cache + pmem
    return {"private": private, "shared": shared, "page_cache": page_cache, "pmem": pmem, "total": private + shared}


def memory_breakdown_mib(mem: dict[str, np.ndarray], guest_base_mib) -> dict[str, np.ndarray]:  # noqa: ANN001
    """Per-VM memory split the way the article's Fig. 7 and §2.1 count it: the guest kernel
    image (14 MB, L2157), the guest's anonymous memory and kernel metadata (the rest of the
    guest base), the host side (QEMU, its stack/heap, host-kernel metadata incl. FlexMem's
    PTEs and reverse maps), the PMem struct pages and the share of the host's image copy;
    with ``page_cache`` they sum to ``mem["total"]``."""
    shape = np.shape(mem["total"])
    kernel = np.broadcast_to(np.minimum(GUEST_KERNEL_MIB, guest_base_mib), shape)
    anon = np.broadcast_to(guest_base_mib, shape) - kernel
    host_side = mem["private"] - guest_base_mib - mem["page_cache"] - mem["pmem"]
    return {"guest_kernel": kernel, "guest_anon": anon, "host_side": host_side,
            "pmem_struct": np.broadcast_to(mem["pmem"], shape), "shared_image": np.broadcast_to(mem["shared"], shape)}


def warm_startup_s(flex, pages, parallel_vms, host_cores, boot_cpu_s, fault_us, existing_vms) -> np.ndarray:  # noqa: ANN001
    """Start-up of one of ``parallel_vms`` VMs whose image pages are on this host (§2.4):
    boot CPU work + one fault per touched page, the host's cores shared by the booting VMs;
    FlexMem's faults also pass the reverse-map mutex, an M/M/1 station (queueing block)
    fed by all booting VMs, and never beat its serialized bound."""
    share = np.maximum(1.0, parallel_vms / host_cores)
    t0_s = (boot_cpu_s + pages * fault_us / US_PER_S) * share
    rmap_us = RMAP_BASE_US + RMAP_PER_LEVEL_US * np.log2(existing_vms + parallel_vms)
    lam_per_us = parallel_vms * pages / (t0_s * US_PER_S)
    wait_us = queueing.mm1_wait(lam_per_us, rmap_us)
    serial_s = parallel_vms * pages * rmap_us / US_PER_S
    with np.errstate(invalid="ignore"):
        lock_s = np.where(np.isfinite(wait_us), t0_s + pages * (rmap_us + wait_us) / US_PER_S, serial_s)
    return np.where(flex, np.maximum(lock_s, serial_s), t0_s)


_PAGES_DEFAULT = cal.TOUCHED_IMAGE_MIB * MIB / cal.PAGE_B
#: Registry bandwidth fitted so that a cold FlexMem start at the article's setup takes
#: warm / (1 - 48.5 %) (calibration.fit_registry_gbps); FlexMem's warm start is the faster
#: one, so its cold/warm gain is the article's "up to".
#: FlexMem's warm start at the article's setup (64 parallel next to 64 existing VMs, 40 cores).
WARM_S_DEFAULT = float(warm_startup_s(True, _PAGES_DEFAULT, 64, 40, BOOT_CPU_S, DAX_FAULT_US, 64))
REGISTRY_GBPS = cal.fit_registry_gbps(WARM_S_DEFAULT)


#: Infeasible points (``run_full``'s reasons).
GUEST_TOO_BIG = "the guest does not fit its RAM (guest base + page cache + PMem struct pages > vm_ram_mib)"
VM_OVER_HOST = "a VM does not fit one host (its memory exceeds host_ram_gib less the reserve and the shared image copy)"
VM_MEM_TOO_SMALL = "vm_mem_gib is smaller than the image pages a booted guest reads (touched_image_mib)"


class FlexMem(Model):
    name = "flexmem"
    version = "1"
    summary = "FlexMem shared VM-image page cache over a host/RDMA memory pool vs virtio-blk: memory per VM, density, start-up, $/VM"
    source = "FlexMem, 'Tiered Cache-Sharing Service for VM Images Based on Memory Pool', IEEE Micro (shared/research/vm-image-cache.md)"
    variant_param = "vm_type"
    family = "vm-host"
    boundary = ("the hosts of the fleet: dual Xeon Silver 4316 servers with host_ram_gib of DDR4, board, chassis, "
                "100 Gb/s RNIC and boot SSD; the image registry and the network switches are not priced")
    params = (
        Param("vm_type", "flexmem", "the article's FlexMem VMs and standard virtio-blk VMs (L2157)", choices=VM_TYPES),
        Param("start", "warm_local", "Fig. 9: VMs started next to existing VMs (image pages already on the host, L2171)", choices=STARTS,
              doc="warm_local: pages on this host; warm_remote: on another host (RDMA); cold: registry download"),
        Param("vm_ram_mib", 96.0, "VMs with 96 MB RAM (L2157)", bounds=(32.0, 65536.0)),
        Param("image_mib", cal.IMAGE_MIB, "WordPress image ~500 MB (L2157)", bounds=(10.0, 100000.0)),
        Param("touched_image_mib", cal.TOUCHED_IMAGE_MIB, "Fig. 2: 44 % of an idle virtio-blk VM's 93 MB is page cache (L2043)",
              bounds=(1.0, 10000.0), doc="image bytes a booted VM reads"),
        Param("guest_base_mib", cal.GUEST_BASE_MIB, "derived: Fig. 7 virtio-blk total less its other rows (calibration.py)",
              bounds=(1.0, 65536.0), doc="guest kernel + anonymous memory"),
        Param("resident_vms", cal.VMS_IN_BREAKDOWN_PER_HOST, "1000 VMs measured (L2161) on two VM hosts (L2157)", bounds=(1, 1e6),
              integer=True, doc="VMs on the host sharing its image copy"),
        Param("host_ram_gib", 1024.0, "1 TB of RAM per host (L2157)", bounds=(16.0, 65536.0)),
        Param("host_reserved_gib", 8.0, "assumption: host OS, QEMU daemons and FlexMem daemon", bounds=(0.0, 1024.0)),
        Param("parallel_vms", 64, "64 VMs started in parallel (L2169)", bounds=(1, 4096), integer=True),
        Param("existing_vms", 64, "Fig. 9 spans 64-1024 existing VMs (L2171)", bounds=(0, 100000), integer=True,
              doc="VMs already sharing the image pages (reverse-map depth)"),
        Param("host_cores", 40, "dual Xeon Silver 4316 with '20 cores', taken per socket (digest ambiguity)", bounds=(1, 1024), integer=True),
        Param("boot_cpu_s", BOOT_CPU_S, "assumption (see BOOT_CPU_S)", bounds=(0.01, 60.0)),
        Param("virtio_page_us", VIRTIO_PAGE_US, "assumption (see VIRTIO_PAGE_US)", bounds=(0.1, 1000.0)),
        Param("dax_fault_us", DAX_FAULT_US, "assumption (see DAX_FAULT_US)", bounds=(0.1, 100.0)),
        Param("rdma_gbit_s", 100.0, "100 Gb/s RDMA network (L2157)", bounds=(10.0, 800.0)),
        Param("registry_gbps", REGISTRY_GBPS, "fitted: warm vs cold start-up gain up to 48.5 % (L2171); calibration.py",
              bounds=(0.01, 100.0), doc="image download bandwidth from the registry"),
        Param("fleet_vms", 100000, "assumption: a fleet of 100,000 VMs for the cost per VM", bounds=(1, 1e8), integer=True),
        Param("dram_usd_per_gib", cost.component_price("dram_ddr4").value, "cost block: dram_ddr4 (dated)", bounds=(0.1, 100.0)),
        *knob_params("vm-host"),
    )
    metrics = (
        Metric("mem_per_vm_mib", "min", "memory per VM at resident_vms (shared copy amortized)"),
        Metric("page_cache_per_vm_mib", "min", "image pages in the guest page cache"),
        Metric("guest_kernel_per_vm_mib", "min", "guest kernel image in the guest's memory (14 MB trimmed Linux 6.1, L2157)"),
        Metric("guest_anon_per_vm_mib", "min", "guest anonymous memory and kernel metadata (guest base less the kernel image)"),
        Metric("host_side_per_vm_mib", "min", "QEMU binary, QEMU stack/heap and host-kernel metadata per VM (Fig. 7 rows; FlexMem adds PTEs and reverse maps)"),
        Metric("pmem_struct_per_vm_mib", "min", "guest struct pages of the PMem window (64 B per 4 KB, FlexMem)"),
        Metric("shared_image_per_vm_mib", "min", "the VM's share of the host's one copy of the touched image pages (FlexMem)"),
        Metric("pmem_guest_overhead_frac", None, "guest struct pages over the PMem window size"),
        Metric("pmem_host_overhead_frac", None, "host PTEs over the PMem window size"),
        Metric("max_vms_per_host", "max", "VMs that fit the host's memory"),
        Metric("startup_s", "min", "mean start-up time of one of the parallel VMs"),
        Metric("network_b_per_start", "min", "bytes fetched over the network per VM start (registry or RDMA)"),
        Metric("hosts_for_fleet", "min", "hosts needed for fleet_vms"),
        Metric("capex_usd_per_vm", "min", "server capex per VM"),
        Metric("tco_usd_per_vm_year", "min", "capex + energy per VM and year"),
        Metric("feasible_frac", None, "1 when the guest fits its configured RAM, else NaN metrics"),
        Metric("fleet_vms_per_host", "max", "VMs of vm_mem_gib per host (common metrics)"),
        Metric("fleet_hosts_count", "min", "hosts that fleet_vms VMs of vm_mem_gib need (common metrics)"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        flex = p.is_("vm_type", "flexmem")

        # --- memory per VM and density (§2.1, §2.2)
        mem = per_vm_memory_mib(flex, p.image_mib, p.touched_image_mib, p.guest_base_mib, p.resident_vms)
        guest_mib = p.guest_base_mib + mem["page_cache"] + mem["pmem"]
        feasible = np.asarray(guest_mib <= p.vm_ram_mib)  # an array: ~ is a logical not
        host_copy_mib = np.where(flex, cal.HOST_IMAGE_COPY_MIB * p.touched_image_mib / cal.TOUCHED_IMAGE_MIB, 0.0)
        usable_mib = (p.host_ram_gib - p.host_reserved_gib) * GIB / MIB - host_copy_mib
        max_vms = np.floor(np.maximum(usable_mib, 0.0) / mem["private"])

        # --- start-up (§2.4): boot CPU work + one fault per touched page, cores shared by parallel VMs
        pages = p.touched_image_mib * MIB / cal.PAGE_B
        fault_us = np.where(flex, p.dax_fault_us, p.virtio_page_us)
        warm_s = warm_startup_s(flex, pages, p.parallel_vms, p.host_cores, p.boot_cpu_s, fault_us, p.existing_vms)
        # remote pages (FlexMem, warm_remote): the host's daemon fetches each touched page once by a
        # one-sided 4 KB RDMA read (link block); the booting VMs fault different pages, so up to
        # parallel_vms reads are in flight and the link's wire time bounds the rate
        rdma_ns = link.rdma_round_trip_ns(cal.PAGE_B, "read", p.rdma_gbit_s, 1)
        wire_ns = link.wire_time_ns(cal.PAGE_B, p.rdma_gbit_s)
        remote_s = pages * np.maximum(rdma_ns / p.parallel_vms, wire_ns) / NS_PER_S
        download_s = p.image_mib * MIB / (p.registry_gbps * GB)
        remote = p.is_("start", "warm_remote")
        cold = p.is_("start", "cold")
        startup = warm_s + np.where(remote & flex, remote_s, 0.0) + np.where(cold, download_s, 0.0)
        net_b = np.where(cold, p.image_mib * MIB, np.where(remote & flex, pages * cal.PAGE_B, 0.0))

        # --- cost (cost block): hosts for the fleet
        hosts = np.ceil(p.fleet_vms / np.maximum(max_vms, 1.0))
        server_usd = CPUS_PER_HOST * CPU_USD + SERVER_BASE_USD + p.host_ram_gib * p.dram_usd_per_gib
        server_w = CPUS_PER_HOST * CPU_W + SERVER_BASE_W + p.host_ram_gib * DRAM_W_PER_GIB
        capex = hosts * server_usd
        tco_year = cost.tco_usd_per_year(capex, hosts * server_w, p.years, pue=p.pue, usd_per_kwh=p.usd_per_kwh)
        system = _system(p, flex, usable_mib, server_usd, server_w)
        sys_bad = system.pop("infeasible")

        nan = np.where(feasible, 1.0, np.nan)
        return {
            **system,
            "infeasible": {GUEST_TOO_BIG: ~feasible, VM_OVER_HOST: np.asarray(max_vms < 1.0) | sys_bad[VM_OVER_HOST],
                           VM_MEM_TOO_SMALL: sys_bad[VM_MEM_TOO_SMALL]},
            "startup_s": startup * nan,
            "mem_per_vm_mib": mem["total"] * nan,
            "page_cache_per_vm_mib": mem["page_cache"] * nan,
            **{f"{k}_per_vm_mib": v * nan for k, v in memory_breakdown_mib(mem, p.guest_base_mib).items()},
            "pmem_guest_overhead_frac": np.where(flex, cal.STRUCT_PAGE_B / cal.PAGE_B, 0.0),
            "pmem_host_overhead_frac": np.where(flex, cal.HOST_PTE_B / cal.PAGE_B, 0.0),
            "max_vms_per_host": max_vms * nan,
            "network_b_per_start": net_b,
            "hosts_for_fleet": hosts * nan,
            "capex_usd_per_vm": capex / p.fleet_vms * nan,
            "tco_usd_per_vm_year": tco_year / p.fleet_vms * nan,
            "feasible_frac": nan,
        }


def _system(p: Batch, flex, usable_mib, server_usd, server_w) -> dict:
    """The vm-host system: ``fleet_vms`` guests of ``vm_mem_gib`` in use, on as many hosts as
    their memory needs."""
    vm_mib = np.asarray(p.vm_mem_gib, dtype=np.float64) * GIB / MIB
    # a virtio-blk guest's memory holds its touched image pages as page cache; FlexMem's the
    # same anonymous data without them (PMem struct pages instead)
    guest_base = np.maximum(vm_mib - p.touched_image_mib, 0.0)
    mem = per_vm_memory_mib(flex, p.image_mib, p.touched_image_mib, guest_base, p.resident_vms)
    vms = np.floor(np.maximum(usable_mib, 0.0) / mem["private"])
    # a VM that does not fit a host: no host count (NaN, declared infeasible below)
    hosts = np.where(vms >= 1.0, np.ceil(p.fleet_vms / np.maximum(vms, 1.0)), np.nan)
    return {
        "infeasible": {VM_OVER_HOST: np.asarray(vms < 1.0), VM_MEM_TOO_SMALL: np.asarray(vm_mib < p.touched_image_mib)},
        "fleet_vms_per_host": vms,
        "fleet_hosts_count": hosts,
        "work_per_s": np.asarray(p.fleet_vms, dtype=np.float64) / S_PER_HOUR,
        "capex_usd": hosts * server_usd,
        "power_w": hosts * server_w,
    }
