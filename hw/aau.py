"""Attention algorithm unit (AAU): 16-lane fixed-point softmax, GELU (tanh form) and LayerNorm.

Bit-exact with :mod:`ahasd.sim.blocks.aau` (formats, tables and error bounds are documented there).
One vector of 16 Q8.8 lanes per request. The lanes (:class:`ahasd.hw.aau_lane.AAULane`) work in
parallel, each with one pipelined multiplier that all three operators share (a product step takes
:data:`ahasd.hw.aau_lane.PRODUCT_CYCLES` = 4 cycles); this unit sequences them and owns what
crosses lanes: the max tree (two registered levels), the sum trees (carry-save, resolved over one
to three cycles), one restoring divider with a carry-save remainder
(:class:`ahasd.hw.carry_save.CarrySaveDivider`, shared by softmax and LayerNorm) and LayerNorm's
square root (digit by digit, its remainder carry-save too). Every cycle has at most a 17-bit
word adder or a carry-save level and a comparison: 800 MHz at 28 nm (``ahasd timing aau``).
Cycles per request, from the accept to the result (the output cycle included; a divider run is
its quotient bits plus the cycle that sees it idle): softmax 1 + 2 (max) + 1 + 4 (exp) + 1 + 2
(sum) + 20 + 1 (reciprocal) + 4 + 1 = 37, GELU 1 + 6 * 4 + 1 = 26, LayerNorm 1 + 2 (sum) + 1 + 4
(d * d) + 4 (variance) + 31 + 1 (square root, divider start) + 33 + 1 (reciprocal) + 4 + 1 = 83
(``ahasd bench rtl-timing`` measures them into the simulator's table).
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.aau_lane import PRODUCT_CYCLES, QUOT_BITS, AAULane, LaneStep
from ahasd.hw.carry_save import CarrySaveDivider, csa, csa_tree, segment_latency, segmented_sum, sign_of_sum
from ahasd.hw.construction import rejecting_construction
from ahasd.spec.aau import LANES, LN_RECIP_SHIFT, LN_SQRT_SHIFT, SOFTMAX_RECIP_SHIFT, check_eps, eps_fx

__all__ = ["AAUOp", "AAU", "request_layout", "response_layout"]


class AAUOp(enum.Enum, shape=2):
    """AAU operator: output formats UQ1.15 (softmax), Q8.8 (GELU), Q3.12 (LayerNorm)."""
    SOFTMAX = 0
    GELU = 1
    LAYERNORM = 2


request_layout = data.StructLayout({"op": AAUOp, "x": data.ArrayLayout(signed(16), LANES)})
#: ``y`` lanes are raw 16-bit words: unsigned for softmax, two's complement for GELU/LayerNorm.
response_layout = data.StructLayout({"op": AAUOp, "y": data.ArrayLayout(unsigned(16), LANES)})

_SQRT_BITS = 62          # (V + eps) << 16 < 2**61; an even width for the digit-by-digit root
_ROOT_BITS = _SQRT_BITS // 2
_ROOT_REM = _ROOT_BITS + 5   # the root's remainder rows: |4R + 3 - (4 root + 1)| < 2**35
_VAR_BITS = 46               # V + eps < 2**45


def _max(a, b):
    return Mux(a > b, a, b)


def _tree(values, op):
    values = list(values)
    while len(values) > 1:
        values = [op(values[i], values[i + 1]) if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


class AAU(wiring.Component):
    """Softmax / GELU / LayerNorm over 16 Q8.8 lanes.

    Parameters
    ----------
    eps : float
        LayerNorm epsilon (added to the variance), 2**-28 <= eps < 2**4.

    Ports
    -----
    i_stream : in stream of :data:`request_layout`
        Operator and 16 input lanes.
    o_stream : out stream of :data:`response_layout`
        Operator and 16 result lanes, in request order.
    """

    def __init__(self, *, eps=1e-5):
        with rejecting_construction(self):
            check_eps(eps)
        self.eps = eps
        super().__init__({
            "i_stream": In(stream.Signature(request_layout)),
            "o_stream": Out(stream.Signature(response_layout)),
        })

    def elaborate(self, platform):
        m = Module()
        lanes = [AAULane() for _ in range(LANES)]
        for i, lane in enumerate(lanes):
            m.submodules[f"lane{i}"] = lane
        x = [lane.x for lane in lanes]
        step = Signal(LaneStep)
        op = Signal(AAUOp)
        big = Signal(signed(16))
        total = Signal(signed(20))
        m.d.comb += self.o_stream.payload.op.eq(op)
        for i, lane in enumerate(lanes):
            m.d.comb += [lane.step.eq(step), lane.x_in.eq(self.i_stream.payload.x[i]),
                         lane.big.eq(big), lane.total.eq(total),
                         self.o_stream.payload.y[i].eq(lane.y)]

        # Cross-lane trees, each state's result registered: the max in two levels of two
        # comparisons, the sums as carry-save rows and then resolved.
        quarter = [Signal(signed(16), name=f"max{i}") for i in range(4)]
        sum_s, sum_c = Signal(21), Signal(21)          # softmax's sum of e, LayerNorm's sum of x
        var_s, var_c = Signal(_VAR_BITS), Signal(_VAR_BITS)
        var_sum = segmented_sum(m, var_s, var_c, _VAR_BITS, name="var")
        var_latency = segment_latency(_VAR_BITS)

        # The shared divider (softmax and LayerNorm): quot = floor(2**shift / divisor), at most
        # QUOT_BITS quotient bits, saturating.
        m.submodules.divider = div = CarrySaveDivider(
            dividend_width=LN_RECIP_SHIFT + 1, divisor_width=32, quotient_bits=QUOT_BITS,
            variable_steps=True)
        m.d.comb += [lane.quot.eq(div.quotient) for lane in lanes]

        def divide(shift, divisor, steps):
            m.d.comb += [div.start.eq(1), div.dividend.eq(1 << shift), div.divisor.eq(divisor),
                         div.steps.eq(steps)]

        # LayerNorm's square root, digit by digit: two bits of the operand per cycle into the
        # remainder R = rem_s + rem_c (carry-save); the root bit is the sign of
        # 4R + bits - (4 root + 1).
        sq_op = Signal(_SQRT_BITS)
        root = Signal(_ROOT_BITS)
        rem_s, rem_c = Signal(_ROOT_REM), Signal(_ROOT_REM)
        sq_count = Signal(range(_ROOT_BITS + 1))

        def chain(first, steps, after):
            """Product steps in sequence: each issued, then PRODUCT_CYCLES - 1 cycles of
            holding while its segments resolve; then state ``after``."""
            names = [f"{first}_{i}" for i in range(len(steps))]
            for k, (name, lane_step) in enumerate(zip(names, steps)):
                following = names[k + 1] if k + 1 < len(names) else after
                with m.State(name):
                    m.d.comb += step.eq(lane_step)
                    m.next = f"{name}_W1"
                for w in range(1, PRODUCT_CYCLES):
                    with m.State(f"{name}_W{w}"):
                        m.next = f"{name}_W{w + 1}" if w + 1 < PRODUCT_CYCLES else following

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += self.i_stream.ready.eq(1)
                with m.If(self.i_stream.valid):
                    m.d.comb += step.eq(LaneStep.LOAD)
                    m.d.sync += op.eq(self.i_stream.payload.op)
                    with m.Switch(self.i_stream.payload.op):
                        with m.Case(AAUOp.SOFTMAX):
                            m.next = "SM_MAX"
                        with m.Case(AAUOp.GELU):
                            m.next = "G_0"
                        with m.Default():
                            m.next = "LN_SUM"

            # ---- softmax: max, differences, exponentials, their sum, one reciprocal, products
            with m.State("SM_MAX"):
                m.d.sync += [q.eq(_tree(x[4 * i:4 * i + 4], _max)) for i, q in enumerate(quarter)]
                m.next = "SM_MAX2"
            with m.State("SM_MAX2"):
                m.d.sync += big.eq(_tree(quarter, _max))
                m.next = "SM_DIFF"
            with m.State("SM_DIFF"):
                m.d.comb += step.eq(LaneStep.SM_DIFF)
                m.next = "SM_EXP_0"
            chain("SM_EXP", [LaneStep.SM_EXP], "SM_SUM")
            with m.State("SM_SUM"):
                m.d.comb += step.eq(LaneStep.SM_SUM)
                m.next = "SM_ESUM"
            with m.State("SM_ESUM"):
                rows = csa_tree(m, [lane.acc[:17] for lane in lanes], 21)
                m.d.sync += [sum_s.eq(rows[0]), sum_c.eq(rows[1])]
                m.next = "SM_DIVSET"
            with m.State("SM_DIVSET"):
                divide(SOFTMAX_RECIP_SHIFT, (sum_s + sum_c)[:21], 20)
                m.next = "SM_DIV"
            with m.State("SM_DIV"):
                with m.If(~div.busy):
                    m.next = "SM_OUT_0"
            chain("SM_OUT", [LaneStep.SM_OUT], "OUT")

            # ---- GELU: six product steps
            chain("G", [LaneStep.G_SQ, LaneStep.G_CUBE, LaneStep.G_INNER, LaneStep.G_TANH,
                        LaneStep.G_INTERP, LaneStep.G_OUT], "OUT")

            # ---- LayerNorm: sum, differences, variance, square root, reciprocal, products
            with m.State("LN_SUM"):
                rows = csa_tree(m, x, 21)
                m.d.sync += [sum_s.eq(rows[0]), sum_c.eq(rows[1])]
                m.next = "LN_TOTAL"
            with m.State("LN_TOTAL"):
                m.d.sync += total.eq((sum_s + sum_c)[:20])
                m.next = "LN_DIFF"
            with m.State("LN_DIFF"):
                m.d.comb += step.eq(LaneStep.LN_DIFF)
                m.next = "LN_VAR_0"
            chain("LN_VAR", [LaneStep.LN_VAR], "LN_VSUM")
            with m.State("LN_VSUM"):
                # d * d < 2**40 for |d| <= 2**20: the low 41 bits of each product suffice.
                rows = csa_tree(m, [lane.prod for lane in lanes] + [eps_fx(self.eps)], _VAR_BITS)
                m.d.sync += [var_s.eq(rows[0]), var_c.eq(rows[1])]
                m.next = "LN_VADD_1"
            # The rows are the sum's operands from the cycle after LN_VSUM: its result is valid
            # var_latency cycles later.
            for k in range(1, var_latency + 2):
                with m.State(f"LN_VADD_{k}"):
                    if k <= var_latency:
                        m.next = f"LN_VADD_{k + 1}"
                    else:
                        m.d.sync += [sq_op.eq(var_sum << LN_SQRT_SHIFT), root.eq(0),
                                     rem_s.eq(0), rem_c.eq(0), sq_count.eq(_ROOT_BITS)]
                        m.next = "LN_SQRT"
            with m.State("LN_SQRT"):
                with m.If(sq_count != 0):
                    w = _ROOT_REM
                    shift_s = Cat(sq_op[-2:], rem_s[:w - 2])
                    shift_c = Cat(Const(0, 2), rem_c[:w - 2])
                    minus = Signal(w)
                    m.d.comb += minus.eq(~Cat(Const(1, 2), root, Const(0, w - _ROOT_BITS - 2)))
                    trial_s, trial_c = csa(shift_s, shift_c, minus, w)
                    trial_c = Cat(Const(1, 1), trial_c[1:])
                    bit = ~sign_of_sum(trial_s, trial_c, w)
                    m.d.sync += [rem_s.eq(Mux(bit, trial_s, shift_s)),
                                 rem_c.eq(Mux(bit, trial_c, shift_c)),
                                 root.eq(Cat(bit, root[:-1])), sq_op.eq(sq_op << 2),
                                 sq_count.eq(sq_count - 1)]
                with m.Else():
                    divide(LN_RECIP_SHIFT, root, QUOT_BITS)
                    m.next = "LN_DIV"
            with m.State("LN_DIV"):
                with m.If(~div.busy):
                    m.next = "LN_OUT_0"
            chain("LN_OUT", [LaneStep.LN_OUT], "OUT")

            with m.State("OUT"):
                m.d.comb += self.o_stream.valid.eq(1)
                with m.If(self.o_stream.ready):
                    m.next = "IDLE"
        return m
