"""Readable claim sources for people who have not read the article digests.

A claim's ``source`` (models/<arch>/claims.yaml) is written for the engineer who built the
model: ``"003:L226 (Fig 9a): ..."``, ``"kvssd.md §4 bs_traffic_red_max (~L2620): ..."``,
``"F L194; M L1664: ..."``.  Digest file names, digest sections, digest claim ids and line
numbers mean nothing on the published site.  :func:`readable` turns such a source into
``"<article short title> (<venue> <year>), <figure / table / section if named>: <detail>"``.

The article of each model is one row of ``models/sources.csv`` (model, version, short
title, full title, authors, venue, year, DOI, digest file), compiled from each model's
``source`` class attribute and the digests' headers.  A model whose claims cite several
versions of one article has a row per version: cxl-gpu's ``000:`` (IEEE Micro) and
``003:`` (full preprint) prefixes, cxl-ssd's ``F`` (full preprint) and ``M`` (IEEE Micro).
Models with no article (cold-store, llm-serve, cxl-expander) cite their public sources in
full already; their sources pass through, with a reference to another model's digest
("CXL-GPU digest") replaced by that article.

Line references become "digest line N", or are dropped when the source names a figure,
table or section of the article.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "models" / "sources.csv"


@dataclass(frozen=True)
class Article:
    model: str
    version: str
    short: str
    title: str
    authors: str
    venue: str
    year: str
    doi: str
    digest: str
    note: str

    def venue_year(self) -> str:
        return " ".join(x for x in (self.venue, self.year) if x)

    def citation(self) -> str:
        """``"BandSlim (IEEE Micro 2025)"``; the authors when neither venue nor year is known."""
        vy = self.venue_year() or self.authors
        return f"{self.short} ({vy})" if vy else self.short


@lru_cache(maxsize=1)
def articles() -> dict[tuple[str, str], Article]:
    """(model, version) -> article; version '' is the model's article as a whole."""
    with TABLE.open(newline="", encoding="utf-8") as fh:
        rows = [Article(**{k: (v or "").strip() for k, v in r.items()}) for r in csv.DictReader(fh)]
    return {(a.model, a.version): a for a in rows}


def article(model: str, version: str = "") -> Article | None:
    return articles().get((model, version))


# ----------------------------------------------------------------------------- patterns
#: A line reference in a source's locator part: L226, ~L2620, L224-226, L547-L549.
_LINE = re.compile(r"~?\bL(\d+)(?:\s*[-–]\s*L?(\d+))?\b")
#: In the detail text only 3+ digit references count ("an L1 hit" is a cache level).
_LINE_DETAIL = re.compile(r"~?\bL(\d{3,})(?:\s*[-–]\s*L?(\d{3,}))?\b")
#: cxl-gpu's digest-number prefix: 003:L226, 000:L3372.
_NUM_PREFIX = re.compile(r"\b(\d{3}):(?=~?L\d)")
#: cxl-ssd's version letter: F L194, M L1664.
_LETTER_PREFIX = re.compile(r"\b([A-Z])\s+(?=~?L\d)")
#: Version words the digests use in parentheses (cxl-gpu: FULL = 003, MICRO = 000).
_VERSION_WORDS = {"FULL": "003", "MICRO": "000"}
#: Digest-internal references: file names, digest sections, mechanisms, ambiguities,
#: issue numbers, claim ids.
_INTERNAL = [
    re.compile(r"\b[\w-]+\.md\b"),
    re.compile(r"\bdigest\b(?:\s+(?:section\s+\d+(?:\.\d+)*|§\s*\d+(?:\.\d+)*|M\d+|ambiguity\s+\d+|item\s+\d+|table|priorities))*", re.I),
    re.compile(r"§\s*\d+(?:\.\d+)*(?:\s+(?:item\s+\d+|M\d+))?"),
    re.compile(r"\bissue\s+\d+\b"),
    re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b"),  # digest claim ids (bs_traffic_red_max)
    re.compile(r"\bM\d+\b"),  # a digest mechanism left after '§2'
]
#: What an article reader can look up: figures, tables, sections, abstract, introduction.
_LOCATOR = re.compile(r"\b(?:Figs?\.|Table\s*\d|Sec\.|Section\s*\d|abstract|intro(?:duction)?\b|ref\s*\d)", re.I)
_FIG = re.compile(r"\b(Figs?)\.?\s*(?=\d)")


def _split(source: str) -> tuple[str, str]:
    """(locator part, detail): split at the first ': ' outside parentheses and quotes."""
    depth, quote = 0, False
    for i, ch in enumerate(source):
        if ch == "'" and (i == 0 or not source[i - 1].isalnum()) or ch == "'" and quote:
            quote = not quote
        elif ch == "(" and not quote:
            depth += 1
        elif ch == ")" and not quote:
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0 and not quote and source[i + 1 : i + 2] == " ":
            return source[:i], source[i + 2 :]
    return source, ""


def _lines_text(refs: list[str]) -> str:
    if not refs:
        return ""
    return ("digest line " if len(refs) == 1 and "-" not in refs[0] else "digest lines ") + ", ".join(refs)


def _line_ref(m: re.Match[str]) -> str:
    return m.group(1) + (f"-{m.group(2)}" if m.group(2) else "")


def _clean(text: str) -> str:
    """Tidy what is left of a locator part after tokens were taken out."""
    prev = None
    while prev != text:
        prev = text
        text = re.sub(r"\(\s*(?:[,;/+]|\band\b|\s)*\)", "", text)  # empty parentheses
        text = re.sub(r"\(\s*(?:[,;/+]|\band\b)\s*", "(", text)
        text = re.sub(r"\s*(?:[,;/+]|\band\b)\s*\)", ")", text)
        text = re.sub(r"\s*([,;/])(?:\s*(?:[,;/]|\band\b))+", r"\1", text)  # runs of separators
        text = re.sub(r"\s+", " ", text).strip()
        text = re.sub(r"^(?:[,;:/+]|\band\b|\s)+|(?:[,;:/+]|\band\b|\s)+$", "", text)
        if text.startswith("(") and text.endswith(")") and text.count("(") == 1:
            text = text[1:-1].strip()
    text = re.sub(r"\s+([,;)])", r"\1", text)
    return text


def _other_digests(text: str) -> str:
    """'CXL-GPU digest' -> 'CXL-GPU (IEEE Micro and full preprint 2025)'."""
    shorts = {a.short.lower(): a for (m, v), a in articles().items() if not v}

    def sub(m: re.Match[str]) -> str:
        a = shorts.get(m.group(1).lower())
        return a.citation() if a else m.group(0)

    return re.sub(r"\b([\w²-]+) digest\b", sub, text)


def readable(model: str, source: str) -> str:
    """A claim source a reader of the site can follow (see the module docstring).

    >>> readable("cxl-gpu", "003:L226 (Fig 9a): 19.7% on load-intensive kernels")
    'CXL-GPU (full preprint), Fig. 9a: 19.7% on load-intensive kernels'
    """
    src = (source or "").strip()
    art = article(model)
    if art is None:
        return _detail(_other_digests(src))
    head, detail = _split(src)

    versions: list[str] = []

    def version(m: re.Match[str]) -> str:
        if article(model, m.group(1)):
            versions.append(m.group(1))
            return ""
        return m.group(0)

    head = _NUM_PREFIX.sub(version, head)
    head = _LETTER_PREFIX.sub(version, head)
    for word, v in _VERSION_WORDS.items():
        if article(model, v) and re.search(rf"\b{word}\b", head):
            if not versions:
                versions.append(v)
            head = re.sub(rf"\b{word}\b", "", head)
    refs = [_line_ref(m) for m in _LINE.finditer(head)]
    head = _LINE.sub("", head)
    head = re.sub(rf"^\s*{re.escape(art.short)}\b", "", head, flags=re.I)
    for pat in _INTERNAL:
        head = pat.sub("", head)
    head = _FIG.sub(lambda m: m.group(1) + ". ", head)
    head = _clean(head)
    parts = [_citation(model, versions, art), head]
    if not _LOCATOR.search(head):
        parts.append(_lines_text(list(dict.fromkeys(refs))))
    out = ", ".join(p for p in parts if p)
    return out + (": " + _detail(detail) if detail else "")


def _citation(model: str, versions: list[str], art: Article) -> str:
    arts = [a for a in (article(model, v) for v in dict.fromkeys(versions)) if a]
    if not arts:
        return art.citation()
    if len(arts) == 1:
        return arts[0].citation()
    return f"{art.short} ({'; '.join(a.venue_year() or a.authors for a in arts)})"


def _detail(text: str) -> str:
    """The detail text as written, with its line references spelled out."""
    text = re.sub(r"\b\d{3}:(?=~?L\d)", "", text)
    return _LINE_DETAIL.sub(lambda m: _lines_text([_line_ref(m)]), text)
