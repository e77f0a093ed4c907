"""Popularity: the distribution of annual views over a video fleet (article Fig 1).

The article uses historical YouTube views (McGrady et al. 2023, its ref 4) but prints only
summary numbers.  The model takes a lognormal in annual views (heavy-tailed; an assumption),
described by its median and its log-standard-deviation sigma, in two fits (``POPULARITY``):

* ``coverage_fit_lognormal`` (default, as issue 7 asks): through both coverage points of the
  article's Fig. 1 -- half of the videos see <= 0.85 views a month (L413), 78% see <= 91 views
  a year (L415).  The NCS coverage claim (78%) then holds wherever the model's crossover sits
  at the article's 91 views a year; it is a prediction only through the crossover.  Other heavy-tailed shapes through the same two points give nearly the same
  fleet numbers (a log-logistic: fleet saving +0.1 pp, upgraded share +0.3 pp), so the shape
  is not a free lever once the two points are fixed.
* ``mcgrady_lognormal``: sigma from the concentration of views in McGrady's sample (the top
  3.67% of videos get 93.61% of views, L403; for a lognormal the view share of the top q is
  1 - Phi(Phi^-1(1-q) - sigma)), median from the 50% point.  Assumption: annual views are
  lifetime views over a common age, so they share sigma.  The 78% point is then a prediction
  (74.6%).

Closed forms used by the model (vectorized; x may be 0 or inf):
``cdf(x) = Phi(z)`` and ``partial_mean(x) = E[n; n < x] = exp(mu + sigma^2/2) Phi(z - sigma)``
with ``z = (ln x - mu) / sigma``.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from statistics import NormalDist

import numpy as np

from dse.units import DAYS_PER_YEAR

_STD = NormalDist()
MONTHS_PER_YEAR = 12.0


def _facts() -> dict[str, float]:
    path = Path(__file__).with_name("popularity.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return {r["stat"]: float(r["value"]) for r in rows}


FACTS = _facts()


def sigma_from_concentration(top_frac: float, top_share: float) -> float:
    """Lognormal sigma such that the top ``top_frac`` of items hold ``top_share`` of the total."""
    return _STD.inv_cdf(1.0 - top_frac) - _STD.inv_cdf(1.0 - top_share)


def sigma_from_two_points(x1: float, f1: float, x2: float, f2: float) -> float:
    """Lognormal sigma through two CDF points (x1, f1), (x2, f2)."""
    return math.log(x2 / x1) / (_STD.inv_cdf(f2) - _STD.inv_cdf(f1))


def median_from_point(x: float, f: float, sigma: float) -> float:
    """Lognormal median with CDF ``f`` at ``x``."""
    return x / math.exp(sigma * _STD.inv_cdf(f))


#: The article's baseline coverage point: 50% of videos at <= 0.85 views/month (L413).
BASELINE_POINT_VIEWS_PER_YEAR = FACTS["baseline_benefit_views_per_month"] * MONTHS_PER_YEAR
_SIGMA_MCGRADY = sigma_from_concentration(FACTS["top_video_frac"], FACTS["top_view_share"])
_SIGMA_COVERAGE = sigma_from_two_points(
    BASELINE_POINT_VIEWS_PER_YEAR, FACTS["baseline_benefit_frac"], FACTS["ncs_benefit_views_per_year"], FACTS["ncs_benefit_frac"]
)

#: name -> (median annual views, sigma of ln views)
POPULARITY: dict[str, tuple[float, float]] = {
    "coverage_fit_lognormal": (median_from_point(BASELINE_POINT_VIEWS_PER_YEAR, FACTS["baseline_benefit_frac"], _SIGMA_COVERAGE), _SIGMA_COVERAGE),
    "mcgrady_lognormal": (median_from_point(BASELINE_POINT_VIEWS_PER_YEAR, FACTS["baseline_benefit_frac"], _SIGMA_MCGRADY), _SIGMA_MCGRADY),
}
DEFAULT_POPULARITY = "coverage_fit_lognormal"
POPULARITY_NAMES: tuple[str, ...] = tuple(POPULARITY)


def implied_age_years(name: str = "mcgrady_lognormal") -> float:
    """Sanity check of the McGrady fit: the common video age (years) at which the annual-view
    median matches McGrady's lifetime point (65.44% of videos <= 100 views)."""
    median, sigma = POPULARITY[name]
    lifetime_median = median_from_point(FACTS["cold_view_threshold"], FACTS["cold_video_frac"], sigma)
    return lifetime_median / median


def interval_days(views_per_year):
    """Access interval (days) of a video with this many views a year (digest section 7.8)."""
    with np.errstate(divide="ignore"):
        return DAYS_PER_YEAR / np.asarray(views_per_year, dtype=np.float64)


def z_score(x, mu, sigma):
    """(ln x - mu) / sigma, with x = 0 -> -inf and x = inf -> inf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.log(x) - mu) / sigma


def cdf(x, mu, sigma):
    """Fraction of videos with fewer than x views a year."""
    from scipy.special import ndtr  # noqa: PLC0415  (heavy import kept out of module load)

    return ndtr(z_score(x, mu, sigma))


def partial_mean(x, mu, sigma):
    """E[n; n < x]: views per year summed over the videos below x, per video of the fleet."""
    from scipy.special import ndtr  # noqa: PLC0415

    return np.exp(mu + 0.5 * sigma * sigma) * ndtr(z_score(x, mu, sigma) - sigma)


def top_view_share(top_frac, sigma):
    """Share of all views that the most popular ``top_frac`` of videos get, for a lognormal
    of log-standard-deviation ``sigma``: 1 - Phi(Phi^-1(1 - q) - sigma) (the inverse of
    :func:`sigma_from_concentration`; independent of the median)."""
    from scipy.special import ndtr, ndtri  # noqa: PLC0415

    q = np.asarray(top_frac, dtype=np.float64)
    return 1.0 - ndtr(ndtri(1.0 - q) - np.asarray(sigma, dtype=np.float64))


def gini(sigma):
    """Gini coefficient of views over videos for a lognormal: 2 Phi(sigma / sqrt 2) - 1."""
    from scipy.special import ndtr  # noqa: PLC0415

    return 2.0 * ndtr(np.asarray(sigma, dtype=np.float64) / math.sqrt(2.0)) - 1.0
