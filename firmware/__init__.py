"""Register constants, C header and drivers generated from the register map."""
