"""expand: expander-driven LLC prefetching for CXL-SSDs (ExPAND, Oh et al., IEEE Micro 2025)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"expand": "model:Expand"},
    readme_order=8,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
