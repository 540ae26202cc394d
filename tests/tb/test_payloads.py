"""ahasd.tb.payloads (pack / unpack through a layout) and ahasd.tb.generators.replay."""

import itertools
from dataclasses import dataclass

from amaranth.lib import data

from ahasd.tb.generators import replay
from ahasd.tb.payloads import pack, unpack

LAYOUT = data.StructLayout({"a": 4, "b": 8})


@dataclass
class Item:
    a: int
    b: int


def test_pack_follows_the_layout():
    # The first field in the least significant bits.
    assert pack(LAYOUT, {"a": 0x3, "b": 0xA5}) == 0xA53
    assert pack(LAYOUT, Item(a=0xF, b=0x01)) == 0x01F
    assert pack(None, 7) == 7 and pack(LAYOUT, 0x123) == 0x123


def test_unpack_is_the_inverse():
    fields = unpack(LAYOUT, 0xA53)
    assert (fields.a, fields.b) == (0x3, 0xA5)
    assert unpack(LAYOUT, 0x01F, Item) == Item(a=0xF, b=0x01)
    assert unpack(None, 9) == 9


def test_replay_pauses_where_the_trace_is_idle_then_never():
    gaps = replay([1, 0, 0, 1])
    assert list(itertools.islice(gaps, 7)) == [True, False, False, True, False, False, False]


def test_field_reader_equals_from_bits():
    """The hot-loop reader gives the ints of ``layout.from_bits`` for every field, signed ones
    sign-extended, on random payloads and the width extremes."""
    import random

    from amaranth.hdl import signed
    from amaranth.lib import data

    from ahasd.tb.payloads import field_reader
    layout = data.StructLayout({"a": 1, "b": 7, "c": signed(5), "d": 13})
    read = field_reader(layout)
    rng = random.Random(3)
    for value in [0, (1 << layout.size) - 1] + [rng.getrandbits(layout.size) for _ in range(500)]:
        fields = layout.from_bits(value)
        assert read(value) == {name: int(fields[name]) for name in ("a", "b", "c", "d")}, value
