"""How one KV PUT's value crosses the host-SSD interconnect, per transfer method.

Three ways to move a value of ``v`` bytes (kvssd.md §2):

* **PRP** (the Baseline NVMe KV-SSD): one KV write command; the device DMA-reads the
  value through PRP entries, which address whole 4 KiB memory pages, so every value
  costs at least one page of DMA.  Above two pages a PRP list is fetched as well.
* **Piggyback**: the value rides in unused fields of NVMe commands: 35 B in the KV
  write command itself, then 56 B in each further "transfer" command.  Commands are
  synchronous, so a PUT costs one full command round per command.
* **CXL-FGT**: the host stores the value into the SSD's page buffer exposed as CXL
  memory (one 64 B line at a time, each flushed with clflush), and one NVMe command
  still carries the key.

Both the time and the traffic of each method are linear in a few step functions of
the value size ("bases": commands, lines, pages, ...).  A workload's expected cost is
then the method's coefficients times the expected bases, which ``workloads.py``
tabulates per workload and threshold; this keeps the model O(1) per design point.
"""

from __future__ import annotations

import numpy as np

from dse.units import CACHELINE_B

# ----------------------------------------------------------------------------- protocol
#: Value bytes carried by the KV write command's unused fields.  Source: kvssd.md §3,
#: "repurposes up to 35 bytes of unused fields" (~L2540).
PIGGYBACK_FIRST_B = 35.0
#: Value bytes per trailing transfer command.  Source: kvssd.md §3 (~L2540).
PIGGYBACK_NEXT_B = 56.0
#: PRP data granularity (host memory page).  Source: kvssd.md §3 (~L2515); NVMe CC.MPS 4 KiB.
PAGE_B = 4096.0
#: A PRP list is needed beyond PRP1 + PRP2, i.e. above two pages; 8 B per list entry.
#: Source: NVM Express Base Spec 2.0 §4.3 (PRP entries are 8 B).
PRP_DIRECT_PAGES = 2.0
PRP_ENTRY_B = 8.0
#: CXL.mem bytes on the wire per 64 B line in the 68 B flit (an all-data flit carries
#: 64 B of data + 2 B protocol id + 2 B CRC).  The article estimates CXL traffic "in
#: 68-byte flit units" (kvssd.md §3, ~L2549); headers are assumed packed into other
#: flits' slots (kvssd.md §7 ambiguity 4 suggests +1 header flit: see ``header_flits``).
FLIT68_B = 68.0
#: 256 B flit (CXL 3.x): 14 G-slots of 16 B carry 224 B of data per flit.  Source:
#: CXL 3.0 §6.2.3.1 layout (see models/blocks/link.py FLIT_G_SLOTS); headers packed.
FLIT256_B = 256.0
FLIT256_DATA_B = 224.0

# ----------------------------------------------------------------------------- bases
#: Step functions of the value size that every cost is linear in.
BASES: tuple[str, ...] = (
    "one",  # 1 (per PUT)
    "ncmd",  # NVMe commands a piggybacked value needs
    "lines",  # 64 B cache lines the value spans (CXL stores + flushes)
    "pages",  # 4 KiB pages PRP moves
    "prp_list",  # 1 when a PRP list must be fetched (more than two pages)
    "prp_entries",  # PRP list entries fetched
    "flits256",  # 256 B flits the value needs
    "value",  # the value bytes themselves
)
N_BASES = len(BASES)
B = {name: i for i, name in enumerate(BASES)}


def piggyback_commands(value_b: np.ndarray) -> np.ndarray:
    """NVMe commands needed to carry a value inline: 1 up to 35 B, +1 per 56 B more."""
    v = np.asarray(value_b, dtype=np.float64)
    return 1.0 + np.ceil(np.maximum(v - PIGGYBACK_FIRST_B, 0.0) / PIGGYBACK_NEXT_B)


def basis_columns(value_b: np.ndarray) -> dict[str, np.ndarray]:
    """The bases of each value size, by name."""
    v = np.asarray(value_b, dtype=np.float64)
    pages = np.maximum(np.ceil(v / PAGE_B), 1.0)
    listed = pages > PRP_DIRECT_PAGES
    return {
        "one": np.ones_like(v),
        "ncmd": piggyback_commands(v),
        "lines": np.ceil(v / CACHELINE_B),
        "pages": pages,
        "prp_list": listed.astype(np.float64),
        "prp_entries": np.where(listed, pages, 0.0),
        "flits256": np.ceil(v / FLIT256_DATA_B),
        "value": v,
    }


def bases(value_b: np.ndarray) -> np.ndarray:
    """The bases of each value size, shape ``value_b.shape + (N_BASES,)``."""
    cols = basis_columns(value_b)
    return np.stack([cols[name] for name in BASES], axis=-1)


# ----------------------------------------------------------------------------- crossovers
def piggyback_crossover_b(page_over_cmd: np.ndarray) -> np.ndarray:
    """Smallest value size at which piggybacking is no faster than PRP, for values
    within one page: the extra commands cost ``ncmd - 1`` command rounds, PRP costs one
    page DMA = ``page_over_cmd`` command rounds."""
    m = np.maximum(np.asarray(page_over_cmd, dtype=np.float64), 0.0)
    # ncmd - 1 = ceil((v - 35) / 56) >= m  <=>  v > 35 + 56 (ceil(m) - 1)
    return PIGGYBACK_FIRST_B + PIGGYBACK_NEXT_B * (np.maximum(np.ceil(m), 1.0) - 1.0) + 1.0


def cxl_crossover_b(page_ns: np.ndarray, line_ns: np.ndarray) -> np.ndarray:
    """Smallest value size at which CXL stores are no faster than one page of PRP DMA."""
    q = np.asarray(page_ns, dtype=np.float64) / np.asarray(line_ns, dtype=np.float64)
    # lines * line_ns >= page_ns  <=>  ceil(v / 64) >= q  <=>  v > 64 (ceil(q) - 1)
    return CACHELINE_B * (np.maximum(np.ceil(q), 1.0) - 1.0) + 1.0


def next_power_of_two(x: np.ndarray) -> np.ndarray:
    """The power-of-two size the article's threshold search would report (it tests
    4 B, 8 B, ... 8 KB): the first tested size at or above ``x``."""
    return 2.0 ** np.ceil(np.log2(np.maximum(np.asarray(x, dtype=np.float64), 1.0)))
