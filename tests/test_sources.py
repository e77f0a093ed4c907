"""Readable claim sources (dse/sources.py, models/sources.csv) and their use on the site."""

from __future__ import annotations

import re

import pytest

from dse import registry
from dse.claims import ClaimResult, claims_files, load_claims
from dse.sources import article, articles, readable

#: Models whose claims cite public pages and datasheets in full rather than one article.
NO_ARTICLE = {"cold-store", "llm-serve", "cxl-expander"}


def _all_claims():
    out = []
    for _, path in claims_files():
        f = load_claims(path)
        out.extend((c.model or f.model, c.id, c.source) for c in f.claims)
    return out


CLAIMS = _all_claims()


def test_every_claim_gets_a_readable_source_that_names_its_article():
    assert len(CLAIMS) > 300
    for model, cid, src in CLAIMS:
        out = readable(model, src)
        where = f"{model}/{cid}: {src!r} -> {out!r}"
        assert out.strip(), where
        assert not re.search(r"\b\d{3}:~?L\d", out), where  # no bare '003:L226'
        assert not re.search(r"~?\bL\d{2,}\b", out), where  # no bare line reference
        if model in NO_ARTICLE:
            assert ".md" not in out, where
            continue
        a = article(model)
        assert a is not None, f"{model} has no row in models/sources.csv"
        assert out.startswith(a.short + " ("), where
        assert a.venue in out or a.authors in out or "preprint" in out, where
        assert ".md" not in out and "§" not in out, where


def test_every_model_with_claims_has_an_article_or_is_known_to_have_none():
    models = {m for m, _, _ in CLAIMS}
    assert models - NO_ARTICLE <= {m for m, _ in articles()}
    assert not NO_ARTICLE & {m for m, _ in articles()}


def test_the_table_agrees_with_each_models_source_attribute():
    """Each row names the digest its model's ``source`` attribute cites."""
    for (model, _), a in articles().items():
        assert model in registry.names(), model
        assert a.digest and a.digest in registry.model_class(model).source, (model, a.digest)
        assert a.short and a.title and (a.venue or a.authors)
        if "IEEE Micro" in a.venue:
            assert a.year, model


@pytest.mark.parametrize(
    "model, source, expected",
    [
        ("cxl-gpu", "003:L226 (Fig 9a): 19.7% on load-intensive kernels",
         "CXL-GPU (full preprint), Fig. 9a: 19.7% on load-intensive kernels"),
        ("cxl-gpu", "003:L224; 000:L3372 (Fig 9a/4a): UVM performs 52.7x worse than GPU-DRAM",
         "CXL-GPU (full preprint; IEEE Micro 2025), Fig. 9a/4a: UVM performs 52.7x worse than GPU-DRAM"),
        ("cxl-gpu", "000:L3245 (MICRO abstract): 50x higher performance than UVM",
         "CXL-GPU (IEEE Micro 2025), abstract: 50x higher performance than UVM"),
        ("cxl-gpu", "003:L258: and Rand by 5.7%", "CXL-GPU (full preprint), digest line 258: and Rand by 5.7%"),
        ("ginkgo", "L1938: Ginkgo reduces access latency by 13.5 % on average compared to Unison Cache",
         "Ginkgo (IEEE Micro 2025), digest line 1938: Ginkgo reduces access latency by 13.5 % on average compared to Unison Cache"),
        ("rdio", "nvmeof-objstore.md §4 read_tput_gain (L796): up to 48% higher read throughput than MinIO",
         "RdIO (IEEE Micro 2025), digest line 796: up to 48% higher read throughput than MinIO"),
        ("bandslim", "kvssd.md §4 amp_factor_32B (~L2525): Baseline moves roughly 130x the data of a 32 B value",
         "BandSlim (IEEE Micro 2025), digest line 2525: Baseline moves roughly 130x the data of a 32 B value"),
        ("espresso", "Espresso L267, Fig 13b: Espresso's IOPS/$ beats OC's",
         "Espresso (OSDI 2026), Fig. 13b: Espresso's IOPS/$ beats OC's"),
        ("cxl-ssd", "F L196; M L1666: high-miss workloads cut storage accesses by 62.1%",
         "From Block to Byte (full preprint; IEEE Micro 2025), digest lines 196, 1666: high-miss workloads cut storage accesses by 62.1%"),
        ("iks", "Table 1, ENNS QPS, solo run (~L3150)", "IKS (IEEE Micro 2025), Table 1, ENNS QPS, solo run"),
        ("ncs", "L545 (Fig 5a): up to 40.8% lower TCO than the baseline at a 45-day access interval",
         "NCS (IEEE Micro 2025), Fig. 5a: up to 40.8% lower TCO than the baseline at a 45-day access interval"),
        ("directcxl", "L128: best-case RDMA is 510.5x slower than an L1 hit",
         "DirectCXL (IEEE Micro 2023), digest line 128: best-case RDMA is 510.5x slower than an L1 hit"),
        ("dockerssd-llm", "L1090: D-Cache outperforms H-Cache by 7.9x (also abstract L877 and intro L913)",
         "DockerSSD (IEEE Micro 2025), digest line 1090: D-Cache outperforms H-Cache by 7.9x "
         "(also abstract digest line 877 and intro digest line 913)"),
        ("cxl-expander", "CXL-GPU digest: 250 ns round trip", "CXL-GPU (IEEE Micro 2025): 250 ns round trip"),
        ("cold-store", "IBM TS2290 (LTO-9) user manual: load-to-ready 16 s", "IBM TS2290 (LTO-9) user manual: load-to-ready 16 s"),
        ("no-such-model", "s", "s"),
    ],
)
def test_expansions(model, source, expected):
    assert readable(model, source) == expected


def _result(model: str, source: str) -> ClaimResult:
    return ClaimResult("c1", model, source, "", True, 2.0, 2.1, 5.0, "±10%", True, "x", "")


def test_validation_table_and_claims_chart_show_the_readable_source():
    from dse.dashboard.build import add_validation, claims_chart
    from dse.dashboard.html import Page

    res = [_result("cxl-gpu", "003:L226 (Fig 9a): 19.7% on load-intensive kernels")]
    page = Page("t", "t.html")
    add_validation(page, res)
    text = page.render([])
    assert "CXL-GPU (full preprint), Fig. 9a: 19.7% on load-intensive kernels" in text
    assert "003:L226" not in text
    spec = claims_chart(res).to_dict()
    dots = [layer for layer in spec["layer"] if any(t.get("field") == "source" for t in layer["encoding"].get("tooltip", []))]
    assert dots, "the claims chart's tooltip has no source"
    values = [v for d in spec.get("datasets", {}).values() for v in d] or spec["layer"][0]["data"]["values"]
    assert values[0]["source"] == "CXL-GPU (full preprint), Fig. 9a: 19.7% on load-intensive kernels"
