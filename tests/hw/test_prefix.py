"""ahasd.hw.prefix against Python integer arithmetic (fast tier): every operand pair at small
widths, random ones and the edge values at 33 bits (a partial prefix level)."""

import itertools
import random

import pytest
from amaranth import Module, Signal

from ahasd.hw import prefix
from ahasd.tb.amaranth_sim import simulate


def _pairs(width):
    if width <= 3:
        return list(itertools.product(range(1 << width), repeat=2))
    rng = random.Random(width)
    edge = [0, 1, (1 << width) - 1, 1 << (width - 1), (1 << (width // 2)) - 1]
    return [(a, b) for a in edge for b in edge] + \
        [(rng.getrandbits(width), rng.getrandbits(width)) for _ in range(60)]


@pytest.mark.parametrize("width", [1, 3, 16, 33])
def test_against_integers(width):
    a, b, cin = Signal(width), Signal(width), Signal()
    outs = {"add": Signal(width), "addc": Signal(width), "sub": Signal(width),
            "inc": Signal(width), "ge": Signal(), "gray": Signal(width),
            "split_inc": Signal(width), "select_sub": Signal(width), "select_add": Signal(width)}
    m = Module()
    m.d.comb += [
        outs["add"].eq(prefix.add(m, a, b)),
        outs["addc"].eq(prefix.add(m, a, b, cin, name="addc")),
        outs["sub"].eq(prefix.sub(m, a, b)),
        outs["inc"].eq(prefix.increment(m, a, cin)),
        outs["ge"].eq(prefix.greater_equal(m, a, b)),
        outs["gray"].eq(prefix.gray_to_binary(m, a)),
        outs["split_inc"].eq(prefix.split_increment(m, a)),
        outs["select_sub"].eq(prefix.select_sub(m, a, b)),
        outs["select_add"].eq(prefix.select_add(m, a, b)),
    ]
    mask = (1 << width) - 1
    checked = []

    def binary_of_gray(g):
        value = 0
        while g:
            value ^= g
            g >>= 1
        return value

    async def testbench(ctx):
        for x, y in _pairs(width):
            for c in (0, 1):
                ctx.set(a, x)
                ctx.set(b, y)
                ctx.set(cin, c)
                await ctx.delay(1e-9)
                got = {name: ctx.get(sig) for name, sig in outs.items()}
                want = {"add": (x + y) & mask, "addc": (x + y + c) & mask,
                        "sub": (x - y) & mask, "inc": (x + c) & mask, "ge": int(x >= y),
                        "gray": binary_of_gray(x), "split_inc": (x + 1) & mask,
                        "select_sub": (x - y) & mask, "select_add": (x + y) & mask}
                assert got == want, (width, x, y, c)
                checked.append(1)

    simulate(m, testbench, clocks={})
    assert len(checked) == 2 * len(_pairs(width))


def _binary_of_gray(g):
    value = 0
    while g:
        value ^= g
        g >>= 1
    return value


@pytest.mark.parametrize("carry_select", [True, False])
@pytest.mark.parametrize("width", [1, 3, 8, 16, 32, 33])
def test_gray_difference_against_integers(width, carry_select):
    """``gray_difference`` is the Gray code's binary value minus ``b`` (and that value), for
    both parities of the upper half and both borrows between the halves; built with the carry
    select (28 nm) and as one subtraction (FPGA)."""
    gray, b = Signal(width), Signal(width)
    diff, seen = Signal(width), Signal(width)
    m = Module()
    difference, binary = prefix.gray_difference(m, gray, b, carry_select=carry_select)
    m.d.comb += [diff.eq(difference), seen.eq(binary)]
    mask = (1 << width) - 1
    rng = random.Random(100 + width)
    # Gray codes of edge values (the halves' borrows and carries) and random ones.
    values = [0, 1, mask, 1 << (width - 1), (1 << (width // 2)) - 1, 1 << (width // 2),
              (1 << (width // 2)) + 1]
    values += [rng.getrandbits(width) for _ in range(40)]
    values = [v & mask for v in values]
    cases = [(v ^ (v >> 1), y) for v in values for y in values]
    checked = []

    async def testbench(ctx):
        for g, y in cases:
            ctx.set(gray, g)
            ctx.set(b, y)
            await ctx.delay(1e-9)
            want = _binary_of_gray(g)
            assert (ctx.get(seen), ctx.get(diff)) == (want, (want - y) & mask), (width, g, y)
            checked.append(1)

    simulate(m, testbench, clocks={})
    assert len(checked) == len(cases)
    # Both parities of the upper half occur, and both borrows out of the lower half.
    half = width // 2
    low = (1 << half) - 1
    lows = [(_binary_of_gray(g) & low) < (y & low) for g, y in cases]
    parities = [(_binary_of_gray(g) >> half) & 1 for g, y in cases]
    assert width < 8 or (set(lows) == {False, True} and set(parities) == {0, 1})
