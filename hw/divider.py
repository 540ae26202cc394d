"""Sequential restoring divider: one quotient bit per cycle, saturating.

The plain divider of the RTL (the entropy unit's batch mean, the formal proofs); the carry-save
dividers (:mod:`ahasd.hw.carry_save`, :mod:`ahasd.hw.tvc_divider`) share its parameter rules, ports
and step sequencing (:func:`divider_step`, :func:`divider_start`, :func:`divider_quotient`).

Long division with a shifting partial remainder: the dividend is split into its
high part ``dividend >> steps`` (the first partial remainder) and its low ``steps`` bits, which
shift out of the quotient register into the remainder, one per cycle, while the quotient bits
shift in. The comparator and subtractor are ``divisor_width + 1`` bits wide, whatever the
dividend's width.

The quotient always saturates: the result is ``min(dividend // divisor, 2**steps - 1)`` (all
ones for a zero divisor), where ``dividend`` includes the rounding term with ``round_half_up``.
A quotient needs more than ``steps`` bits exactly when the high part is ``>= divisor``; that is
checked in the first cycle after ``start``, in one of two ways:

* ``check_cycle=False``: the check runs in the first step cycle and, if it fails, forces every
  quotient bit to one; a division always takes ``steps`` cycles.
* ``check_cycle=True``: the first cycle is a check cycle of its own; a saturating division ends
  there (1 cycle, all ones), any other takes ``1 + steps`` cycles.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.spec.params import check_bool, check_int

__all__ = ["Divider", "check_divider_params", "divider_members", "divider_quotient",
           "divider_start", "divider_step"]


def check_divider_params(dividend_width, divisor_width, quotient_bits, check_cycle, variable_steps):
    """The sequential dividers' shared parameter rules (:class:`Divider`,
    :class:`ahasd.hw.carry_save.CarrySaveDivider`); raise ValueError naming the parameter."""
    check_int("dividend_width", dividend_width, 1, 128)
    check_int("divisor_width", divisor_width, 1, 128)
    check_int("quotient_bits", quotient_bits, 1, 128)
    check_bool("check_cycle", check_cycle)
    check_bool("variable_steps", variable_steps)
    if check_cycle and variable_steps:
        raise ValueError("variable_steps must be False with check_cycle, not True")


def divider_members(dividend_width, divisor_width, quotient_bits, variable_steps, *, abort):
    """The sequential dividers' ports, in the order their Verilog lists them (``abort`` only
    where the divider has one)."""
    members = {"start": In(1), "dividend": In(dividend_width), "divisor": In(divisor_width)}
    if abort:
        members["abort"] = In(1)
    members.update({"busy": Out(1), "done": Out(stream.Signature(quotient_bits, always_ready=True)),
                    "quotient": Out(quotient_bits)})
    if variable_steps:
        members["steps"] = In(range(quotient_bits + 1))
    return members


def divider_step(m, dut, *, busy, count, quo, next_quo, updates):
    """One step of a sequential divider (call it under the step condition): ``updates`` (the
    partial remainder's next value), the next quotient bit shifted in, one step fewer; the last
    step (``count == 1``) shows the quotient on ``dut.done`` and ends ``busy``."""
    m.d.sync += [*updates, quo.eq(next_quo), count.eq(count - 1)]
    with m.If(count == 1):
        m.d.comb += [dut.done.valid.eq(1), dut.done.payload.eq(next_quo)]
        m.d.sync += busy.eq(0)


def divider_start(m, dut, *, busy, check, sat, count, steps, divisor, quo, dividend, high,
                  high_width, big, remainder):
    """A ``start`` of :class:`Divider` or the carry-save divider (call it under ``dut.start``):
    busy, the check cycle next, the divisor taken, ``remainder`` (the first partial remainder's
    registers set from the dividend's high part) and the low bits in the quotient register."""
    q, dw = dut.quotient_bits, dut.divisor_width
    m.d.sync += [
        busy.eq(1),
        check.eq(1),
        sat.eq(0),
        count.eq(steps),
        divisor.eq(dut.divisor),
        *remainder,
        quo.eq((dividend << q) >> steps if dut.variable_steps else dividend),
    ]
    if high_width > dw + 1:
        m.d.sync += big.eq(high[dw + 1:] != 0)


def divider_quotient(m, dut, *, sat, quo):
    """The held ``quotient`` port (all ones after a saturating check cycle)."""
    if dut.check_cycle:
        m.d.comb += dut.quotient.eq(Mux(sat, 2**dut.quotient_bits - 1, quo))
    else:
        m.d.comb += dut.quotient.eq(quo)


class Divider(wiring.Component):
    """Sequential restoring divider with start / busy / done.

    Parameters
    ----------
    dividend_width, divisor_width : int
        Operand widths (1..128).
    quotient_bits : int
        Quotient bits, one per cycle (1..128): the number of step cycles, or the most of them
        with ``variable_steps``.
    check_cycle : bool
        A cycle of its own for the saturation check before the steps (see the module docstring).
    round_half_up : bool
        Divide ``dividend + (divisor >> 1)`` (the quotient rounded half up).
    variable_steps : bool
        Take the number of quotient bits per division on ``steps`` (1..quotient_bits); not with
        ``check_cycle``.

    Ports
    -----
    start : In(1)
        Begin a division of ``dividend`` by ``divisor`` (sampled in this cycle). A start while
        busy abandons the division under way and begins the new one.
    dividend : In(dividend_width), divisor : In(divisor_width)
    steps : In(range(quotient_bits + 1)), only with ``variable_steps``
    abort : In(1)
        Stop the division under way (``busy`` falls, no ``done``); ignored while idle.
    busy : Out(1)
        From the cycle after ``start`` to the division's last cycle (the cycle of ``done``).
    done : Out(stream.Signature(quotient_bits, always_ready=True))
        ``valid`` for one cycle, the division's last, with the quotient as ``payload``.
    quotient : Out(quotient_bits)
        The last quotient, from the cycle after ``done`` until the next ``start``.

    Cycles: ``steps`` (plus the check cycle with ``check_cycle``, or that cycle alone when the
    quotient saturates there); ``busy`` is low again in the cycle after ``done``.
    """

    def __init__(self, *, dividend_width, divisor_width, quotient_bits, check_cycle=False,
                 round_half_up=False, variable_steps=False):
        with rejecting_construction(self):
            check_divider_params(dividend_width, divisor_width, quotient_bits, check_cycle,
                                 variable_steps)
            check_bool("round_half_up", round_half_up)
        self.dividend_width = dividend_width
        self.divisor_width = divisor_width
        self.quotient_bits = quotient_bits
        self.check_cycle = check_cycle
        self.round_half_up = round_half_up
        self.variable_steps = variable_steps
        super().__init__(divider_members(dividend_width, divisor_width, quotient_bits,
                                         variable_steps, abort=True))

    def elaborate(self, platform):
        m = Module()
        q, dw = self.quotient_bits, self.divisor_width
        dividend = self.dividend
        if self.round_half_up:
            dividend = dividend + (self.divisor >> 1)
        steps = self.steps if self.variable_steps else q
        # The high part of the dividend (the first partial remainder): its low dw + 1 bits in
        # `rem`, whether any higher bit is set in `big`.
        high = dividend >> steps
        high_width = len(dividend) - (1 if self.variable_steps else q)

        divisor = Signal(dw)
        rem = Signal(dw + 1)          # < divisor after the check (one spare bit for the check)
        quo = Signal(q)               # the dividend's low bits, shifted out as quotient bits
        check = Signal()              # the first cycle after start
        sat = Signal()                # the quotient saturated
        count = Signal(range(q + 1))
        over = rem >= divisor
        big = None                    # set when the high part is wider than the remainder
        if high_width > dw + 1:
            big = Signal()
            over = big | over

        shifted = Cat(quo[-1], rem[:dw])
        bit = shifted >= divisor
        sat_now = sat | (check & over)
        if not self.check_cycle:
            bit = bit | sat_now
        next_quo = Cat(bit, quo[:-1])

        busy = self.busy
        with m.If(busy & self.abort):
            m.d.sync += busy.eq(0)
        if self.check_cycle:
            with m.Elif(busy & check):
                m.d.sync += check.eq(0)
                with m.If(over):   # the quotient needs more than q bits: all ones
                    m.d.comb += [self.done.valid.eq(1), self.done.payload.eq(2**q - 1)]
                    m.d.sync += [busy.eq(0), sat.eq(1)]
        with m.Elif(busy):
            if not self.check_cycle:
                m.d.sync += [check.eq(0), sat.eq(sat_now)]
            divider_step(m, self, busy=busy, count=count, quo=quo, next_quo=next_quo,
                         updates=[rem.eq(Mux(bit, shifted - divisor, shifted))])
        with m.If(self.start):
            divider_start(m, self, busy=busy, check=check, sat=sat, count=count, steps=steps,
                          divisor=divisor, quo=quo, dividend=dividend, high=high,
                          high_width=high_width, big=big,
                          remainder=[rem.eq(high)])
        divider_quotient(m, self, sat=sat, quo=quo)
        return m
