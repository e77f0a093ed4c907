"""A toy model whose one constant is fitted to an anchor claim (for dse validate --cv)."""
