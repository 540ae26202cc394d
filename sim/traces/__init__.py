"""Trace formats (readers, writers) and stimulus generators: decoding traces, EDC events, TVC
transactions, GTS stimulus."""
