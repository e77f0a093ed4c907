"""DirectCXL: memory pooling over CXL.mem against RDMA-based pooling (shared/research/directcxl.md)."""
