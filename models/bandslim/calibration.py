"""The one fitted constant of the bandslim model, and how it was fitted.

``dma_eff_frac`` -- the OpenSSD's QD1 PRP DMA rate as a share of the raw Gen2 x8 link
rate -- is set so that Piggyback's response time is half of Baseline's for a 32 B value
on the Gen2 platform (kvssd.md §4 ``pb_resp_time_small``: "Response times are halved for
values up to 32 bytes", ~L2620).  That claim is then an anchor, not a prediction; every
headline claim is predicted.  Run ``python -m models.bandslim.calibration`` to refit.
"""

from __future__ import annotations

from scipy.optimize import brentq

#: Piggyback / Baseline response time for values up to 32 B on Gen2 (kvssd.md ~L2620).
HALVED_RATIO = 0.5
#: The value size the fit uses (any size up to 35 B gives the same: one command).
FIT_VALUE_B = 32.0


def fit_dma_eff_frac(**fixed: float | str) -> float:
    """``dma_eff_frac`` that makes Piggyback take ``HALVED_RATIO`` of Baseline's time."""
    from models.bandslim.model import BandSlim

    m = BandSlim()
    base = {"workload": "wa", "value_b": FIT_VALUE_B, "pcie_gen": 2, "lanes": 8, **fixed}

    def gap(eff: float) -> float:
        pt = m.point(mode="piggyback", dma_eff_frac=eff, **base)
        return 1.0 / pt["speedup_vs_baseline_x"] - HALVED_RATIO

    return float(brentq(gap, 0.005, 1.0, xtol=1e-6))


if __name__ == "__main__":  # pragma: no cover - manual refit
    print(f"dma_eff_frac = {fit_dma_eff_frac():.4f}")


# --- leave-one-anchor-out refit (models/bandslim/cv.py, ``dse validate bandslim --cv``)
#: The claims a constant is fitted to (claims.yaml ``kind: anchor``).
ANCHORS = ("pb_resp_time_small",)


def apriori_dma_eff_frac() -> float:
    """``dma_eff_frac`` before the fit: a DMA engine that moves 4 KiB pages at the Gen2
    link's TLP-limited rate (link block ``pcie_tlp_efficiency``: 256 B TLPs, 16 B header,
    6 B DLL, 2 B framing -> 0.914).  The article gives no other number that pins the
    OpenSSD's QD1 page-DMA time, so this is what the model predicts without its anchor."""
    from models.bandslim import transfer
    from models.blocks import link

    return float(link.pcie_tlp_efficiency(transfer.PAGE_B, 2))


def fit(exclude: frozenset[str] = frozenset()) -> dict[str, float]:
    """The fitted constants as bandslim parameters, without the anchors in ``exclude``."""
    if "pb_resp_time_small" in exclude:
        return {"dma_eff_frac": apriori_dma_eff_frac()}
    return {"dma_eff_frac": fit_dma_eff_frac()}
