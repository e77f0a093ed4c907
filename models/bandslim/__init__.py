"""bandslim: fine-grained value transfer for NVMe key-value SSDs (BandSlim, IEEE Micro 2025)."""
