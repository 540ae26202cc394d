"""Amaranth RTL of the AHASD PIM-side blocks (one block per module)."""
