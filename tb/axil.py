"""cocotb base testbench for designs with an AXI4-Lite slave port (``ahasd.hw.csr.axil_ports``).

:class:`AxiLiteTB` owns the bus-functional models, in the manner of verilog-axis's ``TB``
classes: one clock per domain with its own period, a reset per domain, cocotbext-axi's
``AxiLiteMaster`` on the bus, and bus helpers that bound every transaction in time (a hung bus
fails the test instead of stalling it) and check responses. Register access by name uses the
register map of ``hw/regs.rdl`` (:func:`ahasd.hw.regmap.load`).
"""

import itertools
import logging
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from ahasd.hw.csr import AXI_PREFIX
from ahasd.hw.regmap import load
from ahasd.sim.blocks.csr import OKAY
from ahasd.tb.cocotb_run import params

__all__ = ["AxiLiteTB", "Domain"]


class Domain:
    """A clock domain of the design: clock and reset port names and the period in ps."""

    def __init__(self, clock, reset, period_ps):
        self.clock, self.reset, self.period_ps = clock, reset, period_ps


class AxiLiteTB:
    """Clocks, resets and the AXI4-Lite master of ``dut``.

    Parameters
    ----------
    domains : sequence of :class:`Domain`
        The first one clocks the bus (default: ``clk`` / ``rst`` at 10 ns).
    timeout_ns : int
        Longest time one bus transaction may take.
    seed : int
        Seed of :attr:`rng` unless the run's parameters (``AHASD_PARAMS``) give ``seed``.
    """

    def __init__(self, dut, *, domains=(Domain("clk", "rst", 10_000),), timeout_ns=2000,
                 seed=1, prefix=AXI_PREFIX):
        self.dut = dut
        self.p = params()
        self.rng = random.Random(self.p.get("seed", seed))
        self.regmap = load()
        self.domains = list(domains)
        self.timeout_ns = timeout_ns
        for domain in self.domains:
            cocotb.start_soon(Clock(getattr(dut, domain.clock), domain.period_ps,
                                    unit="ps").start())
        bus = self.domains[0]
        self.clk = getattr(dut, bus.clock)
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, prefix), self.clk,
                                  getattr(dut, bus.reset))
        # One INFO line per transaction would make a 10k-transaction log huge and slow.
        self.axil.write_if.log.setLevel(logging.WARNING)
        self.axil.read_if.log.setLevel(logging.WARNING)

    async def reset(self, cycles=4):
        """Assert every domain's reset for ``cycles`` bus cycles, then wait as long again."""
        for domain in self.domains:
            getattr(self.dut, domain.reset).value = 1
        await self.cycles(cycles)
        for domain in self.domains:
            getattr(self.dut, domain.reset).value = 0
        await self.cycles(cycles)

    async def cycles(self, n, clock=None):
        for _ in range(n):
            await RisingEdge(clock or self.clk)

    def random_pauses(self, probability=0.3):
        """Random valid/ready gaps on all five channels (so AW and W arrive in any order)."""
        for channel in (self.axil.write_if.aw_channel, self.axil.write_if.w_channel,
                        self.axil.write_if.b_channel, self.axil.read_if.ar_channel,
                        self.axil.read_if.r_channel):
            bits = [self.rng.random() < probability for _ in range(97 + self.rng.randrange(40))]
            channel.set_pause_generator(itertools.cycle(bits))

    # ---- bus transactions -------------------------------------------------------------------
    async def bus_read(self, address):
        """``(value, resp)`` of a 32-bit read of word ``address``."""
        resp = await with_timeout(self.axil.read(address, 4), self.timeout_ns, "ns")
        return int.from_bytes(resp.data, "little"), int(resp.resp)

    async def bus_write(self, address, data, strobe=0xF):
        """Write the bytes of ``data`` selected by ``strobe`` (contiguous lanes) to word
        ``address``; return the response code."""
        lanes = [lane for lane in range(4) if strobe & (1 << lane)]
        first, last = lanes[0], lanes[-1]
        assert lanes == list(range(first, last + 1)), "contiguous strobes only"
        payload = data.to_bytes(4, "little")[first:last + 1]
        resp = await with_timeout(self.axil.write(address + first, payload), self.timeout_ns,
                                  "ns")
        return int(resp.resp)

    # A testbench may override read / write (to check a model, say); the helpers below use the
    # bus primitives, so they never recurse into such an override.
    read = bus_read
    write = bus_write

    async def expect_read(self, address, value, resp=OKAY):
        got = await self.bus_read(address)
        assert got == (value, resp), \
            f"read 0x{address:X}: 0x{got[0]:08X}/{got[1]}, expected 0x{value:08X}/{resp}"

    async def expect_write(self, address, data, resp=OKAY, strobe=0xF):
        got = await self.bus_write(address, data, strobe)
        assert got == resp, f"write 0x{address:X}: resp {got}, expected {resp}"

    # ---- registers by name ------------------------------------------------------------------
    async def read_reg(self, ident):
        value, resp = await self.bus_read(self.regmap[ident].address)
        assert resp == OKAY, f"read {ident}: resp {resp}"
        return value

    async def write_reg(self, ident, value):
        await self.expect_write(self.regmap[ident].address, value)

    async def read_field(self, ident, name):
        """One field of a register, by the register map's field position."""
        return self.regmap[ident].field(name).extract(await self.read_reg(ident))

    def field_word(self, ident, **values):
        """The register word with the named fields at ``values`` (others 0)."""
        reg, word = self.regmap[ident], 0
        for name, value in values.items():
            word = reg.field(name).insert(word, value)
        return word
