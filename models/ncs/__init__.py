"""ncs: Neural Cloud Storage for cold videos (Lim et al., IEEE Micro 2025) -- TCO, tiers, restore latency."""
