"""cxl-gpu: GPU memory expansion over CXL against UVM and GPUDirect Storage (see model.py)."""
