"""FlexMem: tiered cache sharing of VM image pages on a memory pool (shared/research/vm-image-cache.md)."""
