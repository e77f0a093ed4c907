"""mhj: merge hash join on CXL multi-host shared memory (IEEE Micro 2025; shared/research/cxl-sql-join.md)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"mhj": "model:Mhj"},
    readme_order=14,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
