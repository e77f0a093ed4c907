"""Tier placement per tier set: the cheapest tier of each design, upgrades, fleet sums.

Points are grouped by tier set so that each group works only on its own tiers (two to eight
rows instead of all eight, with the envelope and upgrade candidates known in advance).

Yearly cost of a video of ``hr_gb`` in tier t (cost block prices; digest M1-M3):

    baseline  A_t + (B_t + GET_t) n + PUT_t / horizon
    NCS       r (A_t + B_t n) + GET_t n g + PUT_t / horizon + n c + T

with A_t = HR storage $/year (minimum duration included), B_t = HR retrieval $ per view,
n = views a year, r = LR/HR size, g = GETs per view (subvideos), c = SR $ per view,
T = amortized training $/year.  Request fees (GET/PUT) count only where asked for.
"""

from __future__ import annotations

import numpy as np

from models.ncs import fleet, tiers

_STORE = tiers.TABLE["store_usd_per_gb_month"]  # (volume, tier)
_SAME = ("retrieve_usd_per_gb", "get_usd", "put_usd", "min_months", "first_byte_s", "availability_pct")
# only the "frequent" storage price depends on the volume row
assert all(np.all(tiers.TABLE[k] == tiers.TABLE[k][0]) for k in _SAME)
assert np.all(_STORE[:, 1:] == _STORE[0, 1:])
RETRIEVE, GET, PUT, MIN_MONTHS, FIRST_BYTE, AVAILABILITY = (tiers.TABLE[k][0] for k in _SAME)
FREQUENT = tiers.TIERS.index("frequent")
#: Members of each tier set (tier indices, hottest first).
SET_MEMBERS = [tuple(int(t) for t in np.flatnonzero(row)) for row in tiers.IN_SET]
# the fleet structure of a set does not depend on the volume row
assert np.all(tiers.STRUCTURE_ID == tiers.STRUCTURE_ID[0])
_SET_STRUCTURE = [tiers.STRUCTURES[int(i)] for i in tiers.STRUCTURE_ID[0]]
_BETTER = [[tiers.better_service(a, b) for b in range(len(tiers.TIERS))] for a in range(len(tiers.TIERS))]

OUT_KEYS = ("base_auto", "ncs_auto", "baseline_usd", "upgradable") + fleet.KEYS


def storage_usd_per_gb_year(tier, volume, horizon_years):
    """$/GB-year of a tier (numpy index arrays allowed), the minimum duration billed."""
    horizon_m = horizon_years * tiers.MONTHS_PER_YEAR
    billed = np.maximum(horizon_m, MIN_MONTHS[tier]) * (tiers.MONTHS_PER_YEAR / horizon_m)
    return _STORE[volume, tier] * billed


def by_tier_set(tset, vol, hr_gb, r, views, gets, fees, sr_view, train, s_scale, r_scale, horizon_years, mu, sigma):
    """Per-point auto tiers, baseline cost, upgrade flag and fleet sums; all arguments are
    (n,) arrays (``tset``, ``vol``: codes; ``fees``: 1 to count request fees, 0 not).  Returns a dict of (n,) arrays (``OUT_KEYS``)."""
    n = tset.shape[0]
    counts = np.bincount(tset, minlength=len(SET_MEMBERS))
    args = (vol, hr_gb, r, views, gets, fees, sr_view, train, s_scale, r_scale, horizon_years, mu, sigma)
    if np.count_nonzero(counts) == 1:
        return _one_set(int(np.argmax(counts)), *args)
    # group the points by tier set: one gather of every input and one scatter of every output
    order = np.argsort(tset, kind="stable")
    cols = np.stack(args[1:]).take(order, axis=1)
    vol_s = vol.take(order)
    parts, start = [], 0
    for s, cnt in enumerate(counts):
        if cnt:
            sl = slice(start, start + int(cnt))
            parts.append(_one_set(s, vol_s[sl], *cols[:, sl]))
            start += int(cnt)
    out = {}
    for k in OUT_KEYS:
        v = np.empty(n, dtype=parts[0][k].dtype)
        v[order] = np.concatenate([part[k] for part in parts])
        out[k] = v
    return out


def _one_set(s, vol, hr_gb, r, views, gets, fees, sr_view, train, s_scale, r_scale, horizon_years, mu, sigma):
    members = SET_MEMBERS[s]
    a, b, base, ncs = {}, {}, [], []
    extra = views * sr_view + train
    hs, hr = hr_gb * s_scale, hr_gb * r_scale
    horizon_m = horizon_years * tiers.MONTHS_PER_YEAR
    per_year = tiers.MONTHS_PER_YEAR / horizon_m
    put_scale = fees / horizon_years
    get_scale = fees * views
    for t in members:
        # storage $/year with the tier's minimum duration billed (storage_usd_per_gb_year)
        price = _STORE[vol, t] if t == FREQUENT else _STORE[0, t]
        billed = tiers.MONTHS_PER_YEAR if MIN_MONTHS[t] == 0 else np.maximum(horizon_m, MIN_MONTHS[t]) * per_year
        a[t] = price * billed * hs
        b[t] = RETRIEVE[t] * hr
        put_year = PUT[t] * put_scale
        get_view = GET[t] * get_scale
        data = a[t] + b[t] * views
        base.append(data + (get_view + put_year))
        ncs.append(data * r + (get_view * gets + put_year) + extra)
    idx = np.asarray(members)
    base_i = np.argmin(np.stack(base), axis=0)  # ties: the hotter tier (members are hottest first)
    base_auto = idx[base_i]
    baseline = np.choose(base_i, base)
    ncs_auto = idx[np.argmin(np.stack(ncs), axis=0)]
    # upgrade: NCS in a better-service tier of the set costs no more than the baseline
    upgradable = np.zeros(r.shape[0], dtype=bool)
    cheap: dict[int, np.ndarray] = {}
    for i_b, t_b in enumerate(members):
        cands = [i for i, t in enumerate(members) if _BETTER[t][t_b]]
        if not cands:
            continue
        for i in cands:
            if i not in cheap:
                cheap[i] = ncs[i] <= baseline
        ok = cheap[cands[0]]
        for i in cands[1:]:
            ok = ok | cheap[i]
        upgradable |= (base_i == i_b) & ok
    out = {"base_auto": base_auto, "ncs_auto": ncs_auto, "baseline_usd": baseline, "upgradable": upgradable.astype(np.float64)}
    out.update(fleet.sums(a, b, r, train, sr_view, _SET_STRUCTURE[s], mu, sigma))
    return out
