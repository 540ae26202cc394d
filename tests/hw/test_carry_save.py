"""Carry-save arithmetic (ahasd.hw.carry_save): the carry-save divider exhaustively at small
widths against Python's integer division (the same results and cycles as the shared divider),
the segmented sum and the carry-save tree against Python's sums."""

import random

import pytest
from amaranth.hdl import Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.carry_save import (
    SEGMENT,
    CarrySaveDivider,
    csa_tree,
    segment_latency,
    segmented_sum,
    sign_of_sum,
)
from ahasd.tb.amaranth_sim import simulate
from ahasd.tb.dividers import expected, run


@pytest.mark.parametrize("n_bits, d_bits, q, check_cycle", [
    (7, 3, 4, False),
    (7, 3, 4, True),
    (8, 3, 2, True),      # a high part wider than the remainder rows
    (8, 3, 2, False),
    (5, 5, 5, False),     # quotient as wide as the dividend: never saturates
    (8, 5, 8, True),
])
def test_every_pair(n_bits, d_bits, q, check_cycle):
    dut = CarrySaveDivider(dividend_width=n_bits, divisor_width=d_bits, quotient_bits=q,
                           check_cycle=check_cycle)
    cases = [(n, d, q) for n in range(2**n_bits) for d in range(2**d_bits)]
    got = run(dut, cases)
    for (n, d, steps), (result, held, cycles) in zip(cases, got):
        quotient, want_cycles = expected(n, d, steps, check_cycle=check_cycle)
        assert (result, held, cycles) == (quotient, quotient, want_cycles), (n, d)


def test_every_pair_and_step_count():
    dut = CarrySaveDivider(dividend_width=6, divisor_width=3, quotient_bits=4,
                           variable_steps=True)
    cases = [(n, d, s) for n in range(2**6) for d in range(2**3) for s in range(1, 5)]
    got = run(dut, cases)
    for (n, d, steps), (result, held, cycles) in zip(cases, got):
        assert (result, held, cycles) == (*[expected(n, d, steps)[0]] * 2,
                                          expected(n, d, steps)[1]), (n, d, steps)


def test_wide_random_divisions():
    dut = CarrySaveDivider(dividend_width=47, divisor_width=32, quotient_bits=33,
                           variable_steps=True)
    rng = random.Random(3)
    cases = [(1 << 46, rng.randrange(1, 2**32), 33) for _ in range(20)]
    cases += [(rng.randrange(2**47), rng.randrange(1, 2**32), rng.randrange(1, 34))
              for _ in range(20)]
    for (n, d, steps), (result, held, cycles) in zip(cases, run(dut, cases)):
        quotient, want_cycles = expected(n, d, steps)
        assert (result, held, cycles) == (quotient, quotient, want_cycles), (n, d, steps)


class Sums(wiring.Component):
    """``segmented_sum`` of two operands, and the sign of the sum of three via ``sign_of_sum``
    of a ``csa_tree``."""

    def __init__(self, width):
        self.width = width
        super().__init__({"a": In(width), "b": In(width), "c": In(signed(width // 2)),
                          "result": Out(width), "sign": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.result.eq(segmented_sum(m, self.a, self.b, self.width))
        s, c = csa_tree(m, [self.a, self.b, self.c], self.width)
        m.d.comb += self.sign.eq(sign_of_sum(s, c, self.width))
        return m


def test_segmented_sum_and_tree_sign():
    width = 3 * SEGMENT - 5
    dut = Sums(width)
    rng = random.Random(5)
    cases = [(rng.randrange(2**width), rng.randrange(2**width),
              rng.randrange(-2**(width // 2 - 1), 2**(width // 2 - 1))) for _ in range(30)]
    cases += [(2**width - 1, 1, -1), (2**width - 1, 2**width - 1, 0)]
    got = []

    async def tb(ctx):
        for a, b, c in cases:
            ctx.set(dut.a, a)
            ctx.set(dut.b, b)
            ctx.set(dut.c, c)
            sign = ctx.get(dut.sign)
            await ctx.tick().repeat(segment_latency(width))   # three segments: 2 cycles
            got.append((ctx.get(dut.result), sign))

    simulate(dut, tb)
    for (a, b, c), (result, sign) in zip(cases, got):
        assert result == (a + b) % 2**width
        assert sign == ((a + b + c) % 2**width) >> (width - 1)


def test_validation():
    with pytest.raises(ValueError, match="width must be an integer in 1..256, not 0"):
        segmented_sum(None, Signal(1), Signal(1), 0)
    with pytest.raises(ValueError, match="variable_steps must be False with check_cycle"):
        CarrySaveDivider(dividend_width=8, divisor_width=4, quotient_bits=4, check_cycle=True,
                         variable_steps=True)
