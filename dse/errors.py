"""User-facing errors.

A :class:`DseError` is bad input or an unusable environment: the CLI prints its message
on one line and exits with status 2, leaving nothing half-written.  Any other
exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class DseError(Exception):
    """Bad input: one line saying what was wrong and what is allowed."""

    exit_code = 2


def did_you_mean(word: str, options: Iterable[str], n: int = 3) -> str:
    """A short ' (did you mean: a, b?)' hint, or '' when nothing is close."""
    close = difflib.get_close_matches(word, list(options), n=n, cutoff=0.5)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


def allowed_list(options: Iterable[object], limit: int = 12) -> str:
    opts = [str(o) for o in options]
    if len(opts) > limit:
        return ", ".join(opts[:limit]) + f", ... ({len(opts)} in all)"
    return ", ".join(opts)
