"""cxl-gpu: GPU memory expansion over CXL against UVM and GPUDirect Storage (see model.py)."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"cxl-gpu": "model:CxlGpu"},
    optimize={"cxl-gpu-llm": "llm_tier:largest_model"},
    readme_order=2,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
