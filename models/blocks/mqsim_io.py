"""Readers for MQSim inputs and outputs.

* :func:`read_ssd_config(path)` -- an MQSim SSD configuration XML (``ssdconfig.xml``
  format: ``Execution_Parameter_Set``) -> :class:`models.blocks.flash.FlashConfig`
  (geometry, tR/tPROG per page type, tBERS, channel rate x width, PCIe lanes x lane
  bandwidth, over-provisioning, mapping table).
* :func:`read_workload(path)` -- an MQSim workload XML -> dict (request size in bytes,
  read fraction, pattern, mode, queue depth or offered IOPS).
* :func:`read_output(path, workload=None, ssd_config=None)` -- MQSim's result XML
  (``MQSim_Results``) -> one row in the runs.csv column names.  MQSim's own fields are
  integer microseconds and whole-second rates; IOPS is recomputed from the request count
  and mean latency where possible (Little's law for closed loop).
* :func:`read_raw_folder(folder)` -- every ``*.output.xml`` with its ``*.workload.xml`` and
  an SSD config (``ssdconfig_file`` beside it, or the only config XML there) -> a frame.
* :func:`read_runs_csv(path)` -- the reference CSV.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from dse.errors import DseError


def _xml(path: Path) -> ET.Element:
    try:
        return ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise DseError(f"cannot read MQSim XML {path}: {exc}") from None


def _find(root: ET.Element, tag: str, default: str | None = None) -> str | None:
    el = root.find(f".//{tag}")
    return el.text.strip() if el is not None and el.text is not None else default


def read_ssd_config(path: str | Path):
    """Parse an MQSim SSD configuration XML into a FlashConfig."""
    from models.blocks.flash import FlashConfig

    p = Path(path)
    root = _xml(p)

    def num(tag: str, default: float) -> float:
        v = _find(root, tag)
        if v is None:
            return default
        try:
            return float(v)
        except ValueError:
            raise DseError(f"{p}: <{tag}> = {v!r} is not a number") from None

    tech = (_find(root, "Flash_Technology", "MLC") or "MLC").upper()
    ns = 1e-3  # ns -> us
    tr = tuple(num(f"Page_Read_Latency_{t}", 75000) * ns for t in ("LSB", "CSB", "MSB"))
    tp = tuple(num(f"Page_Program_Latency_{t}", 750000) * ns for t in ("LSB", "CSB", "MSB"))
    width = num("Flash_Channel_Width", 1)
    rate = num("Channel_Transfer_Rate", 333)  # MT/s
    # MQSim moves 2 x width bytes per (int)(1000 / rate) x 2 ns (integer ns per transfer)
    ns_per_transfer = int(1000 // rate) if rate > 0 else 0
    channel_gbps = width / ns_per_transfer if ns_per_transfer > 0 else width * rate * 1e6 / 1e9
    return FlashConfig(
        name=p.stem,
        channels=int(num("Flash_Channel_Count", 8)),
        chips_per_channel=int(num("Chip_No_Per_Channel", 4)),
        dies_per_chip=int(num("Die_No_Per_Chip", 2)),
        planes_per_die=int(num("Plane_No_Per_Die", 2)),
        page_bytes=int(num("Page_Capacity", 8192)),
        pages_per_block=int(num("Page_No_Per_Block", 256)),
        blocks_per_plane=int(num("Block_No_Per_Plane", 2048)),
        tr_us=tr,  # type: ignore[arg-type]
        tprog_us=tp,  # type: ignore[arg-type]
        tbers_us=num("Block_Erase_Latency", 3800000) * ns,
        cell=tech,
        channel_gbps=channel_gbps,
        pcie_lane_gbps=num("PCIe_Lane_Bandwidth", 1.0),
        pcie_lanes=int(num("PCIe_Lane_Count", 4)),
        op_ratio=num("Overprovisioning_Ratio", 0.07),
        read_rounds=True,  # MQSim's transaction scheduler (see FlashConfig.read_rounds)
        ideal_mapping=(_find(root, "Ideal_Mapping_Table", "false") or "false").lower() == "true",
        cmt_bytes=num("CMT_Capacity", 2097152),
        dies_overlap=False,
        queue_fetch_size=int(num("Queue_Fetch_Size", 512)),
        source=f"MQSim config {p.name}",
    )


def read_workload(path: str | Path) -> dict[str, Any]:
    """The first synthetic flow of an MQSim workload XML (sizes in bytes; sectors are 512 B)."""
    p = Path(path)
    root = _xml(p)
    flows = root.findall(".//IO_Flow_Parameter_Set_Synthetic")
    if not flows:
        raise DseError(f"{p}: no IO_Flow_Parameter_Set_Synthetic flow")
    fl = flows[0]

    def g(tag: str, default: str = "0") -> str:
        el = fl.find(tag)
        return el.text.strip() if el is not None and el.text else default

    size = float(g("Average_Request_Size", "8")) * 512
    gen = g("Synthetic_Generator_Type", "QUEUE_DEPTH").upper()
    dist = g("Address_Distribution", "RANDOM_UNIFORM").upper()
    bw = float(g("Bandwidth", "0")) * len(flows)
    out = {
        "request_size_B": int(size),
        "read_fraction": float(g("Read_Percentage", "100")) / 100.0,
        "pattern": "sequential" if dist.startswith("STREAM") else "random",
        "mode": "closed_loop_qd" if gen == "QUEUE_DEPTH" else "open_loop_poisson",
        "queue_depth": int(float(g("Average_No_of_Reqs_in_Queue", "1"))) * len(flows),
        "offered_iops": bw / size if gen != "QUEUE_DEPTH" and size > 0 else None,
        "num_requests": int(float(g("Total_Requests_To_Generate", "0"))) * len(flows),
        "n_flows": len(flows),
        "preconditioned": g("Initial_Occupancy_Percentage", "0") not in ("0", ""),
    }
    out["qd_or_rate"] = out["queue_depth"] if out["mode"] == "closed_loop_qd" else out["offered_iops"]
    return out


def read_output(path: str | Path, workload: str | Path | None = None, ssd_config: str | Path | None = None,
                config_name: str | None = None) -> dict[str, Any]:
    """MQSim result XML (+ its workload XML) -> a runs.csv-like row."""
    p = Path(path)
    root = _xml(p)
    flows = root.findall(".//Host.IO_Flow")
    if not flows:
        raise DseError(f"{p}: no Host.IO_Flow results")

    def fsum(tag: str) -> float:
        return sum(float(_find(f, tag, "0") or 0) for f in flows)

    n = fsum("Request_Count")
    nr = fsum("Read_Request_Count")
    nw = fsum("Write_Request_Count")
    lat = sum(float(_find(f, "Device_Response_Time", "0") or 0) * float(_find(f, "Request_Count", "0") or 0)
              for f in flows) / max(n, 1.0)
    row: dict[str, Any] = {
        "run_id": p.name.replace(".output.xml", ""),
        "config": config_name or (Path(ssd_config).stem if ssd_config else "raw"),
        "device_state": "raw",
        "num_requests": int(n),
        "num_completed": int(n),
        "num_read_completed": int(nr),
        "num_write_completed": int(nw),
        "avg_latency_us": lat,
        "mqsim_native_avg_latency_us": lat,
        "complete": True,
        "gc_executions": 0,
        "ssdconfig_file": str(ssd_config) if ssd_config else None,
    }
    if workload is not None:
        w = read_workload(workload)
        row.update({k: w[k] for k in ("request_size_B", "read_fraction", "pattern", "mode", "queue_depth",
                                      "offered_iops", "qd_or_rate", "n_flows")})
        row["device_state"] = "steady" if w["preconditioned"] else "fob"
        if w["mode"] == "closed_loop_qd" and lat > 0:
            row["achieved_iops"] = w["queue_depth"] / (lat * 1e-6)
        else:
            row["achieved_iops"] = fsum("IOPS")
    else:
        row["achieved_iops"] = fsum("IOPS")
    return row


def read_raw_folder(folder: str | Path):
    """All ``*.output.xml`` in ``folder`` with their ``*.workload.xml``; the SSD config is
    ``<stem>.ssdconfig.xml``, else the only other XML with an Execution_Parameter_Set."""
    import polars as pl

    f = Path(folder)
    outs = sorted(f.rglob("*.output.xml"))
    if not outs:
        raise DseError(f"no MQSim *.output.xml files under {f}")
    configs = [x for x in f.rglob("*.xml") if not x.name.endswith((".output.xml", ".workload.xml"))
               and "Execution_Parameter_Set" in x.read_text(errors="ignore")[:400]]
    rows = []
    for o in outs:
        stem = o.name.replace(".output.xml", "")
        wl = o.with_name(stem + ".workload.xml")
        cfg = next((c for c in configs if c.stem.replace(".ssdconfig", "") == stem), None)
        if cfg is None:
            prefix = stem.split("__")[0]
            cfg = next((c for c in configs if c.stem.startswith(prefix)), None)
        if cfg is None and len(configs) == 1:
            cfg = configs[0]
        if cfg is None:
            cfg = _shipped_config(stem)
        if cfg is None:
            continue
        row = read_output(o, wl if wl.is_file() else None, cfg, config_name=stem.split("__")[0])
        row["ssdconfig_file"] = str(cfg.resolve())
        rows.append(row)
    if not rows:
        raise DseError(f"no MQSim output under {f} with an SSD config XML")
    return pl.DataFrame(rows)


def _shipped_config(stem: str) -> Path | None:
    from dse.registry import project_root

    base = project_root() / "results" / "reference" / "mqsim" / "configs"
    prefix = stem.split("__")[0]
    for cand in (base / f"{prefix}.xml", base / f"{prefix}_fob.xml"):
        if cand.is_file():
            return cand
    return None


def read_runs_csv(path: str | Path):
    import polars as pl

    p = Path(path)
    if not p.is_file():
        raise DseError(f"reference CSV {p} not found")
    try:
        return pl.read_csv(p, infer_schema_length=10000)
    except Exception as exc:  # pragma: no cover
        raise DseError(f"cannot read {p}: {exc}") from None
