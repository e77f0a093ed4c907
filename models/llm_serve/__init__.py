"""llm-serve: an LLM serving system (TP GPUs, host, KV-cache tier) on the llm-serve family's scale."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"llm-serve": "model:LlmServe"},
    readme_order=17,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
