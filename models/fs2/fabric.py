"""Fabric geometry of a coherent switch network (fs2.md §2 items 1, 2, 4).

Devices hang ``fanout`` to a leaf switch; leaf switches are joined by one of the
topologies below.

    tree        leaves under a tree of the same fanout (the vanilla PCIe-style fabric);
                the single HA (CXL-like) hangs off the root
    star        every leaf on one hub switch (reconfigurable ports); host on the hub
    all_to_all  leaves wired pairwise; a leaf's uplink capacity split over its peers
    torus3d     leaves in a k x k x k torus (6 neighbour links per leaf)
    mesh3d      leaves in a k x k x k mesh

Single HA: the home of every line is the host.  Distributed HAs (CCIX-like): the home is
a uniformly random device (the requester itself with probability 1/N).

For a device miss the model needs where the home sits: how many switches the request
crosses, and how many *requester-side* switches lie on the way (each one an FS²-switch
cache that may hold the line).  :func:`geometry` returns, for every number ``l`` of
requester-side switches, the probability of the homes reached that way and the sums the
access-time formula is linear in (mean switches crossed, share of remote homes, share
weighted by 1 / the bandwidth share of the narrowest link).  Vectorized over points.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

TOPOLOGIES: tuple[str, ...] = ("tree", "star", "all_to_all", "torus3d", "mesh3d")
#: Switch fanouts the tables cover (devices or child switches per switch).
FANOUTS: tuple[int, ...] = (4, 8, 16, 32)
#: Largest fabric the tables cover (the article's scalability study stops at 256 devices).
MAX_DEVICES = 256
#: Requester-side switch levels kept per topology: a 4-ary tree of 256 devices has four;
#: off the tree a path meets at most the leaf and a star's hub.
TABLE_LEVELS = {"tree": 4, "star": 2, "all_to_all": 2, "torus3d": 2, "mesh3d": 2}
#: Links a leaf switch needs to its torus / mesh neighbours in three dimensions.
TORUS_PORTS = 6.0


@dataclass
class Geometry:
    """Per point (rows) and per count l = 0..I of requester-side switches (columns)."""

    prob: np.ndarray  # P(home reached past l requester-side switches)
    switches: np.ndarray  # sum of P x switches crossed one way
    remote: np.ndarray  # sum of P over homes off the device
    slow_link: np.ndarray  # sum of P / (bandwidth share of the narrowest link), homes off the device
    served: np.ndarray  # (n, I) devices whose requests pass requester-side switch l = 1..I
    owner_switches: np.ndarray  # (n,) mean switches from the home to a random other device (snoops)
    n_switches: np.ndarray  # (n,) switches in the fabric
    cached_switches: np.ndarray  # (n, I) switches at requester-side levels 1..l (cache sites of l cached levels)

    def take(self, idx: np.ndarray) -> "Geometry":
        """The rows ``idx`` only."""
        return Geometry(*(getattr(self, k)[idx] for k in self.__dataclass_fields__))


def tree_levels(n: np.ndarray, fanout: np.ndarray) -> np.ndarray:
    """Levels of a tree of the given fanout holding ``n`` devices (at least one switch)."""
    levels = np.ceil(np.log(np.maximum(n, 1.0)) / np.log(fanout) - 1e-9)
    return np.maximum(levels, 1.0)


def _ring_mean_hops(k: np.ndarray, torus: bool) -> np.ndarray:
    """Mean hops between two uniformly random nodes (may coincide) of a k-node ring (torus)
    or line (mesh)."""
    if torus:
        return np.where(k % 2 == 0, k / 4.0, (k * k - 1.0) / (4.0 * k))
    return (k * k - 1.0) / (3.0 * k)


def leaf_hops_distinct(leaves: np.ndarray, torus: bool) -> np.ndarray:
    """Mean inter-switch hops between two distinct leaves of a 3D torus / mesh (k^3 >= leaves)."""
    k = np.ceil(np.cbrt(leaves) - 1e-9)
    nodes = k**3
    mean_all = 3.0 * _ring_mean_hops(k, torus)
    return np.where(nodes > 1, mean_all * nodes / np.maximum(nodes - 1.0, 1.0), 0.0)


def _put(arr: np.ndarray, col: int, value) -> None:
    arr[:, col] += value


def geometry(topology: str, distributed: np.ndarray, n: np.ndarray, fanout: np.ndarray, max_levels: int) -> Geometry:
    """Home classes of ``topology`` for every point (``distributed`` True: CCIX-like)."""
    n = np.asarray(n, dtype=np.float64)
    f = np.asarray(fanout, dtype=np.float64)
    dist = np.asarray(distributed, dtype=bool)
    pts, cols = n.shape[0], max_levels + 1
    prob, sw, remote, slow = (np.zeros((pts, cols)) for _ in range(4))
    inv_n = 1.0 / n
    # the requester's own memory (distributed HAs only): no switch
    prob[:, 0] = np.where(dist, inv_n, 0.0)

    if topology == "tree":
        levels = tree_levels(n, f)
        served = np.empty((pts, max_levels))
        owner_dist = np.zeros(pts)
        total = np.zeros(pts)
        per_level = np.zeros((pts, max_levels))
        below_prev, reach = np.ones(pts), np.ones(pts)
        for j in range(1, max_levels + 1):
            reach = reach * f
            below = np.minimum(reach, n)  # devices under the requester's level-j switch
            served[:, j - 1] = below
            p_lca = (below - below_prev) * inv_n  # home first shared at level j
            root = levels == j  # single HA: the host port on the root
            p = np.where(dist, p_lca, root)
            s = np.where(dist, 2.0 * j - 1.0, levels)
            prob[:, j], sw[:, j], remote[:, j], slow[:, j] = p, p * s, p, p
            owner_dist += p_lca * (2.0 * j - 1.0)
            per_level[:, j - 1] = np.where(j <= levels, np.ceil(n / reach), 0.0)
            total += per_level[:, j - 1]
            below_prev = below
        owner = np.where(dist, owner_dist / np.maximum(1.0 - inv_n, 1e-12), levels)
    else:
        leaves = np.ceil(n / f)
        multi = leaves > 1
        same_leaf = np.minimum(f, n)  # devices on the requester's leaf, itself included
        p_leaf = np.where(dist, (same_leaf - 1.0) * inv_n, 0.0)
        p_far = np.where(dist, (n - same_leaf) * inv_n, 0.0)
        served = np.repeat(n[:, None], max_levels, axis=1)
        served[:, 0] = same_leaf
        # homes on the requester's leaf: one switch, full-width links
        _put(prob, 1, p_leaf), _put(sw, 1, p_leaf), _put(remote, 1, p_leaf), _put(slow, 1, p_leaf)
        if topology == "star":
            # far homes: leaf -> hub -> leaf, two requester-side switches; single HA on the hub
            hub = np.where(multi, 2.0, 1.0)
            p_host = np.where(dist, 0.0, 1.0)
            for col, pr, s in ((2, p_far, 3.0), (1, p_host * ~multi, 1.0), (2, p_host * multi, 2.0)):
                _put(prob, col, pr), _put(sw, col, pr * s), _put(remote, col, pr), _put(slow, col, pr)
            owner = np.where(dist, (p_leaf + 3.0 * p_far) / np.maximum(1.0 - inv_n, 1e-12), hub)
            total = leaves + multi
            per_level = np.zeros((pts, max_levels))
            per_level[:, 0], per_level[:, 1] = leaves, multi
        else:
            if topology == "all_to_all":
                far_sw = np.full(pts, 2.0)
                far_share = 1.0 / np.maximum(leaves - 1.0, 1.0)
            elif topology in ("torus3d", "mesh3d"):
                far_sw = 1.0 + leaf_hops_distinct(leaves, topology == "torus3d")
                far_share = np.full(pts, 1.0 / TORUS_PORTS)
            else:
                raise ValueError(f"unknown topology {topology!r}; allowed: {', '.join(TOPOLOGIES)}")
            # single HA: the host hangs off one leaf; devices on other leaves cross the fabric
            p_host_leaf = np.where(dist, 0.0, 1.0 / leaves)
            p_host_far = np.where(dist, 0.0, 1.0 - 1.0 / leaves)
            p_cross = p_far + p_host_far
            _put(prob, 1, p_host_leaf + p_cross)
            _put(sw, 1, p_host_leaf + p_cross * far_sw)
            _put(remote, 1, p_host_leaf + p_cross)
            _put(slow, 1, p_host_leaf + p_cross / far_share)
            owner_single = p_host_leaf + p_host_far * far_sw
            owner = np.where(dist, (p_leaf + p_far * far_sw) / np.maximum(1.0 - inv_n, 1e-12), owner_single)
            total = leaves
            per_level = np.zeros((pts, max_levels))
            per_level[:, 0] = leaves
    owner = np.where(n > 1, owner, 0.0)
    return Geometry(prob, sw, remote, slow, served, owner, total, np.cumsum(per_level, axis=1))


@cache
def _table(topology: str) -> Geometry:
    """:func:`geometry` of every (devices 1..MAX_DEVICES, fanout, HA mode), one row per
    fabric (:func:`_row`)."""
    n = np.repeat(np.arange(1, MAX_DEVICES + 1, dtype=np.float64), 2 * len(FANOUTS))
    f = np.tile(np.repeat(np.asarray(FANOUTS, dtype=np.float64), 2), MAX_DEVICES)
    dist = np.tile(np.asarray([False, True]), MAX_DEVICES * len(FANOUTS))
    return geometry(topology, dist, n, f, TABLE_LEVELS[topology])


_FANOUT_CODE = np.zeros(max(FANOUTS) + 1, dtype=np.int64)
_FANOUT_CODE[list(FANOUTS)] = np.arange(len(FANOUTS))


def _row(distributed: np.ndarray, n: np.ndarray, fanout: np.ndarray) -> np.ndarray:
    code = _FANOUT_CODE[np.asarray(fanout, dtype=np.int64)]
    return ((np.asarray(n, dtype=np.int64) - 1) * len(FANOUTS) + code) * 2 + np.asarray(distributed, dtype=np.int64)


def lookup(topology: str, distributed: np.ndarray, n: np.ndarray, fanout: np.ndarray) -> Geometry:
    """:func:`geometry` for integer ``n`` in 1..MAX_DEVICES and ``fanout`` in FANOUTS, from
    a table built once per topology (``TABLE_LEVELS[topology]`` requester-side levels)."""
    table, rows = _table(topology), _row(distributed, n, fanout)
    return Geometry(*(np.take(getattr(table, k), rows, axis=0) for k in table.__dataclass_fields__))
