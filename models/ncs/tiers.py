"""Object-storage tiers of the NCS model, read from the cost block's dated price table.

The tiers are S3's storage classes, hottest first (``models/blocks/prices/object_storage.csv``):
each has a storage price ($/GB-month), a retrieval price ($/GB read), request prices, a
minimum storage duration, a first-byte latency and a design availability.  The article prices
only "Frequent" (US$0.021) and "Infrequent" (US$0.0125 + US$0.01/GB per access, L413); the
other tiers are AWS list prices (dated rows of the table).

A *tier set* is the menu a placement picks from.  For each set this module precomputes the
lower envelope of the yearly cost lines ``12 x storage + views x retrieval`` (per GB): the
tiers that are cheapest somewhere, coldest first.  Uniform price scaling keeps the envelope's
tier sequence, so the model only recomputes where the breakpoints fall.
"""

from __future__ import annotations

import numpy as np

from dse.units import DAYS_PER_MONTH
from models.blocks.cost import object_storage_tiers

#: Tiers of the model, hottest first.  "frequent" takes its price from the row chosen by the
#: ``frequent_volume`` parameter (see FREQUENT_ROWS).
TIERS: tuple[str, ...] = (
    "frequent",
    "infrequent",
    "one_zone",
    "archive_instant",
    "archive_flexible",
    "archive_flexible_bulk",
    "deep_archive",
    "deep_archive_bulk",
)
#: Price-table row behind "frequent" for each storage volume: the article's US$0.021 is the
#: S3 Standard rate above 500 TB/month (L413); US$0.023 is the first-50 TB rate.
FREQUENT_ROWS: dict[str, str] = {"over_500tb": "frequent_500tb", "first_50tb": "frequent"}
FREQUENT_VOLUMES: tuple[str, ...] = tuple(FREQUENT_ROWS)

#: Tier sets (menus).  "instant" is the digest's default (section 7.1: the millisecond tiers
#: Standard / Standard-IA / Glacier Instant Retrieval); "paper" the two tiers the article
#: prices; "instant_all" adds One Zone-IA; "all" adds the archive tiers (hours to restore).
TIER_SETS: dict[str, tuple[str, ...]] = {
    "instant": ("frequent", "infrequent", "archive_instant"),
    "paper": ("frequent", "infrequent"),
    "instant_all": ("frequent", "infrequent", "one_zone", "archive_instant"),
    "all": TIERS,
}
TIER_SET_NAMES: tuple[str, ...] = tuple(TIER_SETS)

MONTHS_PER_YEAR = 12.0
REQUESTS_PER_PRICE_UNIT = 1000.0  # request prices are per 1000 requests


def _rows() -> dict[str, object]:
    return {t.tier: t for t in object_storage_tiers("aws")}


def _table() -> dict[str, np.ndarray]:
    """Per-tier arrays, shape (volume, tier): prices, minimum duration, latency, availability."""
    rows = _rows()
    out: dict[str, list[list[float]]] = {
        k: []
        for k in ("store_usd_per_gb_month", "retrieve_usd_per_gb", "put_usd", "get_usd", "min_months",
                  "first_byte_s", "availability_pct")
    }
    for vol in FREQUENT_VOLUMES:
        cols: dict[str, list[float]] = {k: [] for k in out}
        for name in TIERS:
            r = rows[FREQUENT_ROWS[vol] if name == "frequent" else name]
            cols["store_usd_per_gb_month"].append(r.storage_usd_per_gb_month)
            cols["retrieve_usd_per_gb"].append(r.retrieval_usd_per_gb)
            cols["put_usd"].append(r.put_usd_per_1000 / REQUESTS_PER_PRICE_UNIT)
            cols["get_usd"].append(r.get_usd_per_1000 / REQUESTS_PER_PRICE_UNIT)
            cols["min_months"].append(r.min_duration_days / DAYS_PER_MONTH)
            cols["first_byte_s"].append(r.first_byte_latency_s)
            cols["availability_pct"].append(r.availability_pct)
        for k in out:
            out[k].append(cols[k])
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}


#: (volume, tier) arrays from the cost block.
TABLE = _table()
#: Tier-set membership, shape (set, tier).
IN_SET = np.array([[t in TIER_SETS[s] for t in TIERS] for s in TIER_SET_NAMES])
#: The online-object GET first-byte latency (S3 Standard row): paid per request once an
#: object is readable; archive tiers add their restore time once, up front.
GET_FIRST_BYTE_S = float(TABLE["first_byte_s"][0, TIERS.index("frequent")])


def better_service(a: int, b: int, volume: int = 0) -> bool:
    """Tier ``a`` serves better than tier ``b``: higher availability, or the same
    availability and a shorter first-byte latency (the article's "upper tier", L455, L553)."""
    av, lat = TABLE["availability_pct"][volume], TABLE["first_byte_s"][volume]
    return bool(av[a] > av[b] or (av[a] == av[b] and lat[a] < lat[b]))


def _envelope(volume: int, members: tuple[str, ...]) -> list[int]:
    """Tiers on the lower envelope of a = 12 x storage, b = retrieval, coldest first."""
    idx = [TIERS.index(t) for t in members]
    a = MONTHS_PER_YEAR * TABLE["store_usd_per_gb_month"][volume]
    b = TABLE["retrieve_usd_per_gb"][volume]
    # walk from n = 0 upward: start at the cheapest intercept (ties: flatter line), then
    # repeatedly jump to the line that takes over first
    cur = min(idx, key=lambda t: (a[t], b[t]))
    seq, x = [cur], 0.0
    while True:
        nxt, at = None, np.inf
        for t in idx:
            if b[t] < b[cur]:
                cross = (a[t] - a[cur]) / (b[cur] - b[t])
                if x <= cross < at or (cross == at and nxt is not None and b[t] < b[nxt]):
                    nxt, at = t, cross
        if nxt is None:
            return seq
        seq.append(nxt)
        cur, x = nxt, at


#: Envelope tier sequences padded by repeating the last tier, shape (volume, set, K_MAX).
_SEQS = [[_envelope(v, TIER_SETS[s]) for s in TIER_SET_NAMES] for v in range(len(FREQUENT_VOLUMES))]
K_MAX = max(len(q) for row in _SEQS for q in row)
ENVELOPE = np.array([[q + [q[-1]] * (K_MAX - len(q)) for q in row] for row in _SEQS], dtype=np.int64)
ENVELOPE_LEN = np.array([[len(q) for q in row] for row in _SEQS], dtype=np.int64)


def _upgrade_candidates() -> tuple[np.ndarray, int]:
    """For each envelope segment, the tiers of the same set that serve better (-1 = none),
    shape (volume, set, K_MAX, C_MAX)."""
    lists = []
    for v in range(len(FREQUENT_VOLUMES)):
        for si, s in enumerate(TIER_SET_NAMES):
            for j in range(K_MAX):
                base = int(ENVELOPE[v, si, j])
                cands = [TIERS.index(t) for t in TIER_SETS[s] if better_service(TIERS.index(t), base, v)]
                if j >= ENVELOPE_LEN[v, si]:
                    cands = []
                lists.append(cands)
    c_max = max(1, max(len(c) for c in lists))
    arr = np.full((len(lists), c_max), -1, dtype=np.int64)
    for i, c in enumerate(lists):
        arr[i, : len(c)] = c
    return arr.reshape(len(FREQUENT_VOLUMES), len(TIER_SET_NAMES), K_MAX, c_max), c_max


UPGRADE_CANDIDATES, C_MAX = _upgrade_candidates()


def _structures() -> tuple[np.ndarray, list[tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]]]:
    """Distinct (envelope, candidates) structures and the structure id of each (volume, set):
    the fleet sums are specialized per structure, without padding."""
    ids = np.zeros((len(FREQUENT_VOLUMES), len(TIER_SET_NAMES)), dtype=np.int64)
    found: list[tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]] = []
    for v in range(len(FREQUENT_VOLUMES)):
        for si in range(len(TIER_SET_NAMES)):
            k = int(ENVELOPE_LEN[v, si])
            seq = tuple(int(t) for t in ENVELOPE[v, si, :k])
            cands = tuple(tuple(int(c) for c in UPGRADE_CANDIDATES[v, si, j] if c >= 0) for j in range(k))
            key = (seq, cands)
            if key not in found:
                found.append(key)
            ids[v, si] = found.index(key)
    return ids, found


#: STRUCTURE_ID[volume, set] -> index into STRUCTURES: (envelope tiers, better-service candidates per segment)
STRUCTURE_ID, STRUCTURES = _structures()
