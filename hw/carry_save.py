"""Carry-save arithmetic for 800 MHz at 28 nm: a carry-save adder tree, a sum resolved over
several cycles, and a restoring divider whose remainder stays in carry-save form.

The area flow maps a word adder as a ripple of about 36 ps per bit at 28 nm (``ahasd timing``:
a registered 32-bit ``a + b`` takes 1.18 ns, more than the 1.25 ns cycle leaves after
clock-to-Q and setup for anything else), while a comparator or a single carry-out maps as a
tree (33 bits in 0.31 ns). So wide sums are kept as two rows (sum and carry, one full-adder
level per three operands) and resolved into a binary word only where a word is needed, a
segment of at most :data:`SEGMENT` bits per cycle with the carry between segments registered;
and a loop that needs only the sign of a sum (the divider's quotient bit, the square root's
root bit) never resolves it.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import wiring

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.divider import (
    check_divider_params,
    divider_members,
    divider_quotient,
    divider_start,
    divider_step,
)
from ahasd.spec.params import check_int

__all__ = ["SEGMENT", "csa", "csa_tree", "sign_of_sum", "low_mask", "shifted_rows",
           "segment_carries", "compared_sum",
           "segment_latency", "segmented_sum", "CarrySaveDivider"]

#: Bits of a word adder per cycle (a 17-bit ripple and a little logic fit in 1.25 ns).
SEGMENT = 17


def csa(x, y, z, width):
    """One full-adder level: ``(sum, carry)`` with ``sum + carry = x + y + z`` (mod 2**width)."""
    s = (x ^ y ^ z)[:width]
    c = Cat(Const(0, 1), ((x & y) | (x & z) | (y & z))[:width - 1])
    return s, c


def csa_tree(m, operands, width):
    """Two rows whose sum is the sum of ``operands`` modulo ``2**width`` (a Wallace tree of
    full-adder levels; each operand is taken modulo ``2**width``, signed ones sign-extended).
    Each level's rows are signals of module ``m`` (combinational), so that a row used by the
    next level's sum and carry is one net, not two copies of an expression."""
    rows = [_extend(v, width) for v in operands]
    if not rows:
        return Const(0, width), Const(0, width)
    level = 0
    while len(rows) > 2:
        out = []
        full = len(rows) - len(rows) % 3
        for i in range(0, full, 3):
            for row in csa(rows[i], rows[i + 1], rows[i + 2], width):
                sig = Signal(width, name=f"csa{level}_{len(out)}")
                m.d.comb += sig.eq(row)
                out.append(sig)
        out.extend(rows[full:])
        rows = out
        level += 1
    if len(rows) == 1:
        rows.append(Const(0, width))
    return rows[0], rows[1]


def _extend(value, width):
    """``value`` (an int, or a value: signed ones sign-extended) as exactly ``width`` bits."""
    if isinstance(value, int):
        return Const(value % 2**width, width)
    value = Value.cast(value)
    n = len(value)
    if n >= width:
        return value[:width]
    fill = value[-1] if value.shape().signed else Const(0, 1)
    return Cat(value, *([fill] * (width - n)))


def sign_of_sum(s, c, width):
    """The sign bit of ``(s + c) mod 2**width``, with its carry as a comparison (which maps as
    a tree, not a ripple): bit ``width - 1`` of the sum is ``s ^ c ^ carry-in``, and the carry
    into it is set exactly when ``s[:w-1] > ~c[:w-1]``."""
    low = width - 1
    # Written ``~c < s`` (not ``s > ~c``): Yosys maps ``a > b`` on ECP5 with a LUT tree for
    # ``a == b`` beside the carry chain, ``b < a`` as the chain alone (same logic at 28 nm).
    return s[low] ^ c[low] ^ ((~c[:low])[:low] < s[:low])


def low_mask(k, width):
    """``width`` bits, bit ``i`` set when ``k > i``: the mask of the low ``k`` bits that
    :func:`shifted_rows` compares (a value to register a cycle ahead of the shift)."""
    return Cat(*[k > i for i in range(width)])


def shifted_rows(s, c, k, mask=None):
    """Two rows and a bit whose sum is ``floor((s + c) / 2**k)``: ``(s >> k, c >> k, carry)``.

    ``carry`` is the carry out of the low ``k`` bits, ``s mod 2**k + c mod 2**k >= 2**k``, as
    the comparison ``s mod 2**k > ~c mod 2**k`` (a tree, not a ripple), with ``mask`` the low
    ``k`` bits' mask (:func:`low_mask`; formed here if not given). Exact for
    ``s + c < 2**width`` as integers (rows that never wrapped, as :func:`csa_tree` gives for
    nonnegative operands whose sum fits); ``k`` may exceed the width (then everything is
    zero). ``s``, ``c`` and ``mask`` have the same width."""
    width = len(s)
    if len(c) != width:
        raise ValueError(f"c must be {width} bits wide like s, not {len(c)}")
    if mask is None:
        mask = low_mask(k, width)
    elif len(mask) != width:
        raise ValueError(f"mask must be {width} bits wide like s, not {len(mask)}")
    return s >> k, c >> k, (s & mask) > (~c & mask)


def segment_carries(a, b, width):
    """The carries into the :data:`SEGMENT`-bit segments of ``a + b`` above the first (one bit
    per segment boundary), each the comparison ``a mod 2**lo > ~b mod 2**lo`` (a tree): for
    :func:`compared_sum`, to register a cycle ahead of it."""
    return Cat(*[a[:lo] > (~b[:lo])[:lo] for lo in range(SEGMENT, width, SEGMENT)])


def compared_sum(a, b, width, carries=None):
    """``a + b`` (``width`` bits, modulo ``2**width``) in one cycle for a pipeline: segments of
    :data:`SEGMENT` bits added side by side, each with its carry-in from
    :func:`segment_carries` (formed here if not given), so the longest ripple is one
    segment's."""
    check_int("width", width, 1, 256)
    if carries is None:
        carries = segment_carries(a, b, width)
    parts = []
    for n, lo in enumerate(range(0, width, SEGMENT)):
        hi = min(width, lo + SEGMENT)
        carry = carries[n - 1] if n else Const(0, 1)
        parts.append((a[lo:hi] + b[lo:hi] + carry)[:hi - lo])
    return Cat(*parts)


def segment_latency(width):
    """Cycles from the operands of :func:`segmented_sum` to its valid result."""
    return -(-width // SEGMENT) - 1


def segmented_sum(m, a, b, width, name="seg"):
    """``a + b`` (``width`` bits, modulo ``2**width``) resolved a segment per cycle in module
    ``m``; returns the result (a value).

    The operands must stay unchanged from the cycle they are first presented until the result
    is used: segment ``k`` (:data:`SEGMENT` bits) is added in cycle ``k`` with the carry that
    segment ``k - 1`` registered, and its sum registered, so the result is valid
    :func:`segment_latency` ``= ceil(width / SEGMENT) - 1`` cycles after the operands (the last
    segment's adder is combinational into it). No submodule, so that the module using it stays
    one circuit however many times it is instantiated (the area flow maps repeated modules
    once)."""
    check_int("width", width, 1, 256)
    parts, carry = [], Const(0, 1)
    for lo in range(0, width, SEGMENT):
        hi = min(width, lo + SEGMENT)
        total = Signal(hi - lo + 1, name=f"{name}_add{lo}")
        m.d.comb += total.eq(a[lo:hi] + b[lo:hi] + carry)
        if hi == width:
            parts.append(total[:hi - lo])
            break
        part = Signal(hi - lo, name=f"{name}_sum{lo}")
        carry = Signal(name=f"{name}_carry{hi}")
        m.d.sync += [part.eq(total[:hi - lo]), carry.eq(total[hi - lo])]
        parts.append(part)
    result = Signal(width, name=f"{name}_result")
    m.d.comb += result.eq(Cat(*parts))
    return result


class CarrySaveDivider(wiring.Component):
    """Restoring divider with a carry-save remainder: one quotient bit per cycle, saturating.

    The same ports, cycles and results as :class:`ahasd.hw.divider.Divider` (without
    ``round_half_up`` and ``abort``): ``min(dividend // divisor, 2**steps - 1)``. The partial
    remainder ``R`` is kept as two rows ``S + C`` (modulo ``2**(divisor_width + 2)``): a step
    forms ``2R + next dividend bit - divisor`` with one full-adder level, takes the quotient bit
    from the sign of that sum (:func:`sign_of_sum`) and keeps either the new rows or the
    shifted old ones. No word adder is in the loop; the remainder is never resolved (only the
    quotient is an output). ``2R + 1 < 2 * divisor`` and ``|2R + bit - divisor| < divisor``
    keep every sum within the rows' signed range.

    Parameters
    ----------
    dividend_width, divisor_width, quotient_bits, check_cycle, variable_steps
        As :class:`ahasd.hw.divider.Divider`.
    """

    def __init__(self, *, dividend_width, divisor_width, quotient_bits, check_cycle=False,
                 variable_steps=False):
        with rejecting_construction(self):
            check_divider_params(dividend_width, divisor_width, quotient_bits, check_cycle,
                                 variable_steps)
        self.dividend_width = dividend_width
        self.divisor_width = divisor_width
        self.quotient_bits = quotient_bits
        self.check_cycle = check_cycle
        self.variable_steps = variable_steps
        super().__init__(divider_members(dividend_width, divisor_width, quotient_bits,
                                         variable_steps, abort=False))

    def elaborate(self, platform):
        m = Module()
        q, dw = self.quotient_bits, self.divisor_width
        w = dw + 2
        dividend = self.dividend
        steps = self.steps if self.variable_steps else q
        high = dividend >> steps
        high_width = len(dividend) - (1 if self.variable_steps else q)

        divisor = Signal(dw)
        rem_s = Signal(w)             # the partial remainder is rem_s + rem_c (mod 2**w)
        rem_c = Signal(w)
        quo = Signal(q)
        check = Signal()
        sat = Signal()
        count = Signal(range(q + 1))
        # In the check cycle rem_c is zero and rem_s the high part (its low dw + 1 bits).
        over = rem_s[:dw + 1] >= divisor
        big = None                    # set when the high part is wider than the remainder
        if high_width > dw + 1:
            big = Signal()
            over = big | over

        shift_s = Cat(quo[-1], rem_s[:w - 1])
        shift_c = Cat(Const(0, 1), rem_c[:w - 1])
        minus = Signal(w)
        m.d.comb += minus.eq(~Cat(divisor, Const(0, 2)))   # ~divisor + 1 = -divisor (mod 2**w)
        trial_s, trial_c = csa(shift_s, shift_c, minus, w)
        trial_c = Cat(Const(1, 1), trial_c[1:])        # the + 1, in the carry row's free bit
        bit = ~sign_of_sum(trial_s, trial_c, w)
        sat_now = sat | (check & over)
        if not self.check_cycle:
            bit = bit | sat_now
        next_quo = Cat(bit, quo[:-1])

        busy = self.busy
        if self.check_cycle:
            with m.If(busy & check):
                m.d.sync += check.eq(0)
                with m.If(over):
                    m.d.comb += [self.done.valid.eq(1), self.done.payload.eq(2**q - 1)]
                    m.d.sync += [busy.eq(0), sat.eq(1)]
            step_cond = busy & ~check
        else:
            step_cond = busy
        with m.If(step_cond):
            if not self.check_cycle:
                m.d.sync += [check.eq(0), sat.eq(sat_now)]
            divider_step(m, self, busy=busy, count=count, quo=quo, next_quo=next_quo,
                         updates=[rem_s.eq(Mux(bit, trial_s, shift_s)),
                                  rem_c.eq(Mux(bit, trial_c, shift_c))])
        with m.If(self.start):
            divider_start(m, self, busy=busy, check=check, sat=sat, count=count, steps=steps,
                          divisor=divisor, quo=quo, dividend=dividend, high=high,
                          high_width=high_width, big=big,
                          remainder=[rem_s.eq(high[:dw + 1]), rem_c.eq(0)])
        divider_quotient(m, self, sat=sat, quo=quo)
        return m
