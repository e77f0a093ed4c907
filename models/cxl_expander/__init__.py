"""cxl-expander: a generic CXL Type-3 memory expander behind a host (the pilot model)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"cxl-expander": "model:CxlExpander"},
    optimize={"cxl-expander-provision": "optimize:provision"},
    readme_order=1,
    claims="claims.yaml",
    figures=None,
    calibration=None,
    cv="cv",
)
