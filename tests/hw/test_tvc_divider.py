"""The TVC's record divider (ahasd.hw.tvc_divider), exhaustively at small widths: every
dividend / divisor pair whose quotient fits, the dividend given as two rows split in several
ways, checking the result, the held quotient, ``busy`` and the cycle count against Python's
integer division; and abort and restart."""

import pytest

from ahasd.hw.tvc_divider import RecordDivider
from ahasd.tb.amaranth_sim import simulate


def run(dut, cases):
    """Divide every ``(row, carry_row, d)``; return ``[(result, held, cycles)]``."""
    out = []
    mask = 2**dut.dividend_width - 1

    async def tb(ctx):
        for a, b, d in cases:
            ctx.set(dut.dividend, a)
            ctx.set(dut.dividend_carry, b)
            ctx.set(dut.divisor, d)
            ctx.set(dut.start, 1)
            await ctx.tick()
            # Operands change after start: the divider must have taken them.
            ctx.set(dut.start, 0)
            ctx.set(dut.dividend, ~a & mask)
            ctx.set(dut.dividend_carry, ~b & mask)
            ctx.set(dut.divisor, ~d & (2**dut.divisor_width - 1))
            cycles = 1
            while not ctx.get(dut.done.valid):
                assert ctx.get(dut.busy), (a, b, d, cycles)
                assert cycles < 2 * dut.quotient_bits + 4, (a, b, d)
                await ctx.tick()
                cycles += 1
            assert ctx.get(dut.busy)
            result = ctx.get(dut.done.payload)
            await ctx.tick()
            assert not ctx.get(dut.busy) and not ctx.get(dut.done.valid)
            await ctx.tick()   # one idle cycle: the quotient is held
            out.append((result, ctx.get(dut.quotient), cycles))

    simulate(dut, tb)
    return out


@pytest.mark.parametrize("n_bits, d_bits, q", [
    (7, 3, 4),
    (6, 4, 3),
    (8, 3, 6),
    (5, 5, 5),       # quotient as wide as the dividend
    (6, 2, 1),       # one step
])
def test_every_pair_that_fits(n_bits, d_bits, q):
    dut = RecordDivider(dividend_width=n_bits, divisor_width=d_bits, quotient_bits=q)
    cases = []
    for n in range(2**n_bits):
        for d in range(1, 2**d_bits):
            if n >> q < d:
                # rows: all in one, all in the other, and a split with carries between them
                for a in sorted({n, 0, n & 0b1010101, n - (n >> 1)}):
                    cases.append((a, n - a, d))
    got = run(dut, cases)
    for (a, b, d), (result, held, cycles) in zip(cases, got):
        assert (result, held, cycles) == ((a + b) // d, (a + b) // d, q), (a, b, d)


def test_abort_and_restart():
    dut = RecordDivider(dividend_width=8, divisor_width=4, quotient_bits=6)
    seen = []

    async def tb(ctx):
        ctx.set(dut.abort, 1)            # ignored while idle
        await ctx.tick()
        ctx.set(dut.abort, 0)
        ctx.set(dut.dividend, 150)
        ctx.set(dut.dividend_carry, 50)
        ctx.set(dut.divisor, 7)
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        await ctx.tick().repeat(2)
        ctx.set(dut.abort, 1)
        await ctx.tick()
        ctx.set(dut.abort, 0)
        seen.append(ctx.get(dut.busy))
        for _ in range(10):
            seen.append(ctx.get(dut.done.valid))
            await ctx.tick()
        # A start while busy begins the new division.
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.dividend, 90)
        ctx.set(dut.dividend_carry, 9)
        ctx.set(dut.divisor, 4)
        await ctx.tick()
        ctx.set(dut.start, 0)
        cycles = 1
        while not ctx.get(dut.done.valid):
            await ctx.tick()
            cycles += 1
        seen.append((ctx.get(dut.done.payload), cycles))

    simulate(dut, tb)
    assert seen == [0] + [0] * 10 + [(99 // 4, 6)]


def test_validation():
    with pytest.raises(ValueError, match="quotient_bits must be an integer in 1..128, not 0"):
        RecordDivider(dividend_width=8, divisor_width=4, quotient_bits=0)
