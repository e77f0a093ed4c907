"""Link block: bandwidth, flit efficiency, latency components, NVMe / RDMA / TCP."""

from __future__ import annotations

import numpy as np
import pytest

from dse.errors import DseError
from models.blocks import link as L


# ----------------------------------------------------------------------------- raw bandwidth
@pytest.mark.parametrize(
    ("gen", "lanes", "gbps"),
    [
        ("pcie3", 16, 15.75),  # 8 GT/s x 16 x 128/130 / 8
        ("pcie4", 16, 31.5),
        ("PCIe 5.0", 16, 63.0),  # the published "63 GB/s per direction"
        ("gen6", 16, 128.0),  # 64 GT/s PAM4, 1b/1b: flit overhead counted separately
        ("cxl2.0", 8, 31.5),
        ("cxl3.1", 16, 128.0),
        (5, 4, 15.75),
    ],
)
def test_raw_bandwidth_published_values(gen, lanes, gbps):
    assert L.raw_bw_gbps(gen, lanes) == pytest.approx(gbps, rel=2e-3)


def test_more_lanes_and_newer_generations_never_less_bandwidth():
    gens = np.arange(1, 8, dtype=float)[:, None]
    lanes = np.array([1, 2, 4, 8, 16, 32], dtype=float)[None, :]
    bw = L.raw_bw_gbps(gens, lanes)
    assert np.all(np.diff(bw, axis=1) > 0)
    assert np.all(np.diff(bw, axis=0) > 0)
    # CXL.mem bandwidth is monotone in lanes too, for every flit mode and mix
    for mode in ("68B", "256B", "256B_lo"):
        gen = "pcie5" if mode == "68B" else "pcie6"
        b = L.cxl_mem_bw_gbps(gen, lanes, mode, 0.7)
        assert np.all(np.diff(b) > 0)


def test_labels_codes_and_errors():
    assert L.gen_code("PCIe 4.0") == L.gen_code("gen4") == L.gen_code(4) == 3
    np.testing.assert_array_equal(L.gen_code(["pcie3", "cxl2.0"]), [2, 4])
    assert L.flit_code("68B") == L.flit_code(68) == L.flit_code(0) == 0
    assert L.flit_code("latency_optimized") == 2
    with pytest.raises(DseError, match="generation"):
        L.raw_bw_gbps("pcie9", 4)
    with pytest.raises(DseError, match="generation"):
        L.raw_bw_gbps(5.5, 4)
    with pytest.raises(DseError, match="lanes"):
        L.raw_bw_gbps(5, 0)
    with pytest.raises(DseError, match="flit mode"):
        L.cxl_mem_efficiency("128B", 1.0)
    with pytest.raises(DseError, match="68B flit"):
        L.cxl_mem_bw_gbps("pcie6", 16, "68B")
    with pytest.raises(DseError, match="read_frac"):
        L.cxl_mem_efficiency("68B", 1.5)


# ----------------------------------------------------------------------------- PCIe TLPs
def test_tlp_efficiency():
    # 256 B MPS on Gen3: 256 / (256 + 16 hdr + 6 DLL + 4 STP) = 0.908
    assert L.pcie_tlp_efficiency(4096, "pcie3") == pytest.approx(256 / 282)
    # flit mode: header per TLP, then 236 TLP bytes per 256 B flit
    assert L.pcie_tlp_efficiency(4096, "pcie6") == pytest.approx(256 / 272 * 236 / 256)
    # small transfers pay more overhead
    eff = L.pcie_tlp_efficiency(np.array([64, 256, 4096]), "pcie4")
    assert eff[0] < eff[1] <= eff[2] + 1e-12
    # Gen3 x8 DMA of 4 KiB ~ 7.2 GB/s (pcie-bench reports ~7 GB/s achievable)
    assert 6.8 < L.pcie_dma_bw_gbps("pcie3", 8, 4096) < 7.5


# ----------------------------------------------------------------------------- CXL flits
def test_flit_efficiency_known_values():
    eff = {m: L.cxl_mem_efficiency(m, np.array([1.0, 0.0])) for m in L.FLIT_MODES}
    # 68B read: 11 DRS headers per protocol flit + one all-data flit per line
    assert eff["68B"][0] == pytest.approx(64 / (68 * (1 + 1 / 11)))
    # 68B write: RwD header (1 per slot, 4 per protocol flit) + 1 all-data flit per line
    assert eff["68B"][1] == pytest.approx(64 / (68 * 1.25))
    assert eff["256B"][1] == pytest.approx(0.75)
    assert np.all(eff["68B"] < 64 / 68 + 1e-12)


def test_256b_flit_efficiency_vs_68b_as_spec_says():
    """CXL 3.0 keeps the protocol efficiency of the 68B flit in the 256B flit (the
    bandwidth doubles with the rate, not the packing), and the latency-optimized flit gives
    up a few percent (its HS-slot carries no data) for lower latency."""
    r = np.linspace(0, 1, 101)
    e68 = L.cxl_mem_efficiency("68B", r)
    e256 = L.cxl_mem_efficiency("256B", r)
    elo = L.cxl_mem_efficiency("256B_lo", r)
    assert np.all(np.abs(e256 / e68 - 1) < 0.05)
    assert np.all(elo <= e256 + 1e-12)
    assert np.all(elo / e256 > 0.9)
    # same lane count: CXL 3.x at 64 GT/s moves about twice the data of CXL 2.0
    ratio = L.cxl_mem_bw_gbps("cxl3.0", 16, "256B", 0.7) / L.cxl_mem_bw_gbps("cxl2.0", 16, "68B", 0.7)
    assert 1.9 < ratio < 2.1


def test_direction_asymmetry_and_mixes():
    # reads load S2M with data and M2S with requests only; writes the other way round
    m2s, s2m = L.cxl_mem_direction_bytes("68B", 1.0)
    assert s2m > 4 * m2s
    m2s, s2m = L.cxl_mem_direction_bytes("68B", 0.0)
    assert m2s > 4 * s2m
    # a mix uses both directions: total data rate exceeds one direction's raw rate
    r = np.linspace(0, 1, 201)
    for mode in L.FLIT_MODES:
        e = L.cxl_mem_efficiency(mode, r)
        assert e.max() > 1.2
        assert 0.3 < r[np.argmax(e)] < 0.8
        assert e[0] < e.max() and e[-1] < e.max()


def test_closed_form_matches_slot_packing_reference():
    rng = np.random.default_rng(3)
    f = rng.integers(0, 3, 5000)
    r = rng.random(5000)
    m2s, s2m = L.cxl_mem_direction_flits(f, r)
    ref_m = L._flits_reference(f, 1 - r, r, 1 - r, L._M2S_KREQ, L._M2S_KRWD, L._M2S_RREQ, L._M2S_RRWD)
    ref_s = L._flits_reference(f, r, r, 1 - r, L._S2M_KDRS, L._S2M_KNDR, L._S2M_RDRS, L._S2M_RNDR)
    np.testing.assert_allclose(m2s, ref_m, rtol=1e-12)
    np.testing.assert_allclose(s2m, ref_s, rtol=1e-12)


def test_cxl_x8_device_bandwidth_tens_of_gbps():
    # a PCIe 5.0 / CXL 2.0 x8 expander: ~27 GB/s of reads (raw 31.5 GB/s per direction)
    bw = L.cxl_mem_bw_gbps("cxl2.0", 8, read_frac=1.0)
    assert 20 < bw < 31.5
    # x16 CXL 2.0, 2:1 read:write: ~70 GB/s total over both directions
    assert 55 < L.cxl_mem_bw_gbps("cxl2.0", 16, read_frac=2 / 3) < 90


def test_chunked_evaluation_equals_single_pass():
    r = np.random.default_rng(0).random(300_000)
    whole = L._cxl_mem_efficiency(0, r)
    np.testing.assert_array_equal(L.cxl_mem_efficiency("68B", r), whole)


# ----------------------------------------------------------------------------- latency
def test_cxl_round_trip_matches_pond():
    # Pond (ASPLOS'23): direct attach adds 70-90 ns; one switch + two retimers add 115 ns
    direct = L.cxl_round_trip_ns("pcie5", 8)
    assert 70 <= direct <= 95
    switched = L.cxl_round_trip_ns("pcie5", 8, n_switches=1, n_retimers=2)
    assert switched - direct == pytest.approx(115, abs=15)
    parts = L.cxl_round_trip_breakdown("pcie5", 8, media_ns=50)
    assert sum(parts.values()) == pytest.approx(direct + 50)


def test_latency_optimized_flit_and_hops():
    std = L.cxl_round_trip_ns("pcie6", 4, "256B")
    lo = L.cxl_round_trip_ns("pcie6", 4, "256B_lo")
    assert lo < std
    # each extra switch adds at least its two traversals; more lanes never slower
    hops = L.cxl_round_trip_ns("pcie5", 8, n_switches=np.arange(4))
    assert np.all(np.diff(hops) >= 2 * L.CXL_SWITCH_NS)
    lanes = L.cxl_round_trip_ns("pcie5", np.array([1, 2, 4, 8, 16]))
    assert np.all(np.diff(lanes) < 0)
    # FEC applies only to PAM4 (64 GT/s+) links
    assert L.cxl_round_trip_breakdown("pcie5", 8)["fec"] == 0
    assert L.cxl_round_trip_breakdown("pcie6", 8)["fec"] > 0


def test_serialization():
    # 64 B on PCIe 5.0 x16 (63 GB/s): ~1.02 ns; 4 KiB on x4 Gen4 (7.88 GB/s): 520 ns
    assert L.serialization_ns(64, "pcie5", 16) == pytest.approx(64 / 63.015, rel=1e-3)
    assert L.serialization_ns(4096, "pcie4", 4) == pytest.approx(4096 / 7.877, rel=1e-3)
    assert L.flit_serialization_ns("256B_lo", "pcie6", 8) == pytest.approx(L.flit_serialization_ns("256B", "pcie6", 8) / 2)


# ----------------------------------------------------------------------------- NVMe
def test_nvme_overheads():
    parts = L.nvme_command_breakdown(4096, "pcie4", 4)
    assert parts["prp_fetch"] == 0  # 4 KiB fits PRP1
    big = L.nvme_command_breakdown(65536, "pcie4", 4)
    assert big["prp_fetch"] > 0  # 16 pages need a PRP list
    assert big["data"] > parts["data"]
    hw = L.nvme_command_overhead_ns(4096, "pcie4", 4, completion="polling", stack="none")
    # doorbell + SQE fetch + data + CQE over PCIe: a couple of microseconds
    assert 1000 < hw < 3000
    kernel = L.nvme_command_overhead_ns(4096, "pcie4", 4)
    spdk = L.nvme_command_overhead_ns(4096, "pcie4", 4, completion="polling", stack="spdk")
    assert spdk < kernel
    # writes fetch data with DMA reads (a round trip more than posted read data)
    assert L.nvme_command_overhead_ns(4096, 4, 4, write=True) > kernel
    with pytest.raises(DseError, match="completion"):
        L.nvme_command_overhead_ns(4096, 4, 4, completion="magic")


# ----------------------------------------------------------------------------- networks
def test_rdma_round_trips():
    # ConnectX-class one-sided READ of 64 B through a switch: ~2 us (Kalia et al., ATC'16)
    read = L.rdma_round_trip_ns(64, "read", 100, 1)
    assert 1500 < read < 2600
    write = L.rdma_round_trip_ns(64, "write", 100, 1)
    assert write < read  # inline write, ACK without a responder DMA round trip
    # Ethernet (RoCE) switches are slower than InfiniBand's; bigger payloads take longer
    assert L.rdma_round_trip_ns(64, "read", fabric="roce") > read
    sizes = L.rdma_round_trip_ns(np.array([64, 4096, 65536]), "read")
    assert np.all(np.diff(sizes) > 0)
    # bandwidth term: 64 KiB at 100 Gb/s is ~5.2 us of wire per hop
    assert sizes[2] - sizes[0] > 2 * 65536 * 8 / 100
    # DirectCXL's point: CXL.mem is an order of magnitude faster than RDMA
    assert read / L.cxl_round_trip_ns("pcie5", 8, n_switches=1, media_ns=60) > 5


def test_tcp_and_nvmeof():
    tcp = L.tcp_round_trip_ns(64, 25, 1)
    assert 8_000 < tcp < 20_000
    rdma = L.nvmeof_overhead_ns(4096, "rdma")
    tcp4k = L.nvmeof_overhead_ns(4096, "tcp")
    assert 3_000 < rdma < tcp4k < 40_000
    both = L.nvmeof_overhead_ns(4096, np.array([0, 1]))
    np.testing.assert_allclose(both, [rdma, tcp4k])


# ----------------------------------------------------------------------------- bench cases
def test_basic_bench_cases_run():
    """The bench cases of the link / cache / cost / energy blocks each evaluate their batch
    and report its size (timings are reported by ``dse bench``, not asserted here)."""
    from models.blocks.basic_bench import bench_cases

    cases = bench_cases(n=2000)
    names = [name for name, _ in cases]
    assert len(names) == len(set(names)) >= 10
    for name, fn in cases:
        count = fn()
        assert isinstance(count, int) and count > 0, name
