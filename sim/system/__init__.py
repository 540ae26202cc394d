"""The AHASD system simulator: configuration, hardware and workload models, one event-driven engine, results and reports."""
