"""Testbench parts: simulation-only Amaranth models (the DRAM bank standing for the DRAM array),
simulation harnesses, port drivers and the shared helpers of the fast and cocotb tiers.

Nothing here is synthesised into a chip; ``ahasd.hw`` holds the synthesizable blocks.
"""
