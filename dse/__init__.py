"""cxl-dse: analytical models and design-space exploration for CXL and disaggregated
memory/storage architectures."""

__version__ = "0.1.0"
