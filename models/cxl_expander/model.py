"""cxl-expander: a CXL Type-3 memory expander behind a host.

Request path of a 64 B load that misses the host caches:

    core -> caches, mesh, home agent      host_path_ns            (both directions)
    root port -> [switches] -> device port link block: ports, switch hops, flit
                                           serialization, FEC, flight
    device controller                      ctrl_latency_ns         (CXL IP, protocol
                                           conversion, memory-controller front end)
    DRAM media                             dram block: idle + loaded latency of the
                                           channel at its utilization; idle = the
                                           loaded path's lowest (``media_idle_ns``)

Local DRAM, for the ratio, is the same host path plus the host's own DDR5-4800 channel.

Bandwidth is the smaller of the CXL.mem link (flit packing for the read/write mix,
link block) and the media (sustainable random/stream bandwidth of the device's
channels, dram block, calibrated against DRAMsim3).  Queueing at an offered load:
the link's busier direction as an M/D/1 station (fixed flit service), the media as the
dram block's loaded-latency form at its own utilization.

Cost: media $/GiB + controller + per-device share of retimers and switches (cost
block, dated prices).  Power: DRAM background + per-bit dynamic energy (energy block,
IDD method) + link PHY pJ/bit + controller.

System (mem-analytics family): one dual-socket host holds ``footprint_gib``.  With
``placement = tiered`` its local DRAM keeps ``local_dram_gib`` and enough expanders of
``capacity_gib`` hold the rest; ``local_only`` puts the whole footprint in the host's DIMMs
(the local-DRAM baseline).  Accesses spread over the footprint by capacity, so the access
latency is the capacity-weighted mix of local DRAM and the expander's loaded latency, and
the bandwidth is the smaller of each tier's bandwidth over its share of the accesses
(workload block).
"""

from __future__ import annotations

import numpy as np

from dse.model import Batch, Metric, Model, Param, knob_params
from dse.units import B_PER_S_PER_GBPS, BITS_PER_BYTE, J_PER_PJ
from models.blocks import dram, energy, link, workload
from models.blocks.cost import component_price
from models.blocks.calibration import per_calibration

# ----------------------------------------------------------------------------- media
MEDIA = ("ddr4_3200", "ddr5_4800", "ddr5_5600", "lpddr5x_8533", "hbm2e")
#: dram-block timing set of each medium (JEDEC timings, see models/blocks/dram.py): the
#: dram group's labels, "ddr5_4800" -> "DDR5-4800".
MEDIA_STANDARD = {m: dram.standard_of(m) for m in MEDIA}
#: Energy-block IDD sets per vendor-counted channel: the DDR5 sets are one 32-bit
#: subchannel (4 x8 devices, energy block) and a DDR5 DIMM channel has two (JESD79-5); the
#: other media's sets are one channel.  Power only: the dram block's DDR5 timing sets are
#: already a whole DIMM (``channels=2``, 38.4 GB/s peak at 4800), so bandwidth counts
#: vendor channels once (:func:`media_bw_gbps`).
SUBCHANNELS = {"ddr4_3200": 1, "ddr5_4800": 2, "ddr5_5600": 2, "lpddr5x_8533": 1, "hbm2e": 1}
#: Media price, $/GiB, from the cost block's dated component table.
MEDIA_PRICE_ITEM = {
    "ddr4_3200": "dram_ddr4",
    "ddr5_4800": "dram_ddr5",
    "ddr5_5600": "dram_ddr5",
    "lpddr5x_8533": "dram_lpddr5",
    "hbm2e": "dram_hbm",
}
#: Energy-block IDD sets used for each medium.  Assumption where no set of its own
#: exists: DDR5-5600 uses the DDR5-4800 currents, LPDDR5X the LPDDR4-2400 ones, HBM2e the
#: HBM2 ones (same core architecture, currents of the nearest public configuration).
MEDIA_ENERGY = {
    "ddr4_3200": "DDR4-3200",
    "ddr5_4800": "DDR5-4800",
    "ddr5_5600": "DDR5-4800",
    "lpddr5x_8533": "LPDDR4-2400",
    "hbm2e": "HBM2",
}
#: The host's own DRAM for the local-latency reference: DDR5-4800 (Sapphire-Rapids-class
#: servers ship DDR5-4800; Intel Xeon 4th gen product brief).
LOCAL_STANDARD = "DDR5-4800"

#: Link generations, flit modes and access patterns: the link and dram blocks' parameter groups.
LINK_GENS = link.PARAM_GENS
FLIT_MODES = link.FLIT_MODES
PATTERNS = dram.PATTERNS

#: Controller power, W.  Assumption: ~8 W for a CXL Type-3 ASIC with 2-4 DDR5 channels
#: (the E3.S 2T form factor budget is 25-40 W for the whole module, SNIA SFF-TA-1008).
CTRL_POWER_W = 8.0
#: Devices sharing one switch, for the per-device share of switch cost.  Assumption: a
#: 32-lane-to-host switch fanning out to 8 x8 expanders.
DEVICES_PER_SWITCH = 8
#: Host lanes taken by one switch's upstream port (same assumption as DEVICES_PER_SWITCH).
SWITCH_UPSTREAM_LANES = 32
PLACEMENTS = ("tiered", "local_only")
#: Reasons of the system-level infeasible points (mem-analytics family).
TOO_MUCH_LOCAL_DRAM = "local DRAM beyond the host's DIMM slots (host_max_dram_gib)"
TOO_MANY_EXPANDERS = "more expanders than the host's CXL lanes attach (host_cxl_lanes)"


def _media_tables() -> dict[str, dict[str, float]]:
    """Per-medium constants derived once from the blocks (vectorized lookups later)."""
    out: dict[str, dict[str, float]] = {}
    for m in MEDIA:
        e = energy.dram_standard_energy(MEDIA_ENERGY[m])
        spec = energy.dram_standard(MEDIA_ENERGY[m])
        bits = spec.access_b * BITS_PER_BYTE
        out[m] = {
            "read_pj_per_bit": float(e["read_pj"]) / bits,
            "write_pj_per_bit": float(e["write_pj"]) / bits,
            "act_pj_per_bit": float(e["act_pj"]) / bits,
            "background_w": float(e["refresh_w"] + e["precharge_standby_w"]),
            "usd_per_gib": component_price(MEDIA_PRICE_ITEM[m]).value,
            "subchannels": float(SUBCHANNELS[m]),
        }
    return out


_TABLES = _media_tables()


@per_calibration
def _media_idle_table() -> dict[str, dict[str, float]]:
    """Per medium (and the host's local standard), idle read latency of the media by pattern."""
    stds = {**MEDIA_STANDARD, "local": LOCAL_STANDARD}
    return {m: {pat: float(media_idle_ns(std, pat)) for pat in PATTERNS} for m, std in stds.items()}


def media_idle_ns(standard: str, pattern: str) -> float:
    """Read latency (ns) of a DRAM channel with no other traffic: the lowest latency the dram
    block's loaded path gives (see ``dram.evaluate``).  A stream finds its row open (the
    block's idle figure: row hit).  A random access finds its bank *closed*: with no other
    traffic, the refresh that arrives every tREFI has precharged the bank since its last
    access (the loaded path's refresh-closure term, which DRAMsim3's open-page controller
    shows at light load), so it pays tRCD + CL + burst but no tRP.  The block's
    ``idle_ns`` charges random traffic a row conflict (tRP), which only happens once other
    traffic reopens the banks between refreshes; taking it as the idle latency put the
    loaded latency at light load *below* the idle one (cxl-expander issue "Predict beyond
    the fit": 222 ns loaded at 1 % load against 239 ns idle)."""
    r = dram.evaluate(standard, 0.0, pattern, 1.0)
    return float(min(float(r["idle_ns"]), float(r["latency_ns"])))


def media_bw_gbps(medium: np.ndarray | str, pattern, read_frac, channels) -> np.ndarray:
    """Sustainable bandwidth (GB/s) of ``channels`` vendor-counted channels of a medium: the
    dram block's saturation bandwidth of one timing set (a DDR5 set is a whole 2 x 32-bit
    DIMM channel, 38.4 GB/s peak at 4800 MT/s) times the channels."""
    return np.asarray(channels, np.float64) * dram.saturation_bw_gbps(MEDIA_STANDARD[str(medium)], pattern, read_frac)


def _local_channel_gbps(stream: np.ndarray, read_frac: np.ndarray) -> np.ndarray:
    """Sustainable bandwidth of one local DDR5-4800 DIMM channel (dram block, calibrated)."""
    return np.where(
        stream,
        dram.saturation_bw_gbps(LOCAL_STANDARD, "stream", read_frac),
        dram.saturation_bw_gbps(LOCAL_STANDARD, "random", read_frac),
    )


class CxlExpander(Model):
    name = "cxl-expander"
    version = "2"
    family = "mem-analytics"
    boundary = (
        "one dual-socket host (CPUs, board, NIC, its local DDR5) plus the CXL Type-3 expanders that hold the rest "
        "of footprint_gib (media, controller, retimers, switch share); power at the model's offered load"
    )
    summary = "CXL Type-3 memory expander: latency, bandwidth, $/GiB and power"
    source = "generic; anchors from CXL-DMSim (arXiv 2411.02282), Pond (ASPLOS'23), CXL-GPU digest, Micron CZ120"
    variant_param = "media"
    eval_chunk = 65536  # measured (dse bench): 3.5M points/s against 2.8M at 32768
    params = (
        *link.params(gens=LINK_GENS, default_gen="pcie5", default_lanes=8, flit_mode="68B", source={
            "link_gen": "CXL 1.1/2.0 devices run on the PCIe 5.0 PHY (CXL 2.0 spec); CZ120-class devices",
            "lanes": "x8 is the common E3.S/AIC expander width (Micron CZ120, Samsung CMM-D)",
            "flit_mode": "CXL 1.1/2.0 use the 68 B flit (CXL 2.0 spec §4.2); 256B needs CXL 3.x"}),
        Param(
            "ctrl_latency_ns", 40.0,
            "CXL-GPU digest: an ASIC controller round trip of 'tens of ns' (>3x below 250 ns); assumption: 40 ns",
            bounds=(0.0, 400.0), doc="device controller round trip beyond the link ports (CXL IP + protocol conversion + MC front end)",
        ),
        Param("port_latency_ns", link.CXL_PORT_NS,
              "link block CXL_PORT_NS: derived from Pond (ASPLOS'23 Sec. 2), a direct-attached device adds 70-90 ns over local "
              "DRAM across 4 port traversals", bounds=(0.0, 100.0),
              doc="one traversal of one CXL port (PHY + link + transaction layers), host and device, each direction"),
        Param("switch_hops", 0, "direct attach is the common deployment (Pond, ASPLOS'23)", bounds=(0, 4), integer=True),
        Param("hop_latency_ns", link.CXL_SWITCH_NS, "link block: Pond's switch + 2 retimers = 115 ns round trip, split per traversal",
              bounds=(5.0, 200.0), doc="one switch traversal, each direction"),
        Param("retimers", 0, "direct attach without retimers (short E3.S trace)", bounds=(0, 4), integer=True),
        *dram.params(media="ddr5_4800", channels=2, capacity_gib=256.0, pattern="random", media_choices=MEDIA,
                     bounds={"channels": (1, 16), "capacity_gib": (16.0, 8192.0)}, source={
                         "media": "CZ120-class expanders use DDR5-4800 (Micron CZ120 product brief)",
                         "channels": "Micron CZ120: two DDR5 channels",
                         "capacity_gib": "Micron CZ120: 128 or 256 GB modules",
                         "pattern": "assumption: random lines (row conflicts) are the common case for far memory"}),
        Param("read_frac", 0.67, "2:1 read:write, the mix vendors quote expander bandwidth at (Micron CZ120 brief)", bounds=(0.0, 1.0)),
        Param("offered_load_frac", 0.5, "assumption: half of the sustainable bandwidth", bounds=(0.0, 0.999),
              doc="offered traffic as a fraction of the device's sustainable bandwidth"),
        Param("host_path_ns", 58.6,
              "assumption: core-to-home-agent path of a Xeon (Sapphire Rapids) so that local DDR5-4800 idle (a random pointer "
              "chase: bank closed by refresh, tRCD + CL + burst, media_idle_ns) is ~110 ns (Intel MLC measurements)",
              bounds=(10.0, 200.0)),
        Param("ctrl_price_usd", component_price("cxl_memory_controller").value, "cost block: cxl_memory_controller (assumption, dated)",
              bounds=(0.0, 2000.0)),
        Param("retimer_price_usd", component_price("pcie5_retimer").value, "cost block: pcie5_retimer (assumption, dated)", bounds=(0.0, 500.0)),
        Param("switch_price_usd", component_price("cxl_switch").value, "cost block: cxl_switch (assumption, dated)", bounds=(0.0, 10000.0)),
        Param("media_usd_per_gib_scale", 1.0, "cost block prices as dated; 1 = list price", bounds=(0.1, 10.0),
              doc="multiplier on the medium's $/GiB (price sensitivity)"),
        # --- the system that runs the mem-analytics job (family metrics only)
        *knob_params("mem-analytics"),
        Param("placement", "tiered",
              "assumption: expanders hold what local DRAM does not (Pond / TPP tiering); local_only is the all-DRAM baseline",
              choices=PLACEMENTS, doc="tiered: local_dram_gib local + expanders for the rest; local_only: the whole footprint in DIMMs"),
        Param("local_dram_gib", 128.0,
              "assumption: half of the family's default 256 GiB footprint stays local (a 1:1 local:CXL split, within Pond's 25-50 % pool share)",
              bounds=(0.0, 8192.0), doc="local DRAM of the host in the tiered placement"),
        *dram.params("host_", channels=16, max_dram_gib=4096.0, bounds={"channels": (1, 32), "max_dram_gib": (64.0, 32768.0)},
                     doc={"channels": "local DDR5 channels of the host", "max_dram_gib": "most local DRAM the host's DIMM slots take"},
                     source={"channels": "Intel Xeon 4th gen (Sapphire Rapids): 8 DDR5-4800 channels per socket, 2 sockets",
                             "max_dram_gib": "assumption: 16 channels x 2 DIMMs per channel x 128 GiB RDIMMs"}),
        Param("host_cxl_lanes", 64,
              "assumption: 2 sockets x 80 PCIe 5.0 lanes (Xeon 4th gen), 64 of them given to CXL, the rest to NICs and drives",
              bounds=(4, 256), integer=True, doc="host lanes for CXL devices (a switch's upstream port takes 32)"),
    )
    metrics = (
        Metric("idle_read_latency_ns", "min", "unloaded load-to-use latency of a 64 B read"),
        Metric("loaded_read_latency_ns", "min", "mean read latency at the offered load"),
        Metric("local_dram_latency_ns", None, "idle latency of the host's local DDR5-4800"),
        Metric("latency_vs_local_x", "min", "idle latency over local DRAM latency"),
        Metric("added_latency_ns", "min", "idle latency minus local DRAM latency"),
        Metric("device_round_trip_ns", "min", "root port to device and back, media included"),
        Metric("bw_gbps", "max", "sustainable bandwidth, reads + writes (link or media bound)"),
        Metric("link_bw_gbps", "max", "CXL.mem link bandwidth after flit packing"),
        Metric("media_bw_gbps", "max", "sustainable bandwidth of the device's DRAM channels"),
        Metric("device_usd", "min", "bill of materials of one expander (media, controller, retimers, switch share)"),
        Metric("usd_per_gib", "min", "device cost per GiB"),
        Metric("device_power_w", "min", "device power at the offered load"),
        Metric("gbps_per_w", "max", "delivered bandwidth per watt"),
        Metric("access_latency_ns", "min", "average access latency over the footprint (local and expander mix)"),
        Metric("expander_count", None, "expanders the host needs for the footprint"),
        Metric("system_bw_gbps", "max", "memory bandwidth the footprint's access mix sustains (local + expanders)"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        read_frac = np.broadcast_to(p.read_frac, (p.n,))
        link_rt_ns, link_bw_gbps, flit_ns, lk = _link_terms(p, read_frac)

        # --- media: the dram block, once per medium present (scalar timings are much cheaper)
        media = dram.from_batch(p)
        stream, n_ch = media.stream, media.channels
        load = np.broadcast_to(p.offered_load_frac, (p.n,))
        idle_tab = _media_idle_table()
        sat_gbps, media_idle_ns, media_loaded_ns = _media_terms(p, link_bw_gbps, stream, n_ch, load, read_frac, idle_tab)
        media_bw_gbps = sat_gbps * n_ch
        bw_gbps = np.minimum(link_bw_gbps, media_bw_gbps)
        offered_gbps = load * bw_gbps

        # --- read latency: host path + link round trip + controller + media, plus queueing when loaded
        link_wait_ns = _link_wait_ns(offered_gbps, link_bw_gbps, flit_ns)
        local_idle = idle_tab["local"]
        local_ns = p.host_path_ns + np.where(stream, local_idle["stream"], local_idle["random"])
        device_rt_ns = link_rt_ns + p.ctrl_latency_ns + media_idle_ns
        idle_ns = p.host_path_ns + device_rt_ns
        loaded_ns = idle_ns + (media_loaded_ns - media_idle_ns) + link_wait_ns

        device_usd = _device_usd(p)
        power_w = _device_power_w(p, offered_gbps, stream, n_ch)

        nan = np.where(lk.flit_exists, 1.0, np.nan)
        system = self._system(p, local_ns, loaded_ns, bw_gbps, link_bw_gbps, device_usd, power_w, stream)
        return {
            "infeasible": {**lk.infeasible(), **system.pop("infeasible")},
            **{k: v * nan for k, v in system.items()},
            "idle_read_latency_ns": idle_ns * nan,
            "loaded_read_latency_ns": loaded_ns * nan,
            "local_dram_latency_ns": local_ns,
            "latency_vs_local_x": idle_ns / local_ns * nan,
            "added_latency_ns": (idle_ns - local_ns) * nan,
            "device_round_trip_ns": device_rt_ns * nan,
            "bw_gbps": bw_gbps * nan,
            "link_bw_gbps": link_bw_gbps * nan,
            "media_bw_gbps": media_bw_gbps,
            "device_usd": device_usd,
            "usd_per_gib": device_usd / p.capacity_gib,
            "device_power_w": power_w * nan,
            "gbps_per_w": offered_gbps / power_w * nan,
        }

    @staticmethod
    def _system(p: Batch, local_ns, cxl_ns, dev_bw_gbps, link_bw_gbps, device_usd, device_w, stream) -> dict:
        """The mem-analytics system: one host with its local DRAM and the expanders that
        hold the rest of the footprint; accesses spread over the footprint by capacity."""
        footprint = np.asarray(p.footprint_gib, dtype=np.float64)
        local_only = np.asarray(p.is_("placement", "local_only"))
        local_gib = np.where(local_only, footprint, np.minimum(p.local_dram_gib, footprint))
        cxl_gib = footprint - local_gib
        n_dev = np.ceil(cxl_gib / p.capacity_gib - 1e-9)
        n_dev = np.maximum(n_dev, 0.0)
        # switches fan one 32-lane upstream port out to DEVICES_PER_SWITCH devices
        per_lane = np.where(p.switch_hops > 0, DEVICES_PER_SWITCH / SWITCH_UPSTREAM_LANES, 1.0 / p.lanes)
        max_dev = np.floor(p.host_cxl_lanes * per_lane + 1e-9)
        local_frac = local_gib / footprint
        cxl_frac = 1.0 - local_frac
        access_ns = local_frac * local_ns + cxl_frac * cxl_ns
        local_bw = p.host_channels * _local_channel_gbps(stream, np.broadcast_to(p.read_frac, np.shape(stream)))
        # the expanders' aggregate, capped by the host lanes they share (switch upstream ports)
        cxl_bw = np.minimum(n_dev * dev_bw_gbps, link_bw_gbps / p.lanes * p.host_cxl_lanes)
        with np.errstate(divide="ignore", invalid="ignore"):
            bw = np.minimum(
                np.where(local_frac > 0, local_bw / local_frac, np.inf),
                np.where(cxl_frac > 0, cxl_bw / cxl_frac, np.inf),
            )
        installed_gib = np.where(local_only, footprint, p.local_dram_gib)  # tiered: the host's DIMMs as configured
        host = workload.host_server(installed_gib)
        return {
            "infeasible": {TOO_MUCH_LOCAL_DRAM: np.asarray(installed_gib > p.host_max_dram_gib), TOO_MANY_EXPANDERS: np.asarray(n_dev > max_dev)},
            "access_latency_ns": access_ns,
            "expander_count": n_dev,
            "system_bw_gbps": bw,
            "work_per_s": workload.mem_queries_per_s(access_ns, bw),
            "capex_usd": host["capex_usd"] + n_dev * device_usd,
            # the device power covers controller, PHY and channel activity; its DIMMs also draw
            # the capacity-proportional power host DIMMs do (same W/GiB as local DRAM)
            "power_w": host["power_w"] + n_dev * (device_w + p.capacity_gib * workload.DRAM_W_PER_GIB),
        }


def _link_terms(p: Batch, read_frac: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, link.LinkSpec]:
    """Link: unloaded round trip, bandwidth and flit time (link block) per (generation, flit
    mode), and the link's spec (where the flit mode exists: ``flit_exists``)."""
    spec = link.from_batch(p)
    lanes = spec.lanes
    hops, retimers = np.broadcast_to(p.switch_hops, (p.n,)), np.broadcast_to(p.retimers, (p.n,))
    hop_ns = np.broadcast_to(p.hop_latency_ns, (p.n,))
    port_ns = np.broadcast_to(p.port_latency_ns, (p.n,))
    link_rt_ns, link_bw_gbps, flit_ns = np.empty(p.n), np.empty(p.n), np.empty(p.n)
    for (gen_label, flit_label), idx in p.groups("link_gen", "flit_mode"):
        gen = link.GENERATIONS.index(gen_label) + 1  # the link block takes generation numbers (5 = PCIe 5.0)
        if not link.flit_exists(gen, flit_label):
            # the 68 B flit does not exist at 64 GT/s (CXL 3.x): infeasible points (spec.infeasible)
            link_rt_ns[idx] = link_bw_gbps[idx] = flit_ns[idx] = np.nan
            continue
        link_rt_ns[idx] = link.cxl_round_trip_ns(
            gen, lanes[idx], flit_label, n_switches=hops[idx], n_retimers=retimers[idx], switch_ns=hop_ns[idx],
            port_ns=port_ns[idx],
        )
        link_bw_gbps[idx] = link.cxl_mem_bw_gbps(gen, lanes[idx], flit_label, read_frac[idx])
        flit_ns[idx] = link.flit_serialization_ns(flit_label, gen, lanes[idx])
    return link_rt_ns, link_bw_gbps, flit_ns, spec


def _media_terms(p: Batch, link_bw_gbps: np.ndarray, stream: np.ndarray, n_ch: np.ndarray, load: np.ndarray,
                 read_frac: np.ndarray, idle_tab: dict[str, dict[str, float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Media (dram block), once per medium present: a channel's saturation bandwidth, idle and loaded latency."""
    sat_gbps, idle_ns, loaded_ns = (np.empty(p.n) for _ in range(3))
    for medium, idx in p.groups("media"):
        # the offered load is a fraction of the device bandwidth, which the media may bound:
        # the dram block gets it as a function of one channel's saturation bandwidth
        def offered_per_channel(sat: np.ndarray, idx=idx) -> np.ndarray:
            return load[idx] * np.minimum(link_bw_gbps[idx] / n_ch[idx], sat)

        r = dram.evaluate(MEDIA_STANDARD[medium], offered_per_channel, stream[idx], read_frac[idx])
        sat_gbps[idx], loaded_ns[idx] = r["saturation_gbps"], r["latency_ns"]
        idle_ns[idx] = np.where(stream[idx], idle_tab[medium]["stream"], idle_tab[medium]["random"])
    return sat_gbps, idle_ns, loaded_ns


def _link_wait_ns(offered_gbps: np.ndarray, link_bw_gbps: np.ndarray, flit_ns: np.ndarray) -> np.ndarray:
    """Link queueing: busier direction, fixed flit service -> M/D/1 wait rho/(2(1-rho)) x service."""
    link_util = offered_gbps / link_bw_gbps
    return link_util / (2.0 * (1.0 - link_util)) * flit_ns


def _device_usd(p: Batch) -> np.ndarray:
    """Device cost (cost block prices): media, controller, retimers and its share of a switch."""
    media_usd = p.capacity_gib * p.pick("media", {m: _TABLES[m]["usd_per_gib"] for m in MEDIA}) * p.media_usd_per_gib_scale
    return (
        media_usd + p.ctrl_price_usd + p.retimers * p.retimer_price_usd + p.switch_hops * p.switch_price_usd / DEVICES_PER_SWITCH
    )


def _device_power_w(p: Batch, offered_gbps: np.ndarray, stream: np.ndarray, n_ch: np.ndarray) -> np.ndarray:
    """Device power (energy block): DRAM background per subchannel + dynamic per bit, link PHY, controller."""
    sub = p.pick("media", {m: _TABLES[m]["subchannels"] for m in MEDIA})
    n_sub = n_ch * sub  # energy-block IDD sets (power only)
    bits_per_s = offered_gbps * B_PER_S_PER_GBPS * BITS_PER_BYTE
    rw_pj = p.read_frac * p.pick("media", {m: _TABLES[m]["read_pj_per_bit"] for m in MEDIA}) + (1 - p.read_frac) * p.pick(
        "media", {m: _TABLES[m]["write_pj_per_bit"] for m in MEDIA}
    )
    lines_per_row = p.pick("media", {m: dram.timing(MEDIA_STANDARD[m]).lines_per_row for m in MEDIA})
    row_miss = np.where(stream, 1.0 / lines_per_row, 1.0)
    dram_pj_per_bit = rw_pj + row_miss * p.pick("media", {m: _TABLES[m]["act_pj_per_bit"] for m in MEDIA})
    phy_pj_per_bit = energy.link_pj_per_bit("cxl_phy")
    return (
        n_sub * p.pick("media", {m: _TABLES[m]["background_w"] for m in MEDIA})
        + bits_per_s * (dram_pj_per_bit + phy_pj_per_bit) * J_PER_PJ
        + CTRL_POWER_W
    )
