"""Co-simulation: the Verilated RTL behind the golden models' API (RTL in the loop)."""
