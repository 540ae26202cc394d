"""Benchmarks behind ``ahasd bench``: they measure and print figures, never assert timing.

The application layer: these may import the golden models, the RTL, the tools and co-simulation.
"""
