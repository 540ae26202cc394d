"""The descriptor integer mirror against the Amaranth layouts, and pack/unpack."""

import random

import pytest

from ahasd.hw import descriptors as hw
from ahasd.spec import descriptors as sim

PAIRS = [(sim.DraftDescriptor, hw.DraftDescriptor), (sim.FeedbackDescriptor, hw.FeedbackDescriptor),
         (sim.PreverifyDescriptor, hw.PreverifyDescriptor)]


@pytest.mark.parametrize("cls,layout", PAIRS)
def test_layout_offsets_match_the_mirror(cls, layout):
    assert layout.size == cls.width()
    offset = 0
    for name, bits in cls.FIELDS:
        field = layout[name]
        assert (field.offset, field.width) == (offset, bits), name
        offset += bits


@pytest.mark.parametrize("cls,layout", PAIRS)
def test_pack_equals_amaranth_constant(cls, layout):
    rng = random.Random(3)
    for _ in range(50):
        values = {name: rng.randrange(1 << bits) for name, bits in cls.FIELDS}
        desc = cls(**values)
        const = layout.const(values)
        assert desc.pack() == const.as_bits()
        assert cls.unpack(desc.pack()) == desc


def test_documented_widths():
    assert sim.DraftDescriptor.width() == 56
    assert sim.FeedbackDescriptor.width() == 57
    assert sim.PreverifyDescriptor.width() == 5


def test_out_of_range_fields_are_rejected():
    with pytest.raises(ValueError, match=r"DraftDescriptor.length must be an integer in 0..255 "
                                         r"\(8 unsigned bits\), not 256"):
        sim.DraftDescriptor(batch_id=0, length=256, kv_base=0, mean_entropy=0)
    with pytest.raises(ValueError, match=r"PreverifyDescriptor.urgent must be an integer in 0..1 "
                                         r"\(1 unsigned bit\), not 'x'"):
        sim.PreverifyDescriptor(verify_length=1, urgent="x")
    with pytest.raises(ValueError, match=r"FeedbackDescriptor word must be an integer in 0..\d+ \(57 bits\)"):
        sim.FeedbackDescriptor.unpack(1 << 57)
