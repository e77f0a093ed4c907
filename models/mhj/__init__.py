"""mhj: merge hash join on CXL multi-host shared memory (IEEE Micro 2025; shared/research/cxl-sql-join.md)."""
