"""cxl-ssd: a PCIe SSD turned into CXL memory ("From Block to Byte", Kwon et al., IEEE Micro 2025)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"cxl-ssd": "model:CxlSsd"},
    readme_order=7,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
