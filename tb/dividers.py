"""Drive a sequential divider (:class:`ahasd.hw.divider.Divider`,
:class:`ahasd.hw.carry_save.CarrySaveDivider`, :class:`ahasd.hw.tvc_divider.RecordDivider`)
through a list of divisions in Amaranth's simulator, checking its handshake on the way, and the
expected result of each division computed directly (the tests of the dividers use these).

A dividend is an integer, or for a divider with a ``dividend_carry`` port (the record divider:
the dividend as two carry-save rows) a pair ``(row, carry_row)``.
"""

from ahasd.tb.amaranth_sim import simulate

__all__ = ["abort_and_restart", "expected", "run"]


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


def _set_operands(ctx, dut, n, d, *, inverted=False):
    """Drive dividend (one row or two) and divisor; ``inverted``: their bitwise complements
    (operands that change after ``start``, which the divider must not take)."""
    def value(v, width):
        return ~v & (2**width - 1) if inverted else v
    rows = n if isinstance(n, tuple) else (n,)
    if len(rows) != (2 if hasattr(dut, "dividend_carry") else 1):
        raise ValueError(f"dividend {n!r} does not match {type(dut).__name__}'s ports")
    ctx.set(dut.dividend, value(rows[0], dut.dividend_width))
    if len(rows) == 2:
        ctx.set(dut.dividend_carry, value(rows[1], dut.dividend_width))
    ctx.set(dut.divisor, value(d, dut.divisor_width))
    if getattr(dut, "given_first_bit", False):   # the quotient's top bit, given with start
        top = int(sum(rows) >= d << (dut.quotient_bits - 1))
        ctx.set(dut.first_bit, 1 - top if inverted else top)


def run(dut, cases):
    """Divide every ``(n, d, steps)`` of ``cases`` (``steps`` is driven only on a divider with
    ``variable_steps``); return ``[(result, held, cycles)]``."""
    out = []

    async def tb(ctx):
        for n, d, steps in cases:
            _set_operands(ctx, dut, n, d)
            if getattr(dut, "variable_steps", False):
                ctx.set(dut.steps, steps)
            ctx.set(dut.start, 1)
            await ctx.tick()
            # Operands change after start: the divider must have taken them.
            ctx.set(dut.start, 0)
            _set_operands(ctx, dut, n, d, inverted=True)
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


def abort_and_restart(dut, first, second):
    """An abort while idle (ignored), a division of ``first = (n, d)`` aborted two cycles after
    its start, ten idle cycles, then a start while still ``busy`` (a new division) whose
    operands change to ``second`` in the cycle after it.

    Returns ``[busy after the abort] + [done.valid in each of the ten cycles] +
    [(second's result, cycles from its operands to the result)]``."""
    seen = []

    async def tb(ctx):
        ctx.set(dut.abort, 1)            # ignored while idle
        await ctx.tick()
        ctx.set(dut.abort, 0)
        _set_operands(ctx, dut, *first)
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
        _set_operands(ctx, dut, *second)
        await ctx.tick()
        ctx.set(dut.start, 0)
        cycles = 1
        while not ctx.get(dut.done.valid):
            await ctx.tick()
            cycles += 1
        seen.append((ctx.get(dut.done.payload), cycles))

    simulate(dut, tb)
    return seen
