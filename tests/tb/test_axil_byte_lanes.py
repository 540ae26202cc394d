"""The cocotb AXI4-Lite testbench's raw accesses (:class:`ahasd.tb.axil.AxiLiteTB`) against a
fake bus, without a simulator: byte strobes become the right address and bytes, reads are
little-endian words, and the ``expect_*`` checks fail on a wrong value or response code.

The fake stands where cocotbext-axi's ``AxiLiteMaster`` (behind ``BoundedMaster``) stands: it
takes ``write(address, data)`` / ``read(address, length)`` with a byte address and a byte
string inside one 32-bit word, as that master turns them into one transfer whose strobes are
the bytes from ``address % 4`` on, and keeps a byte-addressed memory.
"""

import asyncio
from types import SimpleNamespace

import pytest

from ahasd.sim.blocks.csr import OKAY, SLVERR
from ahasd.tb.axil import AxiLiteTB


class FakeBus:
    """A byte-addressed memory behind the ``read`` / ``write`` calls of ``AxiLiteMaster``."""

    def __init__(self, resp=OKAY):
        self.memory = {}
        self.resp = resp
        self.writes = []

    def word(self, address):
        return sum(self.memory.get(address + i, 0) << (8 * i) for i in range(4))

    def fill(self, address, value):
        for i in range(4):
            self.memory[address + i] = (value >> (8 * i)) & 0xFF

    async def write(self, address, data):
        assert address // 4 == (address + len(data) - 1) // 4, "one transfer stays in one word"
        self.writes.append((address, bytes(data)))
        for i, byte in enumerate(data):
            self.memory[address + i] = byte
        return SimpleNamespace(resp=self.resp)

    async def read(self, address, length):
        data = bytes(self.memory.get(address + i, 0) for i in range(length))
        return SimpleNamespace(data=data, resp=self.resp)


def _tb(bus):
    tb = AxiLiteTB.__new__(AxiLiteTB)      # no DUT: only the bus-facing helpers are exercised
    tb.bounded = bus
    return tb


def _contiguous_strobes():
    return [sum(1 << lane for lane in range(first, last + 1))
            for first in range(4) for last in range(first, 4)]


@pytest.mark.parametrize("strobe", _contiguous_strobes())
def test_partial_write_changes_exactly_the_strobed_bytes(strobe):
    bus, old, data = FakeBus(), 0x8899AABB, 0x11223344
    bus.fill(0x40, old)
    resp = asyncio.run(_tb(bus).bus_write(0x40, data, strobe))
    mask = 0
    for lane in range(4):
        if strobe >> lane & 1:
            mask |= 0xFF << (8 * lane)
    assert resp == OKAY
    assert bus.word(0x40) == (old & ~mask & 0xFFFFFFFF) | (data & mask)
    assert len(bus.writes) == 1 and len(bus.writes[0][1]) == bin(strobe).count("1")


def test_read_is_a_little_endian_word_and_its_response():
    bus = FakeBus(resp=SLVERR)
    for i, byte in enumerate((0x01, 0x02, 0x03, 0x84)):
        bus.memory[0x10 + i] = byte
    assert asyncio.run(_tb(bus).bus_read(0x10)) == (0x84030201, SLVERR)


def test_expect_read_checks_value_and_response():
    bus = FakeBus()
    bus.fill(0x8, 0xCAFE0001)
    tb = _tb(bus)
    asyncio.run(tb.expect_read(0x8, 0xCAFE0001))
    with pytest.raises(AssertionError, match="0x8"):
        asyncio.run(tb.expect_read(0x8, 0xCAFE0002))
    with pytest.raises(AssertionError, match="expected 0xCAFE0001/2"):
        asyncio.run(tb.expect_read(0x8, 0xCAFE0001, resp=SLVERR))


def test_expect_write_checks_the_response():
    tb = _tb(FakeBus(resp=SLVERR))
    asyncio.run(tb.expect_write(0x0, 1, resp=SLVERR))
    with pytest.raises(AssertionError, match="expected 0"):
        asyncio.run(tb.expect_write(0x0, 1))


def test_gapped_strobe_is_refused():
    with pytest.raises(AssertionError, match="contiguous"):
        asyncio.run(_tb(FakeBus()).bus_write(0x0, 0, 0b0101))
