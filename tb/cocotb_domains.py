"""cocotb clock domains: the clocks and resets every cocotb testbench starts the same way.

A :class:`Domain` names a clock port, its reset port and its period; :func:`start_clocks` starts
one free-running clock per domain and :func:`reset` pulses every domain's reset, counted in
cycles of the first domain's clock. :class:`ahasd.tb.axil.AxiLiteTB` and the block scoreboards
build on them.
"""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

__all__ = ["Domain", "start_clocks", "reset", "cycles"]


class Domain:
    """A clock domain of the design: clock and reset port names and the period in ps."""

    def __init__(self, clock, reset, period_ps):
        self.clock, self.reset, self.period_ps = clock, reset, period_ps


def start_clocks(dut, domains):
    """Start the clock of every domain in ``domains``."""
    for domain in domains:
        cocotb.start_soon(Clock(getattr(dut, domain.clock), domain.period_ps, unit="ps").start())


async def cycles(clock, n):
    """Wait ``n`` rising edges of ``clock``."""
    for _ in range(n):
        await RisingEdge(clock)


async def reset(dut, domains, length=4, settle=None):
    """Hold every domain's reset for ``length`` cycles of the first domain's clock, release
    it, then wait ``settle`` cycles (default: ``length``)."""
    clock = getattr(dut, domains[0].clock)
    for domain in domains:
        getattr(dut, domain.reset).value = 1
    await cycles(clock, length)
    for domain in domains:
        getattr(dut, domain.reset).value = 0
    await cycles(clock, length if settle is None else settle)
