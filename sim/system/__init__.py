"""The AHASD system simulator: configuration, hardware and workload models, one event-driven
engine, typed results and reports (docs/system-simulator.md)."""
