"""ncs: Neural Cloud Storage for cold videos (Lim et al., IEEE Micro 2025) -- TCO, tiers, restore latency."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"ncs": "model:Ncs"},
    optimize={"ncs-tiers": "optimize:tier_assignment"},
    readme_order=5,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
