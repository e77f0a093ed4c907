"""cxl-expander: a generic CXL Type-3 memory expander behind a host (the pilot model)."""
