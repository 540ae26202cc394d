"""The TVC's record divider: restoring, one quotient bit per cycle, with a carry-save remainder
and an abort, for 800 MHz at 28 nm.

:class:`ahasd.hw.divider.Divider` (shared with the AAU and formally proven) keeps its word
remainder, whose step (a ``divisor_width + 1``-bit subtraction, a comparison and a select) is
longer than a 28 nm cycle at 800 MHz; :class:`ahasd.hw.carry_save.CarrySaveDivider` has no
abort. This one keeps the partial remainder as two rows like the latter (one full-adder level
and the sign of the sum as a comparison per step, :func:`ahasd.hw.carry_save.sign_of_sum`) and
has the former's ``abort``, and no saturation check: the TVC checks saturation itself in the
cycle it starts the divider and aborts a saturating division in the next cycle.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring

from ahasd.hw.carry_save import csa, sign_of_sum
from ahasd.hw.construction import rejecting_construction
from ahasd.hw.divider import check_divider_params, divider_members

__all__ = ["RecordDivider"]


class RecordDivider(wiring.Component):
    """Restoring divider with a carry-save remainder and ``abort``; no saturation check.

    Parameters
    ----------
    dividend_width, divisor_width, quotient_bits : int
        As :class:`ahasd.hw.divider.Divider` (1..128 each).

    Ports
    -----
    The ports of :class:`ahasd.hw.divider.Divider` without ``steps``: ``start``, ``dividend``,
    ``divisor``, ``abort``, ``busy``, ``done``, ``quotient``; the same cycles (``quotient_bits``
    steps, ``done`` in the last, ``busy`` from the cycle after ``start`` to the last step; a
    start while busy begins the new division, an abort stops the one under way, no ``done``).

    The quotient is ``dividend // divisor`` when that fits in ``quotient_bits`` bits, i.e.
    ``dividend >> quotient_bits < divisor``; otherwise it is undefined (the caller checks and
    aborts). The remainder ``R = S + C`` (modulo ``2**(divisor_width + 2)``) stays below the
    divisor, so ``2R + 1 - divisor`` is within the rows' signed range.
    """

    def __init__(self, *, dividend_width, divisor_width, quotient_bits):
        with rejecting_construction(self):
            check_divider_params(dividend_width, divisor_width, quotient_bits, False, False)
        self.dividend_width = dividend_width
        self.divisor_width = divisor_width
        self.quotient_bits = quotient_bits
        super().__init__(divider_members(dividend_width, divisor_width, quotient_bits, False,
                                         abort=True))

    def elaborate(self, platform):
        m = Module()
        q, dw = self.quotient_bits, self.divisor_width
        w = dw + 2
        high = self.dividend >> q

        divisor = Signal(dw)
        rem_s = Signal(w)             # the partial remainder is rem_s + rem_c (mod 2**w)
        rem_c = Signal(w)
        quo = Signal(q)               # the dividend's low bits, shifted out as quotient bits
        count = Signal(range(q + 1))

        shift_s = Cat(quo[-1], rem_s[:w - 1])
        shift_c = Cat(Const(0, 1), rem_c[:w - 1])
        minus = Signal(w)
        m.d.comb += minus.eq(~Cat(divisor, Const(0, 2)))   # ~divisor + 1 = -divisor (mod 2**w)
        trial_s, trial_c = csa(shift_s, shift_c, minus, w)
        trial_c = Cat(Const(1, 1), trial_c[1:])        # the + 1, in the carry row's free bit
        bit = Signal()
        m.d.comb += bit.eq(~sign_of_sum(trial_s, trial_c, w))
        next_quo = Cat(bit, quo[:-1])

        busy = self.busy
        with m.If(busy & self.abort):
            m.d.sync += busy.eq(0)
        with m.Elif(busy):
            m.d.sync += [
                rem_s.eq(Mux(bit, trial_s, shift_s)),
                rem_c.eq(Mux(bit, trial_c, shift_c)),
                quo.eq(next_quo),
                count.eq(count - 1),
            ]
            with m.If(count == 1):
                m.d.comb += [self.done.valid.eq(1), self.done.payload.eq(next_quo)]
                m.d.sync += busy.eq(0)
        with m.If(self.start):
            m.d.sync += [
                busy.eq(1),
                count.eq(q),
                divisor.eq(self.divisor),
                rem_s.eq(high[:w]),
                rem_c.eq(0),
                quo.eq(self.dividend),
            ]
        m.d.comb += self.quotient.eq(quo)
        return m
