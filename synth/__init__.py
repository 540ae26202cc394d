"""Tool flows: Verilog export, Verilator lint/build, Yosys area, nextpnr FPGA."""
