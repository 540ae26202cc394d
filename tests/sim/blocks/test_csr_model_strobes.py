"""The CSR golden model's partial writes: a write with byte strobes changes exactly the config
bits in the strobed bytes, for every strobe value, on a 32-bit config register (each byte lane
its own), a 16-bit one and W1C interrupt bits; expectations computed bit by bit."""

import pytest

from ahasd.hw.regmap import load
from ahasd.sim.blocks.csr import OKAY, CSRModel

REGMAP = load()


def _expected(old, data, strobe, width):
    """Bit by bit: a bit in a strobed byte takes the data's bit, any other keeps ``old``."""
    bits = 0
    for b in range(width):
        source = data if strobe & (1 << (b // 8)) else old
        bits |= ((source >> b) & 1) << b
    return bits


@pytest.mark.parametrize("strobe", range(16))
@pytest.mark.parametrize("ident", ["TVC_NVCT_PRESET", "TVC_FREQ_RATIO"])
def test_config_write_takes_the_strobed_bytes(ident, strobe):
    model = CSRModel(REGMAP)
    reg = REGMAP[ident]
    (field,) = reg.fields
    data = 0xA5C3_96E1 & ((1 << field.width) - 1)
    assert model.write(reg.address, data, strobe) == OKAY
    assert model.peek(ident) == _expected(field.reset, data, strobe, field.width)


@pytest.mark.parametrize("strobe", range(16))
def test_interrupt_clear_needs_byte_lane_0(strobe):
    model = CSRModel(REGMAP)
    reg = REGMAP["INT_STATUS"]
    for f in reg.fields:
        model.hw_set("INT_STATUS", f.name, 1)
    model.write(reg.address, 0x3F, strobe)
    assert model.peek("INT_STATUS") == (0 if strobe & 1 else 0x3F)
