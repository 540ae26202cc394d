"""AHASD: asynchronous NPU + PIM speculative decoding, in Python HDL.

Import packages: :mod:`ahasd.hw` (Amaranth RTL), :mod:`ahasd.sim` (golden models and system
simulator), :mod:`ahasd.firmware` (register constants and drivers), :mod:`ahasd.synth` (Yosys,
Verilator and nextpnr flows) and :mod:`ahasd.cli` (the ``ahasd`` command).
"""

__version__ = "0.1.0"
