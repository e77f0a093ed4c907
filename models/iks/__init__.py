"""IKS: a compute-enabled CXL memory expander for RAG retrieval (model ``iks``)."""
