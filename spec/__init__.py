"""The specification layer: what the RTL (``ahasd.hw``) and the golden models and simulator
(``ahasd.sim``) share, written once. Number formats, block parameters and their validators,
DRAM timing, lookup tables, clock periods, the cache location. It holds no behavioural model
and imports neither ``ahasd.hw`` nor ``ahasd.sim`` (``tests/test_layering.py``)."""
