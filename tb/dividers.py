"""Drive a sequential divider (:class:`ahasd.hw.divider.Divider`,
:class:`ahasd.hw.carry_save.CarrySaveDivider`) through a list of divisions in Amaranth's
simulator, checking its handshake on the way, and the expected result of each division computed
directly (the tests of both dividers use these)."""

from ahasd.tb.amaranth_sim import simulate

__all__ = ["expected", "run"]


def expected(n, d, steps, *, round_half_up=False, check_cycle=False):
    """(quotient, cycles from start to the result) of one division, computed directly."""
    if round_half_up:
        n += d >> 1
    exact = n // d if d else None
    top = 2**steps - 1
    saturated = exact is None or exact > top
    quotient = top if saturated else exact
    if check_cycle:
        return quotient, 1 if saturated else 1 + steps
    return quotient, steps


def run(dut, cases):
    """Divide every ``(n, d, steps)`` of ``cases``; return ``[(result, held, cycles)]``."""
    out = []

    async def tb(ctx):
        for n, d, steps in cases:
            ctx.set(dut.dividend, n)
            ctx.set(dut.divisor, d)
            if dut.variable_steps:
                ctx.set(dut.steps, steps)
            ctx.set(dut.start, 1)
            await ctx.tick()
            # Operands change after start: the divider must have taken them.
            ctx.set(dut.start, 0)
            ctx.set(dut.dividend, ~n & (2**dut.dividend_width - 1))
            ctx.set(dut.divisor, ~d & (2**dut.divisor_width - 1))
            cycles = 1
            while not ctx.get(dut.done.valid):
                assert ctx.get(dut.busy), (n, d, steps, cycles)
                assert cycles < 2 * dut.quotient_bits + 4, (n, d, steps)
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
