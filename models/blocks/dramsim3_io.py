"""Readers for DRAMsim3 inputs and outputs.

* :func:`read_ini` -- a DRAMsim3 ``.ini`` configuration -> :class:`models.blocks.dram.DramTiming`
  (timings in memory-clock cycles, organisation derived the way DRAMsim3 derives it:
  GDDR/HBM column scaling, burst cycles per protocol, bank groups disabled, ranks from
  ``channel_size``, lines per row and bank from the address mapping).
* :func:`read_runs_csv` -- a reference ``runs.csv`` (format of
  ``results/reference/dramsim3/README.md``) as a polars frame.
* :func:`read_raw_stats` -- DRAMsim3's own JSON statistics (``*.json`` written by
  ``dramsim3main``) -> one row in the runs.csv column names, so a folder of raw runs can be
  calibrated like the shipped CSV (:func:`read_raw_folder`).

Raw-output conventions: DRAMsim3 reports latencies in memory cycles; ``tCK`` comes from the
.ini (named next to the JSON by the caller or found in the same folder).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from dse.errors import DseError


def _parse_ini_text(text: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    sec = ""
    for raw in text.splitlines():
        line = re.split(r"[;#]", raw, maxsplit=1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            sec = line[1:-1].strip().lower()
            out.setdefault(sec, {})
            continue
        if "=" in line:
            k, _, v = line.partition("=")
            out.setdefault(sec, {})[k.strip()] = v.strip()
    return out


def _log2(x: int) -> int:
    return int(round(math.log2(x))) if x > 0 else 0


def _number_reader(p: Path):
    """``get(section, key, default)``: a numeric entry of the .ini, ``default`` when absent."""

    def get(sec: dict[str, str], key: str, default: float) -> float:
        v = sec.get(key)
        if v is None:
            return default
        try:
            return float(v)
        except ValueError:
            raise DseError(f"{p}: [{key}] = {v!r} is not a number") from None

    return get


def _burst_cycles(protocol: str, bl: int) -> float:
    """Burst cycles per protocol (DRAMsim3 Config::InitDRAMParams)."""
    if protocol == "GDDR5":
        return bl / 4
    if protocol == "GDDR5X":
        return bl / 8
    if protocol == "GDDR6":
        return bl / 16
    return bl / 2


def _ini_organisation(st: dict[str, str], sy: dict[str, str], gi) -> dict[str, Any]:
    """Stage 1: protocol, banks, burst, ranks, request size and lines per row, the way
    DRAMsim3 derives them (GDDR/HBM column scaling, bank groups disabled, ranks from
    ``channel_size``)."""
    protocol = st.get("protocol", "DDR3").upper()
    bankgroups = int(gi(st, "bankgroups", 2))
    banks_per_group = int(gi(st, "banks_per_group", 2))
    if st.get("bankgroup_enable", "true").strip().lower() in ("false", "0", "no"):
        banks_per_group *= bankgroups
        bankgroups = 1
    rows = int(gi(st, "rows", 1 << 16))
    columns = int(gi(st, "columns", 1 << 10))
    device_width = int(gi(st, "device_width", 8))
    bl = int(gi(st, "BL", 8))
    is_gddr, is_hbm = protocol.startswith("GDDR"), protocol.startswith("HBM")
    if is_gddr:
        columns *= bl
    elif is_hbm:
        columns *= 2
    bus_width = int(gi(sy, "bus_width", 64))
    channels = int(gi(sy, "channels", 1))
    banks = bankgroups * banks_per_group
    devices = max(1, bus_width // device_width)
    rank_bytes = rows * columns * device_width * banks / 8 * devices
    return {
        "protocol": protocol, "is_gddr": is_gddr, "is_hbm": is_hbm, "bankgroups": bankgroups,
        "banks_per_group": banks_per_group, "rows": rows, "burst": _burst_cycles(protocol, bl), "channels": channels,
        "ranks": max(1, int(gi(sy, "channel_size", 1024) * 2**20 // rank_bytes)),
        "request_bytes": bus_width // 8 * bl, "lines_per_row": max(1, columns // bl),
    }


def _ini_stream_mode(mapping: str, org: dict[str, Any]) -> int:
    """Stage 2: where consecutive lines of a stream go -- the address-mapping field right
    above the column bits (1: next bank group, 2: next bank of one group, 0: same bank)."""
    fields = [mapping[i : i + 2] for i in range(0, len(mapping), 2)]
    widths = {"ch": _log2(org["channels"]), "ra": _log2(org["ranks"]), "bg": _log2(org["bankgroups"]),
              "ba": _log2(org["banks_per_group"]), "ro": _log2(org["rows"]), "co": _log2(org["lines_per_row"])}
    lowest = next((f for f in reversed(fields) if widths.get(f, 0) > 0), "co")
    if lowest == "bg":
        return 1  # consecutive lines rotate over bank groups
    if lowest in ("ba", "ra", "ch"):
        return 2  # consecutive lines rotate over banks of one group (tCCD_L)
    return 0  # consecutive lines stay in one bank (one row at a time)


def _ini_timings(tm: dict[str, str], org: dict[str, Any], gi) -> dict[str, float]:
    """Stage 3: the timings in memory cycles (CL/CWL with additive latency; GDDR/HBM read tRCD)."""
    trcd = gi(tm, "tRCDRD", gi(tm, "tRCD", 10)) if org["is_gddr"] or org["is_hbm"] else gi(tm, "tRCD", 10)
    return {
        "tck_ns": gi(tm, "tCK", 1.0),
        "cl": gi(tm, "CL", 12) + gi(tm, "AL", 0),
        "cwl": gi(tm, "CWL", 12) + gi(tm, "AL", 0),
        "trcd": trcd,
        "trp": gi(tm, "tRP", 10),
        "tras": gi(tm, "tRAS", 24),
        "trrd_s": gi(tm, "tRRD_S", 4),
        "trrd_l": gi(tm, "tRRD_L", 4),
        "tfaw": gi(tm, "tFAW", 50),
        "t32aw": gi(tm, "t32AW", 0) if org["is_gddr"] else 0.0,
        "tccd_s": gi(tm, "tCCD_S", 4),
        "tccd_l": gi(tm, "tCCD_L", 6),
        "twtr_s": gi(tm, "tWTR_S", 5),
        "twtr_l": gi(tm, "tWTR_L", 5),
        "trtrs": gi(tm, "tRTRS", 2),
        "trefi": gi(tm, "tREFI", 7800),
        "trfc": gi(tm, "tRFC", 74),
    }


def read_ini(path: str | Path):
    """Parse a DRAMsim3 .ini into a :class:`~models.blocks.dram.DramTiming`: organisation,
    stream mode from the address mapping, then the timings."""
    from models.blocks.dram import DramTiming

    p = Path(path)
    if not p.is_file():
        raise DseError(f"DRAMsim3 config {p} not found")
    ini = _parse_ini_text(p.read_text())
    st, tm, sy = ini.get("dram_structure", {}), ini.get("timing", {}), ini.get("system", {})
    gi = _number_reader(p)
    org = _ini_organisation(st, sy, gi)
    return DramTiming(
        name=p.stem,
        protocol=org["protocol"],
        **_ini_timings(tm, org, gi),
        burst_cyc=org["burst"],
        ranks=org["ranks"],
        bankgroups=org["bankgroups"],
        banks_per_group=org["banks_per_group"],
        request_bytes=org["request_bytes"],
        lines_per_row=org["lines_per_row"],
        stream_mode=_ini_stream_mode(sy.get("address_mapping", "chrobabgraco").lower(), org),
        channels=org["channels"],
        trans_queue=int(gi(sy, "trans_queue_size", 32)),
        cmd_queue=int(gi(sy, "cmd_queue_size", 16)),
    )


def read_runs_csv(path: str | Path):
    """A reference runs.csv as a polars DataFrame (raises DseError when unreadable)."""
    import polars as pl

    p = Path(path)
    if not p.is_file():
        raise DseError(f"reference CSV {p} not found")
    try:
        return pl.read_csv(p, infer_schema_length=10000)
    except Exception as exc:  # pragma: no cover - polars message
        raise DseError(f"cannot read {p}: {exc}") from None


def read_raw_stats(json_path: str | Path, ini_path: str | Path, *, pattern: str = "random",
                   read_fraction: float | None = None) -> dict[str, Any]:
    """One DRAMsim3 JSON statistics file -> a runs.csv-like row (dict).

    The JSON holds one object per channel (keys "0", "1", ...); counts are summed and the
    read latency is the read-weighted mean over channels.  ``pattern`` and
    ``read_fraction`` describe the trace (DRAMsim3 does not record them; the read fraction
    defaults to the measured one).  DRAMsim3 does not record the trace span, so the
    offered load is taken equal to the achieved bandwidth and the run is treated as
    unsaturated: give runs whose trace the controller kept up with."""
    jp, ip = Path(json_path), Path(ini_path)
    try:
        data = json.loads(jp.read_text())
    except (OSError, ValueError) as exc:
        raise DseError(f"cannot read DRAMsim3 stats {jp}: {exc}") from None
    t = read_ini(ip)
    chans = [v for k, v in data.items() if isinstance(v, dict)] if isinstance(data, dict) else []
    if not chans:
        raise DseError(f"{jp}: no per-channel statistics found")

    def s(key: str) -> float:
        return float(sum(float(c.get(key, 0) or 0) for c in chans))

    reads = s("num_read_cmds")
    writes = s("num_write_cmds")
    acts = s("num_act_cmds")
    cycles = max(float(chans[0].get("num_cycles", 0) or 0), 1.0)
    lat_cyc = 0.0
    w = 0.0
    for c in chans:
        n = float(c.get("num_reads_done", c.get("num_read_cmds", 0)) or 0)
        lat_cyc += float(c.get("average_read_latency", 0) or 0) * n
        w += n
    lat_cyc = lat_cyc / w if w else float("nan")
    sim_ns = cycles * t.tck_ns
    achieved = (reads + writes) * t.request_bytes / sim_ns
    # DRAMsim3 does not record the trace span, so the offered load is the achieved one
    # (give unsaturated runs); ``average_interarrival`` is kept for reference
    gap = float(chans[0].get("average_interarrival", 0) or 0)
    offered = achieved
    rf = read_fraction if read_fraction is not None else (reads / (reads + writes) if reads + writes else 1.0)
    peak = t.channels * t.request_bytes / (max(t.burst_cyc, t.tccd_s) * t.tck_ns)
    return {
        "run_id": jp.stem,
        "sweep": "raw",
        "standard": t.name,
        "config_file": ip.name,
        "pattern": "stream" if pattern in ("stream", "sequential") else "random",
        "read_fraction": rf,
        "tCK_ns": t.tck_ns,
        "request_bytes": t.request_bytes,
        "peak_GBps": peak,
        "offered_GBps": offered,
        "achieved_GBps": achieved,
        "saturated": 0,
        "average_interarrival_cyc": gap,
        "avg_read_latency_ns": lat_cyc * t.tck_ns,
        "e2e_avg_read_latency_ns": lat_cyc * t.tck_ns,
        "row_buffer_hit_rate": 1.0 - acts / max(reads + writes, 1.0),
        "num_read_cmds": reads,
        "num_write_cmds": writes,
        "num_act_cmds": acts,
    }


def read_raw_folder(folder: str | Path):
    """Every ``*.json`` DRAMsim3 stats file under ``folder`` with a sibling ``.ini`` (the
    only .ini in the folder, or ``<stem>.ini``) -> a polars frame in runs.csv columns.
    File names containing ``stream``/``random`` and ``rf<x>`` set pattern and read fraction."""
    import polars as pl

    f = Path(folder)
    rows = []
    inis = sorted(f.rglob("*.ini"))
    for jp in sorted(f.rglob("*.json")):
        stem = jp.name.split(".")[0]
        ini = next((i for i in inis if i.stem == stem), None)
        if ini is None:
            ini = next((i for i in inis if i.stem in jp.name), None)
        if ini is None and len(inis) == 1:
            ini = inis[0]
        if ini is None:
            ini = _find_shipped_ini(jp.name)
        if ini is None:
            continue
        pattern = "stream" if "stream" in jp.name else "random"
        m = re.search(r"rf(\d*\.?\d+)", jp.name)
        rf = float(m.group(1)) if m else None
        rows.append(read_raw_stats(jp, ini, pattern=pattern, read_fraction=rf))
    if not rows:
        raise DseError(f"no DRAMsim3 JSON statistics with a matching .ini found under {f}")
    return pl.DataFrame(rows)


def _find_shipped_ini(name: str) -> Path | None:
    from dse.registry import project_root

    ref = project_root() / "results" / "reference" / "dramsim3"
    label = name.split("__")[0]
    table = {"DDR4-3200": "DDR4_8Gb_x8_3200.ini", "DDR4-3200-BGI": "DDR4_8Gb_x8_3200_bgint.ini",
             "LPDDR4-2400": "LPDDR4_8Gb_x16_2400.ini", "HBM2": "HBM2_8Gb_x128_1ch.ini",
             "GDDR6": "GDDR6_8Gb_x16.ini"}
    fn = table.get(label)
    return ref / fn if fn and (ref / fn).is_file() else None
