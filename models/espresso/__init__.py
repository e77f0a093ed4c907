"""espresso: the Espresso CXL JBOF (inter-SSD processor and DRAM harvesting)."""
