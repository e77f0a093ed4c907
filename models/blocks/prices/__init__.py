"""Dated price tables (CSV, one source per row) read by :mod:`models.blocks.cost`."""
