"""rdio: RdIO / MinRdIO, an NVMe-oF object store with decoupled metadata and data paths (IEEE Micro 2025)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"rdio": "model:RdIO"},
    readme_order=9,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
