"""bandslim: fine-grained value transfer for NVMe key-value SSDs (BandSlim, IEEE Micro 2025)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"bandslim": "model:BandSlim"},
    readme_order=10,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
