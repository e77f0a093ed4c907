"""Execution configurations as columns (one row per configuration).

An execution is Calculon's 23 fields (see :data:`EXECUTION_FIELDS`).  Here they are
held as numpy columns: integers for counts and network indices, booleans for flags and
small integer codes for the categorical fields (``RECOMPUTE``, ``TP_COMM``,
``TP_OVERLAP``, ``ATTENTION``); the datatype is a column of strings.  Building a batch
of a million configurations is a handful of array operations, not a million dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.errors import DseError, allowed_list
from models.blocks.llm.calculon_io import EXECUTION_FIELDS
from models.blocks.llm.hardware import canonical_dtype

RECOMPUTE = ("none", "attn_only", "full")
TP_COMM = ("ar", "p2p_rs_ag", "rs_ag")
TP_OVERLAP = ("none", "ring", "pipe")
ATTENTION = ("multihead", "multiquery")

INT_FIELDS = ("num_procs", "tensor_par", "pipeline_par", "data_par", "tensor_par_net", "pipeline_par_net",
              "data_par_net", "batch_size", "microbatch_size", "pipeline_interleaving")
BOOL_FIELDS = ("fused_activation", "optimizer_sharding", "seq_par_ag_redo", "data_par_overlap",
               "weight_offload", "activations_offload", "optimizer_offload", "training")
CODE_FIELDS: dict[str, tuple[str, ...]] = {
    "activation_recompute": RECOMPUTE,
    "tensor_par_comm_type": TP_COMM,
    "tensor_par_overlap": TP_OVERLAP,
    "attention_type": ATTENTION,
}

#: defaults used when a field is not given to :meth:`Executions.from_columns`
DEFAULTS: dict[str, Any] = {
    "tensor_par_net": 0, "pipeline_par_net": 0, "data_par_net": 0, "microbatch_size": 1, "datatype": "float16",
    "fused_activation": True, "attention_type": "multihead", "activation_recompute": "none",
    "pipeline_interleaving": 1, "optimizer_sharding": False, "tensor_par_comm_type": "ar",
    "tensor_par_overlap": "none", "seq_par_ag_redo": False, "data_par_overlap": False, "weight_offload": False,
    "activations_offload": False, "optimizer_offload": False, "training": True,
}


def _codes(name: str, values: Any, n: int) -> np.ndarray:
    choices = CODE_FIELDS[name]
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        if arr.size and (arr.min() < 0 or arr.max() >= len(choices)):
            raise DseError(f"{name}: code out of range 0..{len(choices) - 1}")
        return np.broadcast_to(arr.astype(np.int64), (n,))
    flat = np.atleast_1d(arr).astype(str)
    uniq, inv = np.unique(flat, return_inverse=True)
    lut = np.empty(len(uniq), dtype=np.int64)
    for i, u in enumerate(uniq):
        if u not in choices:
            raise DseError(f"{name}={str(u)!r} is not allowed; allowed: {allowed_list(choices)}")
        lut[i] = choices.index(u)
    return np.broadcast_to(lut[inv.reshape(flat.shape)], (n,))


def _bools(name: str, values: Any, n: int) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind in "US":
        low = np.char.lower(arr.astype(str))
        ok = np.isin(low, ["true", "false"])
        if not ok.all():
            raise DseError(f"{name} must be true or false, got {np.atleast_1d(arr)[~np.atleast_1d(ok)][0]!r}")
        arr = low == "true"
    elif arr.dtype == object:
        if not all(isinstance(v, (bool, np.bool_)) for v in np.atleast_1d(arr)):
            raise DseError(f"{name} must be true or false")
        arr = arr.astype(bool)
    return np.broadcast_to(arr.astype(bool), (n,))


def _ints(name: str, values: Any, n: int) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind == "b" or arr.dtype == object and any(isinstance(v, bool) for v in np.atleast_1d(arr)):
        raise DseError(f"{name} must be an integer")
    try:
        f = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise DseError(f"{name} must be an integer, got {np.atleast_1d(arr)[0]!r}") from None
    if not np.all(f == np.round(f)):
        raise DseError(f"{name} must be an integer")
    return np.broadcast_to(f.astype(np.int64), (n,))


@dataclass
class Executions:
    """A batch of executions; ``cols`` maps each of the 23 fields to a length-``n`` column."""

    cols: dict[str, np.ndarray]
    n: int

    def __getitem__(self, key: str) -> np.ndarray:
        return self.cols[key]

    def __len__(self) -> int:
        return self.n

    @classmethod
    def from_columns(cls, n: int | None = None, **fields: Any) -> Executions:
        """Columns or scalars per field; missing fields take :data:`DEFAULTS`.

        ``num_procs`` defaults to TP*PP*DP.  Categoricals accept labels or codes.
        """
        unknown = [k for k in fields if k not in EXECUTION_FIELDS]
        if unknown:
            raise DseError(f"unknown execution field(s) {unknown}; allowed: {allowed_list(EXECUTION_FIELDS, 30)}")
        for need in ("tensor_par", "pipeline_par", "data_par", "batch_size"):
            if need not in fields:
                raise DseError(f"execution needs {need}")
        if n is None:
            n = 1
            for v in fields.values():
                a = np.asarray(v)
                if a.ndim:
                    n = max(n, a.shape[0])
        vals = {**DEFAULTS, **fields}
        if "num_procs" not in fields:
            vals["num_procs"] = (np.asarray(vals["tensor_par"]) * np.asarray(vals["pipeline_par"])
                                 * np.asarray(vals["data_par"]))
        cols: dict[str, np.ndarray] = {}
        for k in INT_FIELDS:
            cols[k] = _ints(k, vals[k], n)
        for k in BOOL_FIELDS:
            cols[k] = _bools(k, vals[k], n)
        for k in CODE_FIELDS:
            cols[k] = _codes(k, vals[k], n)
        dt = np.atleast_1d(np.asarray(vals["datatype"]).astype(str))
        uniq, inv = np.unique(dt, return_inverse=True)
        canon = np.asarray([canonical_dtype(u) for u in uniq])
        cols["datatype"] = np.broadcast_to(canon[inv.reshape(dt.shape)], (n,))
        return cls(cols, n)

    @classmethod
    def from_records(cls, records: Sequence[Mapping[str, Any]] | Iterable[Mapping[str, Any]]) -> Executions:
        """One dict per execution (Calculon execution JSON objects)."""
        recs = list(records)
        if not recs:
            raise DseError("no executions given")
        for i, r in enumerate(recs):
            missing = [k for k in EXECUTION_FIELDS if k not in r]
            if missing:
                raise DseError(f"execution #{i}: missing {', '.join(missing)}")
        cols = {k: np.asarray([r[k] for r in recs], dtype=object if k in BOOL_FIELDS + INT_FIELDS else None)
                for k in EXECUTION_FIELDS}
        for k in INT_FIELDS:
            cols[k] = np.asarray([r[k] for r in recs])
        return cls.from_columns(len(recs), **cols)

    def take(self, idx: Any) -> Executions:
        cols = {k: np.asarray(v)[idx] for k, v in self.cols.items()}
        n = len(next(iter(cols.values())))
        return Executions(cols, n)

    def record(self, i: int) -> dict[str, Any]:
        """Execution ``i`` as a Calculon JSON dict."""
        out: dict[str, Any] = {}
        for k in EXECUTION_FIELDS:
            v = self.cols[k][i]
            if k in CODE_FIELDS:
                out[k] = CODE_FIELDS[k][int(v)]
            elif k in BOOL_FIELDS:
                out[k] = bool(v)
            elif k in INT_FIELDS:
                out[k] = int(v)
            else:
                out[k] = str(v)
        return out
