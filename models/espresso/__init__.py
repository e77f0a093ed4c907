"""espresso: the Espresso CXL JBOF (inter-SSD processor and DRAM harvesting)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"espresso": "model:Espresso"},
    optimize={"espresso-harvest": "optimize:harvest"},
    readme_order=4,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
