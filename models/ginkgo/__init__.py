"""Ginkgo: a learned-index DRAM cache in front of CXL memory (shared/research/ginkgo.md)."""
