"""rdio: RdIO / MinRdIO, an NVMe-oF object store with decoupled metadata and data paths (IEEE Micro 2025)."""
