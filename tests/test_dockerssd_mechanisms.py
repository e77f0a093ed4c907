"""dockerssd: the CPU split and P.ISP-R RPC reading (isp.py), pipeline gain, pool KV and idle
replicas (llm.py), each against its source."""

from __future__ import annotations

import numpy as np
import pytest

from dse import registry
from models.dockerssd import isp
from models.dockerssd.isp import WORKLOADS

WL = list(WORKLOADS)
PKT = np.asarray([isp.WL["tcp_packets"][WORKLOADS.index(w)] for w in WL]) > 0
PARTS = ("network_s", "kernel_ctx_s", "lba_set_s", "storage_s", "system_s", "compute_s")


@pytest.fixture(scope="module")
def ispm():
    return registry.get("dockerssd-isp")


@pytest.fixture(scope="module")
def llmm():
    return registry.get("dockerssd-llm")


def test_pisp_r_rpc_only_for_packets_when_asked(ispm):
    # digest M1: P.ISP-R's network = packets x stack + RPCs; with pisp_rpc=packets a workload
    # that sends no packets has no network time, and P.ISP-R equals P.ISP-V there
    r = ispm.run({"design": "pisp_r", "workload": WL, "pisp_rpc": "packets"})
    v = ispm.run({"design": "pisp_v", "workload": WL, "pisp_rpc": "packets"})
    assert np.all(r["network_s"][~PKT] == 0) and np.all(r["network_s"][PKT] > 0)
    np.testing.assert_allclose(r["latency_s"][~PKT], v["latency_s"][~PKT] + (r["kernel_ctx_s"] - v["kernel_ctx_s"])[~PKT])
    # the RPC of each remoted syscall moves to kernel-ctx; the total of the two readings agrees
    old = ispm.run({"design": "pisp_r", "workload": WL, "pisp_rpc": "syscalls"})
    np.testing.assert_allclose((r["network_s"] + r["kernel_ctx_s"])[~PKT], (old["network_s"] + old["kernel_ctx_s"])[~PKT])
    # one host-stack message per packet: twice the host's TCP time on networked workloads
    h = ispm.run({"design": "host", "workload": WL})
    np.testing.assert_allclose(r["network_s"][PKT], 2 * h["network_s"][PKT])


def test_cpu_split_adds_up_and_books_kernel_ctx_on_the_host(ispm):
    for d in isp.DESIGNS:
        o = ispm.run({"design": d, "workload": WL})
        total = sum(o[k] for k in PARTS)
        assert np.all(o["host_cpu_s"] >= 0) and np.all(o["dev_cpu_s"] > 0)
        assert np.all(o["host_cpu_s"] + o["dev_cpu_s"] <= total * (1 + 1e-12))
        if d.startswith("pisp"):  # the host kernel services every remoted syscall (L1021)
            assert np.all(o["host_cpu_s"] >= o["kernel_ctx_s"] + o["lba_set_s"] - 1e-12)
    # read-heavy key-value store: rocksdb-read's 1.1M gets keep the host busy ~3.4 s of kernel-ctx under P.ISP-V
    o = ispm.run({"design": "pisp_v", "workload": "rocksdb_read"})
    assert float(np.ravel(o["kernel_ctx_s"])[0]) == pytest.approx(1.1e6 * 3.124e-6, rel=1e-3)
    # D-VirtFW: only Ether-oN's doorbell + interrupt per frame stays on the host (1.25 us, link block)
    v = ispm.run({"design": "d_virtfw", "workload": WL})
    n_pkt = np.asarray(isp.WL["tcp_packets"], dtype=float)
    np.testing.assert_allclose(v["host_cpu_s"], n_pkt * 1.25e-6)
    assert np.all(v["host_offload_frac"] > 0.8)


def test_pipeline_wins_where_tp_cannot_fit(llmm):
    # digest section 3: megatron-1T's ~2 TB of fp16 weights; 160 heads cap TP at 32 (2 TB / 32 = 62.5 GB of a
    # 64-GB host), so with the 32K context's activations no TP-only layout fits and the search takes PP
    o = llmm.run({"config": "h_nocache", "llm": "megatron-1T", "nodes": 128, "batch": 128, "seq_len": 32768})
    assert float(np.ravel(o["tp_only_fits"])[0]) == 0 and np.isnan(float(np.ravel(o["pp_gain_x"])[0]))
    assert float(np.ravel(o["pp_count"])[0]) >= 2 and float(np.ravel(o["tp_count"])[0]) == 32
    # lamda-137B (274 GB, 128 heads) fits TP-only: PP buys nothing there
    o = llmm.run({"config": "h_nocache", "llm": "lamda-137B", "nodes": 128, "batch": 128, "seq_len": 32768})
    assert float(np.ravel(o["tp_only_fits"])[0]) == 1 and float(np.ravel(o["pp_gain_x"])[0]) == pytest.approx(1.0)


def test_pool_kv_is_linear_in_batch_and_context(llmm):
    # digest M6: KV(t) = 2 L n_kv d b t B; lamda-137B: 64 x 128 x 128 x 2 x 2 B = 4 MiB per token (digest table)
    base = {"config": "d_cache", "llm": "lamda-137B", "nodes": 128}
    o = llmm.run({**base, "batch": [16, 32, 32], "seq_len": [4096, 4096, 8192]})
    np.testing.assert_allclose(o["kv_pool_gb"], np.asarray([16 * 4096, 32 * 4096, 32 * 8192]) * 4 * 2**20 / 1e9)
    # the nodes hold it: per node x nodes of the busy replicas covers the pool's cache
    busy = o["tp_count"] * o["pp_count"] * (o["replica_count"] - o["idle_replica_count"])
    assert np.all(o["kv_per_node_gb"] * busy >= o["kv_pool_gb"] * (1 - 1e-9))
    assert np.all(o["kv_pool_capacity_gb"] >= o["kv_pool_gb"])
    # no cache, no KV
    assert float(np.ravel(llmm.run({**base, "config": "d_nocache", "batch": 16, "seq_len": 4096})["kv_pool_gb"])[0]) == 0


def test_idle_replicas_when_the_batch_is_smaller_than_dp(llmm):
    o = llmm.run({"config": "d_cache", "llm": "palm-540B", "nodes": 128, "batch": [1, 128], "seq_len": 32768})
    dp, idle = o["replica_count"], o["idle_replica_count"]
    np.testing.assert_allclose(idle, np.maximum(dp - np.asarray([1, 128]), 0))
    assert idle[0] > 0 and idle[1] == 0
    np.testing.assert_allclose(o["idle_node_frac"], idle / dp)
