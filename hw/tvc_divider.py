"""The TVC's record divider: non-restoring, one quotient bit per cycle, with a carry-save
remainder and an abort, for 800 MHz at 28 nm and 100 MHz on ECP5.

:class:`ahasd.hw.divider.Divider` (shared with the AAU and formally proven) keeps its word
remainder, whose step (a ``divisor_width + 1``-bit subtraction, a comparison and a select) is
longer than a 28 nm cycle at 800 MHz; :class:`ahasd.hw.carry_save.CarrySaveDivider` has no
abort, and both take the dividend as a word. This one takes the dividend as two carry-save rows
(the TVC's ``to_pim`` product is never resolved), keeps the whole partial remainder as two rows,
has the former's ``abort``, and no saturation check: the TVC checks saturation itself in the
cycle it starts the divider and aborts a saturating division in the next cycle.

Non-restoring: each step adds or subtracts ``divisor * 2**j`` by the sign of the partial
remainder, which the step before registered, so the remainder's rows are written in every step
(one full-adder level, no select behind the sign: on ECP5 the sign no longer drives the enables
of every remainder bit). The signs are what a step resolves (comparisons,
:func:`ahasd.hw.carry_save.sign_of_sum`), one step ahead, so that the quotient bits (the
complemented signs, those of restoring division: see :class:`RecordDivider`) come from
registers.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.carry_save import csa, sign_of_sum
from ahasd.hw.construction import rejecting_construction
from ahasd.hw.divider import check_divider_params, divider_members
from ahasd.spec.params import check_bool

__all__ = ["RecordDivider"]


class RecordDivider(wiring.Component):
    """Non-restoring divider over the whole dividend in carry-save form, with ``abort``; no
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
    adder before the divider. ``next_bit : Out(1)``: while busy, the quotient bit this step
    shifts into ``quotient`` (from the second step on, a register's output through one
    multiplexer: see below). With ``given_first_bit``, ``first_bit : In(1)``: the quotient's
    first (top) bit, ``dividend >= divisor << (quotient_bits - 1)``, given with ``start`` (the
    TVC checks it beside its saturation check), so that no step forms a sign of its own.
    ``last_step : Out(1)``: a register, set while the step under way
    is the last one (``done`` is that and ``busy`` and no ``abort``).

    The quotient is ``dividend // divisor`` when that fits in ``quotient_bits`` bits, i.e.
    ``dividend >> quotient_bits < divisor``; otherwise it is undefined (the caller checks and
    aborts). With ``R_0`` the dividend and ``q`` quotient bits, step ``k`` (shift ``j = q - 1 -
    k``) forms ``R_{k+1} = R_k - divisor * 2**j`` if ``R_k >= 0``, else ``R_k + divisor * 2**j``
    (two rows, one full-adder level; ``R_k``'s sign is a register). With ``P_k`` the restoring
    divider's partial remainder before step ``k`` and ``T_k = P_k - divisor * 2**j`` its trial,
    ``R_k`` is ``P_k`` after a trial that was kept (``R_k >= 0``) and ``P_k - divisor *
    2**(j + 1)`` after one that was not (``R_k < 0``); either way ``R_{k+1} = T_k``. So the
    quotient bits are the complemented signs of ``R_1 .. R_q``, most significant first, the
    restoring divider's bits, and no final correction is needed.
    """

    def __init__(self, *, dividend_width, divisor_width, quotient_bits, given_first_bit=False):
        with rejecting_construction(self):
            check_divider_params(dividend_width, divisor_width, quotient_bits, False, False)
            check_bool("given_first_bit", given_first_bit)
        self.given_first_bit = given_first_bit
        self.dividend_width = dividend_width
        self.divisor_width = divisor_width
        self.quotient_bits = quotient_bits
        members = divider_members(dividend_width, divisor_width, quotient_bits, False,
                                  abort=True)
        members["dividend_carry"] = In(dividend_width)
        members["next_bit"] = Out(1)
        members["last_step"] = Out(1)
        if given_first_bit:
            members["first_bit"] = In(1)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        q, dw = self.quotient_bits, self.divisor_width
        # R_0 < 2**dividend_width; afterwards R_{k+1} = T_k, with -divisor * 2**j <= T_k <
        # divisor * 2**j < 2**(dw + q - 1): one sign bit above both.
        w = max(self.dividend_width, dw + q - 1) + 1

        shifted = Signal(dw + q - 1)  # divisor * 2**j
        rem_s = Signal(w)             # the partial remainder R is rem_s + rem_c (mod 2**w)
        rem_c = Signal(w)
        negative = Signal()           # R < 0: this step adds divisor * 2**j
        quo = Signal(q)
        count = Signal(range(q + 1))

        # R - d = R + ~d + 1 (the + 1 in the carry row's free bit 0), R + d as it is: the
        # operand is d XOR ~negative, which the full-adder level absorbs (one LUT4 per row bit).
        wide = Cat(shifted, Const(0, w - len(shifted)))
        operand = Signal(w)
        m.d.comb += operand.eq(wide ^ (~negative).replicate(w))
        next_s, next_c = csa(rem_s, rem_c, operand, w)
        next_c = Cat(~negative, next_c[1:])
        # Every sign after the first is looked ahead: each step registers the signs of both
        # ways the next step can go, R_{k+1} - divisor * 2**(j - 1) and R_{k+1} + divisor *
        # 2**(j - 1), formed from R_k itself: R_k + K with K = +divisor * 2**(j - 1) or
        # -3 * divisor * 2**(j - 1) (the first way) and +3 * divisor * 2**(j - 1) or
        # -divisor * 2**(j - 1) (the second), by R_k's sign: one full-adder level whose third
        # operand a register selects (LUT4 and a PFU mux on ECP5), then the sign as a
        # comparison, like the step itself. The next step only selects between the two by
        # R_{k+1}'s sign, so from the second step on, the quotient bit of a step (`next_bit`)
        # comes from registers through one multiplexer: the TVC forms its new average from it a
        # step ahead, and its table and average writes wait only for that multiplexer. The
        # first step forms its sign itself, or takes it from `first_bit` (given_first_bit).
        first = Signal()              # this step is the first (count == quotient_bits)
        last = Signal()               # this step is the last (count == 1)
        triple = Signal(dw + q)       # 3 * divisor * 2**(j - 1)
        half = Cat(shifted[1:], Const(0, w - len(shifted) + 1))     # divisor * 2**(j - 1)
        three = Cat(triple, Const(0, w - len(triple)))
        ahead = [Signal(name=f"ahead_negative_{way}") for way in ("sub", "add")]
        for flag, plus, minus in zip(ahead, (half, three), (three, half)):
            term = Signal(w)
            m.d.comb += term.eq(Mux(negative, plus, ~minus))
            t_s, t_c = csa(rem_s, rem_c, term, w)
            t_c = Cat(~negative, t_c[1:])
            m.d.sync += flag.eq(sign_of_sum(t_s, t_c, w))
        looked_ahead = Signal()       # R_{k+1} < 0, from the last step's registers
        m.d.comb += looked_ahead.eq(Mux(negative, ahead[1], ahead[0]))
        new_negative = Signal()
        if self.given_first_bit:    # the first quotient bit, taken at start
            given = Signal()
            with m.If(self.start):
                m.d.sync += given.eq(~self.first_bit)
            first_negative = given
        else:
            first_negative = sign_of_sum(next_s, next_c, w)
        m.d.comb += [
            new_negative.eq(Mux(first, first_negative, looked_ahead)),
            self.next_bit.eq(~looked_ahead),
        ]
        next_quo = Cat(~new_negative, quo[:-1])
        # The last step is never the first when there are two or more: its quotient bit is
        # the looked-ahead one.
        done_quo = Cat(~looked_ahead, quo[:-1]) if q > 1 else next_quo

        busy = self.busy
        # An abort ends `busy` and withholds `done`; the step's other registers go on as in
        # any step (they are not read again before a start), so the abort reaches one
        # flip-flop, not the enables of the remainder, counter and quotient.
        with m.If(busy):
            m.d.sync += [rem_s.eq(next_s), rem_c.eq(next_c), negative.eq(new_negative),
                         shifted.eq(shifted >> 1), triple.eq(triple >> 1), quo.eq(next_quo),
                         count.eq(count - 1),
                         first.eq(0), last.eq(count == 2)]
            with m.If(last & ~self.abort):
                m.d.comb += [self.done.valid.eq(1), self.done.payload.eq(done_quo)]
            with m.If(last | self.abort):
                m.d.sync += busy.eq(0)
        with m.If(self.start):
            m.d.sync += [
                busy.eq(1),
                count.eq(q),
                first.eq(1),
                last.eq(q == 1),
                shifted.eq(self.divisor << (q - 1)),
                triple.eq((self.divisor + (self.divisor << 1)) << (q - 1) >> 1),
                rem_s.eq(self.dividend),
                rem_c.eq(self.dividend_carry),
                negative.eq(0),
            ]
        m.d.comb += [self.quotient.eq(quo), self.last_step.eq(last)]
        return m
