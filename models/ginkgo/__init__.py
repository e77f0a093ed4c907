"""Ginkgo: a learned-index DRAM cache in front of CXL memory (shared/research/ginkgo.md)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"ginkgo": "model:Ginkgo"},
    readme_order=12,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
