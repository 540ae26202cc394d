"""cocotb tests of the AXI4-Lite register file (ahasd.hw.csr.CSR) with cocotbext-axi's master.

Run by tests/hw/test_csr.py. The scoreboard is ahasd.sim.blocks.csr.CSRModel; the register map comes from
hw/regs.rdl (ahasd.hw.regmap.load), the same source the RTL decoder was generated from.
"""

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from ahasd.sim.blocks.csr import OKAY, SLVERR, CSRModel
from ahasd.tb.axil import AxiLiteTB

#: A transaction that takes longer than this has hung the bus.
TIMEOUT_NS = 2000


class TB(AxiLiteTB):
    """The AXI4-Lite TB base plus the hardware-side drivers of the CSR ports and the model."""

    def __init__(self, dut):
        super().__init__(dut, timeout_ns=TIMEOUT_NS)
        self.model = CSRModel(self.regmap)
        self.addr_width = self.p["addr_width"]
        self.pulses = []

    def port(self, ident, name):
        return getattr(self.dut, f"regs__{self.regmap[ident].port_name}__{name}")

    def fields(self, *kinds):
        for reg in self.regmap.registers:
            for f in reg.fields:
                if f.kind in kinds:
                    yield reg, f

    async def reset(self):
        for reg, f in self.fields("status"):
            self.port(reg.ident, f.name).value = 0
        for reg, f in self.fields("intr"):
            self.port(reg.ident, f"{f.name}_set").value = 0
        for reg, f in self.fields("counter"):
            self.port(reg.ident, f"{f.name}_incr").value = 0
            if f.hwclr:
                self.port(reg.ident, f"{f.name}_clr").value = 0
        await super().reset(cycles=3)
        self.model.reset()
        cocotb.start_soon(self._monitor_pulses())

    async def _monitor_pulses(self):
        ports = [(reg.ident, f.name, self.port(reg.ident, f.name))
                 for reg, f in self.fields("pulse")]
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            for ident, name, port in ports:
                value = int(port.value)
                if value:
                    self.pulses.append((ident, name, value))

    # ---- bus accesses, each checked against the model -------------------------------------
    async def write(self, address, data, strobe=0xF):
        """Write ``data`` to the bytes of ``strobe`` at word ``address``; check the response."""
        await self.expect_write(address, data, self.model.write(address, data, strobe), strobe)

    async def read(self, address, check=True):
        value, resp = await self.bus_read(address)
        if check:
            data, code = self.model.read(address)
            assert resp == code, f"read 0x{address:X}: resp {resp}, expected {code}"
            assert value == data, f"read 0x{address:X}: 0x{value:08X}, expected 0x{data:08X}"
        return value, resp

    # ---- hardware-side events -----------------------------------------------------------
    async def pulse(self, signal, value=1, cycles=1):
        signal.value = value
        for _ in range(cycles):
            await RisingEdge(self.dut.clk)
        signal.value = 0
        await RisingEdge(self.dut.clk)

    async def hw_event(self):
        """One random hardware-side event, applied to the DUT and the model."""
        kind = self.rng.choice(["status", "intr", "counter", "clear"])
        if kind == "status":
            reg, f = self.rng.choice(list(self.fields("status")))
            value = self.rng.getrandbits(f.width)
            self.port(reg.ident, f.name).value = value
            self.model.drive(reg.ident, f.name, value)
            await RisingEdge(self.dut.clk)
        elif kind == "intr":
            reg, f = self.rng.choice(list(self.fields("intr")))
            bits = self.rng.getrandbits(f.width) | 1
            await self.pulse(self.port(reg.ident, f"{f.name}_set"), bits)
            self.model.hw_set(reg.ident, f.name, bits)
        else:
            reg, f = self.rng.choice(list(self.fields("counter")))
            if kind == "counter":
                n = self.rng.randrange(1, 5)
                await self.pulse(self.port(reg.ident, f"{f.name}_incr"), 1, cycles=n)
                self.model.hw_incr(reg.ident, f.name, n)
            else:
                await self.pulse(self.port(reg.ident, f"{f.name}_clr"))
                self.model.hw_clear(reg.ident, f.name)

    async def check_all(self):
        for reg in self.regmap.registers:
            await self.read(reg.address)

    def unmapped(self):
        """Word addresses in the AXI window that hold no register."""
        return [a for a in range(0, 1 << self.addr_width, 4) if self.regmap.at(a) is None]


@cocotb.test()
async def reset_values(dut):
    """Every register reads its reset value (status inputs held at 0)."""
    tb = TB(dut)
    await tb.reset()
    for reg in tb.regmap.registers:
        value, resp = await tb.read(reg.address)
        assert resp == OKAY and value == reg.reset, f"{reg.ident}: 0x{value:08X}"
    assert (await tb.read(tb.regmap["ID"].address))[0] == 0x41485344


@cocotb.test()
async def rw_fields_and_outputs(dut):
    """Every RW field stores what is written, drives it to its port, and keeps its neighbours."""
    tb = TB(dut)
    await tb.reset()
    for reg, f in list(tb.fields("config", "storage")):
        for value in (0, (1 << f.width) - 1, tb.rng.getrandbits(f.width), 0x5555_5555 & ((1 << f.width) - 1)):
            word = f.insert(tb.model.peek(reg.ident), value)
            await tb.write(reg.address, word)
            await tb.read(reg.address)
            if f.kind == "config":
                assert int(tb.port(reg.ident, f.name).value) == value
    await tb.check_all()


@cocotb.test()
async def bit_bash(dut):
    """Walking one and walking zero through every bit of every register, with byte strobes."""
    tb = TB(dut)
    await tb.reset()
    for reg in tb.regmap.registers:
        for bit in range(32):
            for word in (1 << bit, 0xFFFF_FFFF ^ (1 << bit)):
                if any(f.kind == "intr" for f in reg.fields):
                    # Re-arm the interrupts so that writing 1 has something to clear.
                    for f in reg.fields:
                        await tb.pulse(tb.port(reg.ident, f"{f.name}_set"), (1 << f.width) - 1)
                        tb.model.hw_set(reg.ident, f.name, (1 << f.width) - 1)
                await tb.write(reg.address, word)
                await tb.read(reg.address)
        # Each byte lane alone.
        for lane in range(4):
            await tb.write(reg.address, tb.rng.getrandbits(32), 1 << lane)
            await tb.read(reg.address)
    await tb.check_all()   # no write leaked into another register


@cocotb.test()
async def read_only_fields_ignore_writes(dut):
    """Const, status and counter fields are unchanged by writes (answered OKAY)."""
    tb = TB(dut)
    await tb.reset()
    for _ in range(20):
        await tb.hw_event()
    for reg in tb.regmap.registers:
        if all(f.kind in ("const", "status", "counter") for f in reg.fields):
            before = tb.model.peek(reg.ident)
            for word in (0xFFFF_FFFF, 0, ~before & 0xFFFF_FFFF):
                await tb.write(reg.address, word)
                value, _ = await tb.read(reg.address)
                assert value == before, f"{reg.ident} changed by a write"


@cocotb.test()
async def interrupts_write_one_to_clear(dut):
    """Interrupt bits: set by a pulse, sticky, cleared only by writing 1, a set beats a clear."""
    tb = TB(dut)
    await tb.reset()
    for reg, f in list(tb.fields("intr")):
        port = tb.port(reg.ident, f.name)
        setter = tb.port(reg.ident, f"{f.name}_set")
        await tb.pulse(setter)
        tb.model.hw_set(reg.ident, f.name, 1)
        for _ in range(3):  # sticky
            await RisingEdge(dut.clk)
        await tb.read(reg.address)
        assert int(port.value) == 1
        await tb.write(reg.address, ~f.mask & 0xFFFF_FFFF)   # writing 0 keeps it
        await tb.read(reg.address)
        await tb.write(reg.address, f.mask)                  # writing 1 clears it
        await tb.read(reg.address)
        assert int(port.value) == 0
        # A set in the very cycle a clear is performed wins: hold the set until the edge that
        # performs the write (the one after which B is raised), then drop it.
        setter.value = 1
        write = cocotb.start_soon(tb.write(reg.address, f.mask))
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.s_axil_bvalid.value):
                break
        await FallingEdge(dut.clk)
        setter.value = 0
        await write
        tb.model.hw_set(reg.ident, f.name, 1)
        await tb.read(reg.address)
        await tb.write(reg.address, f.mask)
        await tb.read(reg.address)


@cocotb.test()
async def pulses_and_counters(dut):
    """Single-pulse fields pulse once per write of 1 and read 0; counters count and clear."""
    tb = TB(dut)
    await tb.reset()
    for reg, f in list(tb.fields("pulse")):
        await tb.write(reg.address, f.mask)
        await tb.write(reg.address, 0)
        await tb.read(reg.address)
        await tb.write(reg.address, f.mask)
    for _ in range(3):
        await RisingEdge(dut.clk)
    assert tb.pulses == tb.model.pulses, f"{tb.pulses} != {tb.model.pulses}"
    for reg, f in list(tb.fields("counter")):
        await tb.pulse(tb.port(reg.ident, f"{f.name}_incr"), 1, cycles=7)
        tb.model.hw_incr(reg.ident, f.name, 7)
        await tb.read(reg.address)
        # clear and increment together: the clear wins
        tb.port(reg.ident, f"{f.name}_incr").value = 1
        await tb.pulse(tb.port(reg.ident, f"{f.name}_clr"))
        tb.port(reg.ident, f"{f.name}_incr").value = 0
        tb.model.hw_clear(reg.ident, f.name)
        tb.model.hw_incr(reg.ident, f.name, 1)   # the cycle after the clear still counted
        await tb.read(reg.address)


@cocotb.test()
async def unmapped_addresses_answer_slverr(dut):
    """Every unmapped word in the window answers SLVERR on read and write, and changes nothing."""
    tb = TB(dut)
    await tb.reset()
    holes = tb.unmapped()
    assert holes, "the window has no unmapped address to test"
    for address in holes:
        await tb.write(address, 0xFFFF_FFFF)
        _, resp = await tb.read(address)
        assert resp == SLVERR
    await tb.check_all()


@cocotb.test()
async def random_access_fuzz(dut):
    """Random reads/writes (mapped, unmapped, partial strobes) with random channel stalls and
    hardware events in between; every response is checked and none may time out."""
    tb = TB(dut)
    await tb.reset()
    tb.random_pauses()
    addresses = [r.address for r in tb.regmap.registers] + tb.unmapped()
    transactions = tb.p.get("transactions", 10000)
    for _ in range(transactions):
        roll = tb.rng.random()
        address = tb.rng.choice(addresses)
        if roll < 0.45:
            first = tb.rng.randrange(4)
            last = tb.rng.randrange(first, 4)
            strobe = sum(1 << i for i in range(first, last + 1))
            await tb.write(address, tb.rng.getrandbits(32), strobe)
        else:
            await tb.read(address)
        if tb.rng.random() < 0.1:
            await tb.hw_event()
    await tb.check_all()
    await RisingEdge(dut.clk)
    assert tb.pulses == tb.model.pulses


@cocotb.test()
async def concurrent_reads_and_writes(dut):
    """Reads and writes in flight at the same time on independent channels: both complete, and
    reads of registers not being written see the model's values."""
    tb = TB(dut)
    await tb.reset()
    tb.random_pauses()
    written = [tb.regmap["SCRATCH"], tb.regmap["TVC_FREQ_RATIO"], tb.regmap["EDC_CTRL"]]
    others = [r for r in tb.regmap.registers if r not in written and
              all(f.kind != "pulse" for f in r.fields)]

    async def writer():
        for _ in range(300):
            reg = tb.rng.choice(written)
            await tb.write(reg.address, tb.rng.getrandbits(32))

    async def reader():
        for _ in range(300):
            await tb.read(tb.rng.choice(others).address)

    tasks = [cocotb.start_soon(writer()), cocotb.start_soon(reader())]
    for task in tasks:
        await task
    await tb.check_all()
