"""The calibration page: block fits against the cycle-accurate reference runs."""

from __future__ import annotations

from dse.dashboard.html import Page


def calibration_page() -> Page | None:
    page = Page("Calibration", "calibration.html", subtitle="Blocks fitted to DRAMsim3 and MQSim reference runs")
    page.note("Calibration curves appear here once the DRAM and flash blocks are calibrated (`dse calibrate`).")
    return page
