"""fs2: switch-cache-assisted coherent fabric (FS², IEEE Micro 2025; shared/research/fs2.md)."""
