"""FlexMem: tiered cache sharing of VM image pages on a memory pool (shared/research/vm-image-cache.md)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"flexmem": "model:FlexMem"},
    readme_order=13,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
