"""Carry-save arithmetic (ahasd.hw.carry_save): the carry-save divider exhaustively at small
widths against Python's integer division (the same results and cycles as the shared divider),
the segmented sum and the carry-save tree against Python's sums, the rescale of a carry-save
pair (``floor((s + c) / 2**k)`` as two shifted rows and a compared carry) and the one-cycle
segmented sum against Python's integers."""

import random

import pytest
from amaranth.hdl import Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator
from hypothesis import given, settings
from hypothesis import strategies as st

from ahasd.hw.carry_save import (
    SEGMENT,
    CarrySaveDivider,
    compared_sum,
    csa_tree,
    low_mask,
    segment_carries,
    segment_latency,
    segmented_sum,
    shifted_rows,
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


@settings(max_examples=2000, deadline=None)
@given(st.integers(1, 80).flatmap(lambda w: st.tuples(
    st.integers(0, 2**w - 1), st.integers(0, 2**w - 1), st.integers(0, w + 8))))
def test_rescale_identity_on_integers(case):
    """The identity the entropy unit's rescale relies on, for any nonnegative s, c and k:
    floor((s + c) / 2**k) = (s >> k) + (c >> k) + [s mod 2**k > ~c mod 2**k], with ~c
    the complement within k bits."""
    s, c, k = case
    low = 2**k - 1
    assert (s + c) >> k == (s >> k) + (c >> k) + int((s & low) > (low - (c & low)))


class Rescale(wiring.Component):
    """``shifted_rows`` (with its own mask and with a mask given) and ``compared_sum`` of
    the rows (carries formed inside and given)."""

    def __init__(self, width, kbits):
        self.width = width
        super().__init__({"s": In(width), "c": In(width), "k": In(kbits),
                          "a": Out(width), "b": Out(width), "bit": Out(1), "bit_masked": Out(1),
                          "total": Out(width), "total_given": Out(width)})

    def elaborate(self, platform):
        m = Module()
        a, b, bit = shifted_rows(self.s, self.c, self.k)
        *_, bit_masked = shifted_rows(self.s, self.c, self.k, low_mask(self.k, self.width))
        m.d.comb += [self.a.eq(a), self.b.eq(b), self.bit.eq(bit), self.bit_masked.eq(bit_masked),
                     self.total.eq(compared_sum(self.s, self.c, self.width)),
                     self.total_given.eq(compared_sum(self.s, self.c, self.width,
                                                      segment_carries(self.s, self.c,
                                                                      self.width)))]
        return m


def test_shifted_rows_and_compared_sum():
    width, kbits = 3 * SEGMENT + 2, 6          # k up to 63 > width: shifted out entirely
    dut = Rescale(width, kbits)
    rng = random.Random(7)
    cases = []
    for _ in range(300):
        total = rng.randrange(2**width)          # rows that never wrapped: s + c = total
        s = rng.randrange(total + 1)
        cases.append((s, total - s, rng.randrange(2**kbits)))
    cases += [(2**width - 1, 0, 0), (2**width - 2, 1, width), (2**SEGMENT - 1, 1, 1),
              (2**(2 * SEGMENT) - 1, 1, 63)]
    got = []

    async def tb(ctx):
        for s, c, k in cases:
            ctx.set(dut.s, s)
            ctx.set(dut.c, c)
            ctx.set(dut.k, k)
            got.append(tuple(ctx.get(v) for v in (dut.a, dut.b, dut.bit, dut.bit_masked,
                                                  dut.total, dut.total_given)))

    sim = Simulator(dut)         # combinational: no clock
    sim.add_testbench(tb)
    sim.run()
    for (s, c, k), (a, b, bit, bit_masked, total, total_given) in zip(cases, got):
        assert (a, b) == (s >> k, c >> k)
        assert a + b + bit == (s + c) >> k, (s, c, k)
        assert bit_masked == bit
        assert total == total_given == s + c


def test_validation():
    with pytest.raises(ValueError, match="width must be an integer in 1..256, not 0"):
        segmented_sum(None, Signal(1), Signal(1), 0)
    with pytest.raises(ValueError, match="c must be 4 bits wide like s, not 3"):
        shifted_rows(Signal(4), Signal(3), Signal(2))
    with pytest.raises(ValueError, match="mask must be 4 bits wide like s, not 2"):
        shifted_rows(Signal(4), Signal(4), Signal(2), Signal(2))
    with pytest.raises(ValueError, match="variable_steps must be False with check_cycle"):
        CarrySaveDivider(dividend_width=8, divisor_width=4, quotient_bits=4, check_cycle=True,
                         variable_steps=True)
