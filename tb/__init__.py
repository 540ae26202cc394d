"""Testbench parts: simulation-only Amaranth models (the DRAM bank standing for the DRAM array),
simulation harnesses, port drivers and the shared helpers of the fast and cocotb tiers.

Nothing here is synthesised into a chip; ``ahasd.hw`` holds the synthesizable blocks.

Shared parts (see ``docs/streams.md`` for the stream naming rule they rely on):

* fast tier: :mod:`ahasd.tb.amaranth_sim` (one simulator runner with clocks per domain and a VCD
  switch, ``AHASD_VCD=1``; stream sources and sinks);
* cocotb tier: :mod:`ahasd.tb.cocotb_domains` (clocks and resets per domain),
  :mod:`ahasd.tb.cocotb_streams` (stream sources and sinks, :func:`run_in_order`),
  :mod:`ahasd.tb.axil` (the AXI4-Lite TB base, with the Python driver
  :mod:`ahasd.firmware.driver` on its bus), :mod:`ahasd.tb.controller_bench` (the controller
  top's TB), :mod:`ahasd.tb.cocotb_run` (build and run a cocotb module);
* both: :mod:`ahasd.tb.generators` (idle and backpressure generators), :mod:`ahasd.tb.payloads`
  (payloads through their layouts), :mod:`ahasd.tb.paths`;
* harnesses: :mod:`ahasd.tb.dram_system` (a DRAM-reading unit + the bank model), the base of
  :mod:`ahasd.tb.gemv_system` and :mod:`ahasd.tb.state_commit_system`.
"""
