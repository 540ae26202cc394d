"""cocotb base testbench for designs with an AXI4-Lite slave port (``ahasd.hw.axil.AXILiteSignature``).

:class:`AxiLiteTB` owns the bus-functional models, in the manner of verilog-axis's ``TB``
classes: one clock per domain with its own period and a reset per domain
(:mod:`ahasd.tb.cocotb_domains`), cocotbext-axi's ``AxiLiteMaster`` on the bus, every
transaction bounded in time (a hung bus fails the test instead of stalling it), and two ways
onto the bus:

* :attr:`AxiLiteTB.driver`: the project's one Python driver
  (:class:`ahasd.firmware.driver.AsyncControllerDriver` over
  :class:`~ahasd.firmware.driver.AxiLiteMasterBus`) for every register access by name;
* :meth:`AxiLiteTB.bus_read` / :meth:`AxiLiteTB.bus_write`: raw word accesses by address with
  byte strobes that return the response code, for tests of the bus itself (unmapped addresses,
  partial writes, error responses), which a driver by design does not offer.
"""

import itertools
import logging
import random

from cocotb.triggers import with_timeout
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from ahasd.firmware.driver import AsyncControllerDriver, AxiLiteMasterBus
from ahasd.hw.csr import AXI_PREFIX
from ahasd.hw.regmap import load
from ahasd.sim.blocks.csr import OKAY
from ahasd.tb.cocotb_domains import Domain, cycles, reset, start_clocks
from ahasd.tb.cocotb_run import params

__all__ = ["AxiLiteTB", "Domain", "BoundedMaster"]


class BoundedMaster:
    """An ``AxiLiteMaster`` whose ``read`` / ``write`` fail after ``timeout_ns`` instead of
    waiting for ever (what :class:`~ahasd.firmware.driver.AxiLiteMasterBus` adapts)."""

    def __init__(self, master, timeout_ns):
        self.master, self.timeout_ns = master, timeout_ns

    async def read(self, address, length):
        return await with_timeout(self.master.read(address, length), self.timeout_ns, "ns")

    async def write(self, address, data):
        return await with_timeout(self.master.write(address, data), self.timeout_ns, "ns")


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
        start_clocks(dut, self.domains)
        bus = self.domains[0]
        self.clk = getattr(dut, bus.clock)
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, prefix), self.clk,
                                  getattr(dut, bus.reset))
        # One INFO line per transaction would make a 10k-transaction log huge and slow.
        self.axil.write_if.log.setLevel(logging.WARNING)
        self.axil.read_if.log.setLevel(logging.WARNING)
        self.bounded = BoundedMaster(self.axil, timeout_ns)
        #: The Python driver on this bus (``await tb.driver.check()`` reads ID and VERSION).
        self.driver = AsyncControllerDriver(AxiLiteMasterBus(self.bounded))

    async def reset(self, cycles=4):
        """Assert every domain's reset for ``cycles`` bus cycles, then wait as long again."""
        await reset(self.dut, self.domains, cycles)

    async def cycles(self, n, clock=None):
        """Wait ``n`` rising edges of ``clock`` (default: the bus clock)."""
        await cycles(clock or self.clk, n)

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
        resp = await self.bounded.read(address, 4)
        return int.from_bytes(resp.data, "little"), int(resp.resp)

    async def bus_write(self, address, data, strobe=0xF):
        """Write the bytes of ``data`` selected by ``strobe`` (contiguous lanes) to word
        ``address``; return the response code."""
        lanes = [lane for lane in range(4) if strobe & (1 << lane)]
        first, last = lanes[0], lanes[-1]
        assert lanes == list(range(first, last + 1)), "contiguous strobes only"
        payload = data.to_bytes(4, "little")[first:last + 1]
        resp = await self.bounded.write(address + first, payload)
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
