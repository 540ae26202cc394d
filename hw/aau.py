"""Attention algorithm unit (AAU): 16-lane fixed-point softmax, GELU (tanh form) and LayerNorm.

Bit-exact with :mod:`ahasd.sim.blocks.aau` (formats, tables and error bounds are documented there).
One vector of 16 Q8.8 lanes per request. The lanes (:class:`ahasd.hw.aau_lane.AAULane`) work in
parallel, each with one multiplier that all three operators share, one product per cycle; this
unit sequences them and owns what crosses lanes: the max and sum trees, one restoring divider
(:class:`ahasd.hw.divider.Divider`, shared by softmax and LayerNorm) and LayerNorm's bit-serial
square root. Cycles per request after it is accepted: softmax 3 + 21 (reciprocal) + 1, GELU
6 + 1, LayerNorm 2 + 32 (square root) + 34 (reciprocal) + 1.
"""

from amaranth.hdl import Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.aau_lane import QUOT_BITS, AAULane, LaneStep
from ahasd.hw.construction import rejecting_construction
from ahasd.hw.divider import Divider
from ahasd.spec.aau import (LANES, LN_RECIP_SHIFT, LN_SQRT_SHIFT, SOFTMAX_RECIP_SHIFT,
                            check_eps, eps_fx)

__all__ = ["AAUOp", "AAU", "request_layout", "response_layout"]


class AAUOp(enum.Enum, shape=2):
    """AAU operator: output formats UQ1.15 (softmax), Q8.8 (GELU), Q3.12 (LayerNorm)."""
    SOFTMAX = 0
    GELU = 1
    LAYERNORM = 2


request_layout = data.StructLayout({"op": AAUOp, "x": data.ArrayLayout(signed(16), LANES)})
#: ``y`` lanes are raw 16-bit words: unsigned for softmax, two's complement for GELU/LayerNorm.
response_layout = data.StructLayout({"op": AAUOp, "y": data.ArrayLayout(unsigned(16), LANES)})

_SQRT_BITS = 62          # (V + eps) << 16 < 2**61; an even width for the bit-serial root


def _add(a, b):
    return a + b


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
        m.d.comb += [big.eq(_tree(x, lambda a, b: Mux(a > b, a, b))), total.eq(_tree(x, _add))]
        m.d.comb += self.o_stream.payload.op.eq(op)
        for i, lane in enumerate(lanes):
            m.d.comb += [lane.step.eq(step), lane.x_in.eq(self.i_stream.payload.x[i]),
                         lane.big.eq(big), lane.total.eq(total),
                         self.o_stream.payload.y[i].eq(lane.y)]

        # The shared divider (softmax and LayerNorm): quot = floor(2**shift / divisor), at most
        # QUOT_BITS quotient bits, saturating.
        m.submodules.divider = div = Divider(dividend_width=LN_RECIP_SHIFT + 1, divisor_width=32,
                                             quotient_bits=QUOT_BITS, variable_steps=True)
        m.d.comb += [lane.quot.eq(div.quotient) for lane in lanes]

        def divide(shift, divisor, steps):
            m.d.comb += [div.start.eq(1), div.dividend.eq(1 << shift), div.divisor.eq(divisor),
                         div.steps.eq(steps)]

        def wait_divider(last_step, after):
            with m.If(~div.busy):
                m.d.comb += step.eq(last_step)
                m.next = after

        # LayerNorm's bit-serial square root.
        sq_op = Signal(_SQRT_BITS)
        sq_res = Signal(_SQRT_BITS)
        sq_one = Signal(_SQRT_BITS)

        def chain(*states):
            """States that each run one lane step and go to the next."""
            for (name, lane_step), following in zip(states, states[1:] + (("OUT", None),)):
                with m.State(name):
                    m.d.comb += step.eq(lane_step)
                    m.next = following[0]

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += self.i_stream.ready.eq(1)
                with m.If(self.i_stream.valid):
                    m.d.comb += step.eq(LaneStep.LOAD)
                    m.d.sync += op.eq(self.i_stream.payload.op)
                    with m.Switch(self.i_stream.payload.op):
                        with m.Case(AAUOp.SOFTMAX):
                            m.next = "SM_EXP"
                        with m.Case(AAUOp.GELU):
                            m.next = "G_SQ"
                        with m.Default():
                            m.next = "LN_DIFF"

            # ---- softmax: exponentials, their sum, one reciprocal, 16 products
            with m.State("SM_EXP"):
                m.d.comb += step.eq(LaneStep.SM_EXP)
                m.next = "SM_SUM"
            with m.State("SM_SUM"):
                m.d.comb += step.eq(LaneStep.SM_SUM)
                m.next = "SM_DIVSET"
            with m.State("SM_DIVSET"):
                e_sum = _tree([lane.acc[:17] for lane in lanes], _add)
                divide(SOFTMAX_RECIP_SHIFT, e_sum, 20)
                m.next = "SM_DIV"
            with m.State("SM_DIV"):
                wait_divider(LaneStep.SM_OUT, "OUT")

            # ---- GELU: six lane steps, one product each
            chain(("G_SQ", LaneStep.G_SQ), ("G_CUBE", LaneStep.G_CUBE),
                  ("G_INNER", LaneStep.G_INNER), ("G_TANH", LaneStep.G_TANH),
                  ("G_INTERP", LaneStep.G_INTERP), ("G_OUT", LaneStep.G_OUT))

            # ---- LayerNorm: differences, variance, square root, reciprocal, 16 products
            with m.State("LN_DIFF"):
                m.d.comb += step.eq(LaneStep.LN_DIFF)
                m.next = "LN_VAR"
            with m.State("LN_VAR"):
                m.d.comb += step.eq(LaneStep.LN_VAR)
                # d * d < 2**40 for |d| <= 2**20: the low 41 bits of each product suffice.
                var = _tree([lane.prod[:41] for lane in lanes], _add)
                m.d.sync += [sq_op.eq((var + eps_fx(self.eps)) << LN_SQRT_SHIFT), sq_res.eq(0),
                             sq_one.eq(1 << (_SQRT_BITS - 2))]
                m.next = "LN_SQRT"
            with m.State("LN_SQRT"):
                with m.If(sq_one != 0):
                    with m.If(sq_op >= sq_res + sq_one):
                        m.d.sync += [sq_op.eq(sq_op - (sq_res + sq_one)),
                                     sq_res.eq((sq_res >> 1) + sq_one)]
                    with m.Else():
                        m.d.sync += sq_res.eq(sq_res >> 1)
                    m.d.sync += sq_one.eq(sq_one >> 2)
                with m.Else():
                    divide(LN_RECIP_SHIFT, sq_res, QUOT_BITS)
                    m.next = "LN_DIV"
            with m.State("LN_DIV"):
                wait_divider(LaneStep.LN_OUT, "OUT")

            with m.State("OUT"):
                m.d.comb += self.o_stream.valid.eq(1)
                with m.If(self.o_stream.ready):
                    m.next = "IDLE"
        return m
