"""DirectCXL: memory pooling over CXL.mem against RDMA-based pooling (shared/research/directcxl.md)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"directcxl": "model:DirectCxl"},
    readme_order=11,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
