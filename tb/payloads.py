"""Stream payloads packed and unpacked through their ``amaranth.lib.data`` layout.

One place for what every driver of a stream port needs (the cocotb drivers of
:mod:`ahasd.tb.cocotb_streams`, the simulator-independent TVC port driver
:mod:`ahasd.tb.tvc_driver`, the co-simulation replays): a payload is the integer of its layout's
bits, built with ``layout.const(fields).as_bits()`` and read with ``layout.from_bits(bits)``,
never with shifts and masks (``docs/streams.md``). Imports neither cocotb nor a simulator.
"""

import dataclasses

__all__ = ["pack", "unpack", "field_reader"]


def pack(layout, item):
    """``item`` (dict, dataclass or int) as the integer of a payload of ``layout`` (an int is
    taken as it is, as is anything for ``layout=None``, a plain unsigned payload)."""
    if dataclasses.is_dataclass(item):
        item = dataclasses.asdict(item)
    if isinstance(item, dict):
        return layout.const(item).as_bits()
    return int(item)


def unpack(layout, value, cls=None):
    """A payload read off the design: ``layout.from_bits`` of it (an int without layout), or,
    with a dataclass ``cls`` (a golden descriptor, say), that class built from the fields."""
    value = int(value)
    if layout is None:
        return value
    fields = layout.from_bits(value)
    if cls is None:
        return fields
    return cls(**{f.name: int(fields[f.name]) for f in dataclasses.fields(cls)})


def field_reader(layout):
    """A fast reader of ``layout``'s payloads for hot replay loops: ``read(value)`` -> ``{field:
    int}``, equal to the ints of ``layout.from_bits(value)`` (signed fields sign-extended). The
    offsets and widths come from the layout, once; ``from_bits`` per payload builds Amaranth
    objects and dominated the TVC replay's time."""
    from amaranth.hdl import Shape
    fields = []
    for name, f in layout:
        shape = Shape.cast(f.shape)
        fields.append((name, f.offset, (1 << shape.width) - 1, shape.signed, 1 << shape.width))

    def read(value):
        out = {}
        for name, offset, mask, signed, span in fields:
            v = (value >> offset) & mask
            out[name] = v - span if signed and v > mask >> 1 else v
        return out
    return read
