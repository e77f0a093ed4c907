"""``dse new-model NAME --family FAMILY``: a working skeleton of a new architecture package.

Writes ``models/<pkg>/`` (``__init__.py`` with the package's descriptor, ``model.py``,
``claims.yaml``, ``README_section.md``, ``calibration.py``, ``figures.py``), ``spaces/<pkg>.toml``
and ``tests/test_<pkg>.py``; it refuses (one line, exit 2) when any of them exists.  The
skeleton passes the project's checks as written: a toy mechanism of the family (a fixed
overhead, fitted to one anchor, plus the unit of work's bytes at a media bandwidth), one echo
claim and one prediction, a space with cost among its objectives.  Then: replace the
mechanism, the claims and the section with the article's, and ``python -m models.readme``."""

from __future__ import annotations

import keyword
from pathlib import Path
from string import Template
from typing import Annotated

import typer

from dse.errors import DseError

#: The toy mechanism's numbers (the skeleton's claims and test follow from them).
ANCHOR_US = 20.0
MEDIA_GBPS = 3.2
WORK_B = 4096.0

INIT = Template('''"""$name: TODO one line on the architecture and its article."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"$name": "model:$cls"},
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv=None,
)
''')

MODEL = Template('''"""$name: TODO the architecture in one paragraph (article, venue, year, digest).

Skeleton written by ``dse new-model`` for the ``$family`` family; the mechanism is a toy to
replace, top-down like the article's request path.  One unit of work ($work_unit) is served by
one device: a fixed overhead (``overhead_us``, fitted in calibration.py to one anchor) plus
moving its bytes ($work_src) at ``media_gbps``, one unit at a time.  Cost: the device's
price and wall power (``boundary``).
"""

from __future__ import annotations

import numpy as np

from dse import units
from dse.model import Batch, Metric, Model, Param, knob_params

#: The family's latency metric is in $lat_unit; the mechanism works in microseconds.
LATENCY_PER_US = units.convert(1.0, "us", "$lat_unit")
US_PER_S = units.convert(1.0, "s", "us")
#: Bytes one GB/s moves in a microsecond.
B_PER_US_PER_GBPS = units.GB / US_PER_S


class $cls(Model):
    name = "$name"
    version = "1"
    summary = "TODO: one line (dse new-model skeleton: a device serving the $family family)"
    source = "TODO: the article (venue, year) and its digest"
    family = "$family"
    boundary = "one device: its purchase price and its wall power; hosts, network and software are outside"
    params = (
        *knob_params("$family"),
        Param("overhead_us", $overhead_us,
              "fitted (calibration.py) to the anchor: one unit of work takes $anchor_us us at the default point",
              bounds=(0.0, 1e7), doc="fixed time per unit of work"),
        Param("media_gbps", $media_gbps, "assumption: a PCIe 4.0 x4 device's ~3.2 GB/s; replace with the datasheet",
              bounds=(0.01, 1000.0), doc="bandwidth the unit of work's bytes move at"),$work_param
        Param("device_usd", 500.0, "assumption: a data-center device's price; replace with a dated price row",
              bounds=(0.0, 1e7), doc="purchase price of the device"),
        Param("device_power_w", 10.0, "assumption: a data-center device's active power; replace with the datasheet",
              bounds=(0.0, 1e5), doc="wall power of the device"),
    )
    metrics = (
        Metric("$lat_metric", "min", "$lat_doc"),
        Metric("transfer_frac", None, "share of one unit's time spent moving its bytes"),
    )

    def evaluate(self, p: Batch) -> dict[str, np.ndarray]:
        transfer_us = $work_expr / (p.media_gbps * B_PER_US_PER_GBPS)
        latency_us = p.overhead_us + transfer_us
        return {
            "work_per_s": US_PER_S / latency_us,
            "capex_usd": p.device_usd,
            "power_w": p.device_power_w,
            "$lat_metric": latency_us * LATENCY_PER_US,
            "transfer_frac": transfer_us / latency_us,
        }
''')

WORK_PARAM = '''
        Param("work_b", 4096.0, "assumption: bytes one unit of work moves; map the family's knobs onto the mechanism",
              bounds=(1.0, 1e12), doc="bytes per unit of work"),'''

CALIBRATION = Template('''"""The fit of $name's constant: ``overhead_us`` is fitted to one anchor, the time of one unit
of work at the default point (replace with the article's measured value).

    python -m models.$pkg.calibration      # prints the fit beside the model's default

The claims this fit uses are anchors (``kind: anchor`` in claims.yaml; then a ``cv.py`` refits
without each) or, as here, a number outside the claims."""

from __future__ import annotations

from dse import registry, units

#: The anchor: one unit of work's time (us) at the default point.
ANCHOR_US = $anchor_us
ANCHOR_SOURCE = "TODO: the article's measured time of one unit of work (figure / table / line)"


def latency_us(overhead_us: float) -> float:
    """The model's time of one unit of work (us) at the default point with ``overhead_us``."""
    value = registry.get("$name").point(overhead_us=overhead_us)["$lat_metric"]
    return units.convert(value, "$lat_unit", "us")


def fit() -> dict[str, float]:
    """``overhead_us`` that makes the model meet the anchor (a root of model - anchor)."""
    from scipy.optimize import brentq

    return {"overhead_us": float(brentq(lambda x: latency_us(x) - ANCHOR_US, 0.0, 1e6, xtol=1e-12))}


def main() -> None:
    default = registry.get("$name").defaults()["overhead_us"]
    for k, v in fit().items():
        print(f"{k}: fitted {v:.6g}, model default {default:.6g} (anchor {ANCHOR_US} us: {ANCHOR_SOURCE})")


if __name__ == "__main__":
    main()
''')

FIGURES = Template('''"""$name against the article: every claim as model over paper (replace with the article's
figures, one function per figure)."""

from __future__ import annotations

from typing import Any


def claim_rows() -> list[dict[str, Any]]:
    from dse import registry
    from dse.claims import evaluate_claims

    return [{"claim": r.id, "kind": r.kind, "model_over_paper": r.value / float(r.expected)}
            for r in evaluate_claims(registry.claims_file("$name"))
            if not isinstance(r.expected, tuple) and r.expected]


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    chart = alt.Chart(alt.Data(values=claim_rows())).mark_bar().encode(
        y=alt.Y("claim:N", sort=None, title=None), x=alt.X("model_over_paper:Q", title="model / paper"), color="kind:N")
    return [("$name: every claim, model over paper", chart)]
''')

CLAIMS = Template('''# Claims of $name (skeleton of dse new-model: replace with the article's results).
# kind: prediction (default): nothing was fitted to it; anchor: a constant was fitted to it
# (calibration.py; a cv.py then refits without it, dse validate --cv); echo: its value is a
# model input, so reproducing it shows nothing (left out of the pass rates).
model: $name
claims:
  - id: media-bandwidth
    kind: echo
    source: "TODO: the device datasheet's $media_gbps GB/s"
    description: "The media bandwidth is the datasheet's"
    scenarios:
      base: {}
    expr: "base.media_gbps"
    expected: $media_gbps
    tolerance: 0.01
    unit: GB/s
    note: "echo: media_gbps is this number"

  - id: double-bandwidth
    source: "TODO: the article's figure or line"
    description: "Doubling the media bandwidth shortens one unit of work by half its transfer time"
    scenarios:
      base: {}
      fast: {media_gbps: $fast_gbps}
    expr: "fast.$lat_metric / base.$lat_metric"
    expected: $ratio
    tolerance: 0.05
    unit: x
''')

README = Template('''### $name — TODO one line on the architecture (article, venue, year)

TODO: the mechanism in a paragraph (skeleton of `dse new-model`: one device of the `$family`
family, a fixed overhead fitted to one anchor plus the unit of work's bytes at `media_gbps`).

- Knobs: the `$family` family's workload knobs, `overhead_us`, `media_gbps`, `device_usd`,
  `device_power_w`.
- Claims (`claims.yaml`): the datasheet bandwidth (echo); doubling it shortens one unit of work
  (prediction).  Calibration: `python -m models.$pkg.calibration`.
- Example: `dse eval $name media_gbps=6.4` or `dse sweep spaces/$pkg.toml`.
''')

SPACE = Template('''model = "$name"
description = "Skeleton space of $name (dse new-model): media bandwidth and the family's $knob against cost and latency."

[knobs]
media_gbps = [1.6, 3.2, 6.4, 12.8]
$knob = [$knob_values]

[objectives]
usd_per_work = "min"
capex_usd = "min"
$lat_metric = "min"

[sweep]
strategy = "grid"
seed = 0
''')

TEST = Template('''"""$name: the skeleton's mechanism, its calibration and its space (dse new-model)."""

from __future__ import annotations

import pytest

from dse import registry
from dse.registry import project_root


def test_the_default_constant_is_the_fit() -> None:
    from models.$pkg import calibration

    default = registry.get("$name").defaults()["overhead_us"]
    assert calibration.fit()["overhead_us"] == pytest.approx(default, abs=1e-6)
    assert calibration.latency_us(default) == pytest.approx(calibration.ANCHOR_US, rel=1e-9)


def test_the_default_point() -> None:
    p = registry.get("$name").point()
    assert p["work_per_s"] == pytest.approx(1e6 / $anchor_us, rel=1e-9)  # one unit at a time
    assert p["capex_usd"] == 500.0 and p["power_w"] == 10.0


def test_more_bandwidth_is_never_slower_and_costs_the_same() -> None:
    m = registry.get("$name")
    slow, fast = m.point(media_gbps=1.0), m.point(media_gbps=2.0)
    assert fast["$lat_metric"] < slow["$lat_metric"] and fast["work_per_s"] > slow["work_per_s"]
    assert fast["capex_usd"] == slow["capex_usd"]


def test_the_space_loads() -> None:
    from dse.space import load_space

    space = load_space(project_root() / "spaces" / "$pkg.toml")
    assert space.model.name == "$name" and space.grid_size == 12
''')


def skeleton_files(root: Path, name: str, family: str) -> dict[Path, str]:
    """Every file of the skeleton (path -> text) for model ``name`` of ``family``."""
    from dse import families, units

    fam = families.family(family)
    pkg = name.replace("-", "_")
    knob = fam.knobs[0]
    kv = "value_b" in {k.name for k in fam.knobs}
    transfer_us = WORK_B / (MEDIA_GBPS * 1e3)
    overhead_us = ANCHOR_US - transfer_us
    lat_unit = units.unit_of(fam.latency_metric)
    values = [knob.default / 2, knob.default, knob.default * 2]
    values = [min(max(v, knob.bounds[0]), knob.bounds[1]) for v in values]
    subs = {
        "name": name, "pkg": pkg, "family": family, "cls": "".join(w.capitalize() for w in name.split("-")),
        "work_unit": fam.work_unit, "lat_metric": fam.latency_metric, "lat_unit": lat_unit, "lat_doc": fam.latency_doc,
        "anchor_us": repr(ANCHOR_US), "overhead_us": repr(round(overhead_us, 9)), "media_gbps": repr(MEDIA_GBPS),
        "fast_gbps": repr(2 * MEDIA_GBPS), "ratio": repr(round((overhead_us + transfer_us / 2) / ANCHOR_US, 6)),
        "work_src": "the kv-object knob ``value_b``" if kv else "``work_b``",
        "work_expr": "p.value_b" if kv else "p.work_b", "work_param": "" if kv else WORK_PARAM,
        "knob": knob.name, "knob_values": ", ".join(f"{round(v) if knob.integer else v:g}" for v in values),
    }
    d = root / "models" / pkg
    return {
        d / "__init__.py": INIT.substitute(subs),
        d / "model.py": MODEL.substitute(subs),
        d / "calibration.py": CALIBRATION.substitute(subs),
        d / "figures.py": FIGURES.substitute(subs),
        d / "claims.yaml": CLAIMS.substitute(subs),
        d / "README_section.md": README.substitute(subs),
        root / "spaces" / f"{pkg}.toml": SPACE.substitute(subs),
        root / "tests" / f"test_{pkg}.py": TEST.substitute(subs),
    }


def check_name(name: str, family: str) -> None:
    """Refuse a bad model name or family with one line."""
    from dse import registry
    from dse.architecture import NAME_RE
    from dse.errors import allowed_list, did_you_mean
    from dse.families import FAMILY_NAMES

    if not NAME_RE.match(name) or keyword.iskeyword(name.replace("-", "_")):
        raise DseError(f"model name {name!r} must be lowercase words joined by dashes (e.g. demo-arch)")
    if family not in FAMILY_NAMES:
        raise DseError(f"unknown family {family!r}{did_you_mean(family, FAMILY_NAMES)}; allowed: {allowed_list(FAMILY_NAMES)}")
    if name in registry.names():
        raise DseError(f"model {name!r} is registered already")


def new_model(name: str, family: str, root: Path) -> list[Path]:
    """Write the skeleton under ``root``; nothing is written if any of its files exists."""
    from dse.store import atomic_write_text

    check_name(name, family)
    files = skeleton_files(root, name, family)
    pkg = name.replace("-", "_")
    there = [p for p in (*files, root / "models" / f"{pkg}.py") if p.exists()]
    if there:
        raise DseError(f"{there[0].relative_to(root)} exists; dse new-model never overwrites (pick another name)")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
    return list(files)


def register(app: typer.Typer) -> None:
    app.command("new-model")(new_model_cmd)


def new_model_cmd(
    name: Annotated[str, typer.Argument(help="Model name: lowercase words joined by dashes (demo-arch).")],
    family: Annotated[str, typer.Option("--family", help="Workload family it serves (kv-object, llm-serve, ...).")],
) -> None:
    """Write a working skeleton of a new architecture package (model, claims, space, test)."""
    from dse.registry import project_root

    root = project_root()
    for path in new_model(name, family, root):
        typer.echo(f"wrote {path.relative_to(root)}")
    typer.echo("next: replace the toy mechanism and claims with the article's, then `python -m models.readme`")
