"""IKS: a compute-enabled CXL memory expander for RAG retrieval (model ``iks``)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"iks": "model:Iks"},
    optimize={"iks-channel-split": "optimize:channel_split"},
    readme_order=6,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
