"""cold-store: baseline cold storage -- self-hosted HDD or LTO tape, or an S3-class tier (public prices; no article)."""
