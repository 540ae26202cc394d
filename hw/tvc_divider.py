"""The TVC's record divider: restoring, one quotient bit per cycle, with a carry-save remainder
and an abort, for 800 MHz at 28 nm.

:class:`ahasd.hw.divider.Divider` (shared with the AAU and formally proven) keeps its word
remainder, whose step (a ``divisor_width + 1``-bit subtraction, a comparison and a select) is
longer than a 28 nm cycle at 800 MHz; :class:`ahasd.hw.carry_save.CarrySaveDivider` has no
abort, and both take the dividend as a word. This one takes the dividend as two carry-save rows
(the TVC's ``to_pim`` product is never resolved), keeps the whole partial remainder as two rows
(one full-adder level and the sign of the sum as a comparison per step,
:func:`ahasd.hw.carry_save.sign_of_sum`), has the former's ``abort``, and no saturation check:
the TVC checks saturation itself in the cycle it starts the divider and aborts a saturating
division in the next cycle.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from ahasd.hw.carry_save import csa, sign_of_sum
from ahasd.hw.construction import rejecting_construction
from ahasd.hw.divider import check_divider_params, divider_members, divider_step

__all__ = ["RecordDivider"]


class RecordDivider(wiring.Component):
    """Restoring divider over the whole dividend in carry-save form, with ``abort``; no
    saturation check.

    Parameters
    ----------
    dividend_width, divisor_width, quotient_bits : int
        As :class:`ahasd.hw.divider.Divider` (1..128 each).

    Ports
    -----
    The ports of :class:`ahasd.hw.divider.Divider` without ``steps`` (``start``, ``dividend``,
    ``divisor``, ``abort``, ``busy``, ``done``, ``quotient``) and with the same cycles
    (``quotient_bits`` steps, ``done`` in the last, ``busy`` from the cycle after ``start`` to
    the last step; a start while busy begins the new division, an abort stops the one under
    way, no ``done``), plus ``dividend_carry : In(dividend_width)``: the dividend is
    ``dividend + dividend_carry`` (two rows, below ``2**dividend_width``), so that it needs no
    adder before the divider.

    The quotient is ``dividend // divisor`` when that fits in ``quotient_bits`` bits, i.e.
    ``dividend >> quotient_bits < divisor``; otherwise it is undefined (the caller checks and
    aborts). Step ``k`` (shift ``j = quotient_bits - 1 - k``) tries ``R - divisor * 2**j`` on
    the whole partial remainder ``R`` (two rows, ``dividend`` at the start): one full-adder
    level, the quotient bit the sign of the sum as a comparison
    (:func:`ahasd.hw.carry_save.sign_of_sum`), then the new rows or the old ones. No adder and
    no dividend bit shifting in: the dividend is not resolved.
    """

    def __init__(self, *, dividend_width, divisor_width, quotient_bits):
        with rejecting_construction(self):
            check_divider_params(dividend_width, divisor_width, quotient_bits, False, False)
        self.dividend_width = dividend_width
        self.divisor_width = divisor_width
        self.quotient_bits = quotient_bits
        members = divider_members(dividend_width, divisor_width, quotient_bits, False,
                                  abort=True)
        members["dividend_carry"] = In(dividend_width)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        q, dw = self.quotient_bits, self.divisor_width
        # R < 2**dividend_width and divisor * 2**j < 2**(dw + q - 1): their difference fits.
        w = max(self.dividend_width, dw + q - 1) + 1

        shifted = Signal(dw + q - 1)  # divisor * 2**j
        rem_s = Signal(w)             # the partial remainder is rem_s + rem_c (mod 2**w)
        rem_c = Signal(w)
        quo = Signal(q)
        count = Signal(range(q + 1))

        minus = Signal(w)
        m.d.comb += minus.eq(~Cat(shifted, Const(0, w - len(shifted))))   # + 1 below
        trial_s, trial_c = csa(rem_s, rem_c, minus, w)
        trial_c = Cat(Const(1, 1), trial_c[1:])        # the + 1, in the carry row's free bit
        bit = Signal()
        m.d.comb += bit.eq(~sign_of_sum(trial_s, trial_c, w))
        next_quo = Cat(bit, quo[:-1])

        busy = self.busy
        with m.If(busy & self.abort):
            m.d.sync += busy.eq(0)
        with m.Elif(busy):
            divider_step(m, self, busy=busy, count=count, quo=quo, next_quo=next_quo,
                         updates=[rem_s.eq(Mux(bit, trial_s, rem_s)),
                                  rem_c.eq(Mux(bit, trial_c, rem_c)),
                                  shifted.eq(shifted >> 1)])
        with m.If(self.start):
            m.d.sync += [
                busy.eq(1),
                count.eq(q),
                shifted.eq(self.divisor << (q - 1)),
                rem_s.eq(self.dividend),
                rem_c.eq(self.dividend_carry),
            ]
        m.d.comb += self.quotient.eq(quo)
        return m
