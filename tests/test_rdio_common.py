"""rdio on the kv-object family scale: work_per_s, capex_usd, power_w, op_latency_us."""

from __future__ import annotations

import numpy as np
import pytest

from models.rdio.model import _PRICES, NO_DATA_DRIVES, RdIO


@pytest.fixture(scope="module")
def model() -> RdIO:
    return RdIO()


def test_default_point_is_the_articles_cluster(model):
    out = model.point()
    assert out["work_per_s"] == pytest.approx(out["throughput_kiops"] * 1000.0)
    assert out["op_latency_us"] == pytest.approx(out["latency_us"])
    # 4 compute nodes + 1 storage node (350 W each under load) + 8 SSDs (10 W)
    assert out["power_w"] == pytest.approx(5 * 350.0 + 8 * 10.0)
    assert 2e4 <= out["capex_usd"] <= 1e5
    assert np.isfinite(out["usd_per_work"]) and out["usd_per_work"] > 0


def test_small_object_rate_is_that_of_a_small_object_store(model):
    # 4 KiB GETs through one gateway of 20 cores: CPU-bound at ~1 ms of CPU per request,
    # thousands to tens of thousands per second, far below the 8 SSDs' ~4M IOPS
    out = model.point(size_from="value_b", value_b=4096.0)
    assert 5e3 <= out["work_per_s"] <= 2e5
    assert 100.0 <= out["op_latency_us"] <= 1e5


def test_family_knob_maps_onto_the_object_size(model):
    article = model.point(object_kb=256.0)
    family = model.point(size_from="value_b", value_b=256.0 * 1024.0)
    for k in ("work_per_s", "op_latency_us", "capex_usd", "power_w", "throughput_gbps"):
        assert family[k] == pytest.approx(article[k]), k
    # the knob is ignored unless selected: the article's object_kb wins
    assert model.point(value_b=8.0)["work_per_s"] == pytest.approx(model.point()["work_per_s"])


def test_bigger_objects_mean_fewer_requests(model):
    sizes = np.asarray([8.0, 4096.0, 65536.0, 1048576.0, 16.0 * 1048576.0, 64.0 * 1048576.0])
    for system in ("minio", "minrdio"):
        w = model.run({"system": system, "size_from": "value_b", "value_b": sizes})["work_per_s"]
        assert np.all(np.diff(w) <= 1e-9), system
        assert w[-1] < w[0] / 50.0


def test_capex_counts_every_node_nic_and_ssd(model):
    four, five = model.point(nodes=4), model.point(nodes=5)
    node = _PRICES["compute_node"] + _PRICES["network_port_per_gbit"] * 56.0
    ssd = (five["capex_usd"] - four["capex_usd"] - node) / 2.0  # two volumes per node
    assert 100.0 < ssd < 1000.0  # one 3.84 TB TLC drive's BOM
    assert five["power_w"] - four["power_w"] == pytest.approx(_PRICES["node_power"] + 2 * _PRICES["ssd_power"])


def test_no_data_drive_is_infeasible_with_a_reason(model):
    ev = model.run_full({"nodes": 2.0, "vols_per_node": 1.0, "parity_count": np.asarray([2.0, 1.0])})
    assert ev.feasible.tolist() == [False, True]
    assert ev.reason_of(0) == NO_DATA_DRIVES
