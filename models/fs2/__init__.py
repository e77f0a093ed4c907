"""fs2: switch-cache-assisted coherent fabric (FS², IEEE Micro 2025; shared/research/fs2.md)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"fs2": "model:Fs2"},
    readme_order=15,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
