"""cold-store: baseline cold storage -- self-hosted HDD or LTO tape, or an S3-class tier (public prices; no article)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"cold-store": "model:ColdStore"},
    readme_order=16,
    claims="claims.yaml",
    figures="figures:figures",
    calibration=None,
    cv=None,
)
