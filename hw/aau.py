"""Attention algorithm unit (AAU): 16-lane fixed-point softmax, GELU (tanh form) and LayerNorm.

Bit-exact with :mod:`ahasd.sim.blocks.aau` (formats, tables and error bounds are documented there). One
vector of 16 Q8.8 lanes per request; the lanes work in parallel, with a multi-cycle schedule per
operator: GELU 4 cycles, softmax 2 + 20 (reciprocal of the sum by a restoring divider) + 1,
LayerNorm 2 + 31 (bit-serial square root) + 33 (reciprocal) + 1. The divider is shared by softmax
and LayerNorm; each lane has its own table port (the tables are ROMs in ``amaranth.lib.memory``).
"""

from amaranth.hdl import Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, enum, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.sim.blocks.aau import (EXP2_Q16, GELU_C0, GELU_C1, LANES, LN_RECIP_SHIFT, LN_SQRT_SHIFT,
                           LOG2E_Q15, SOFTMAX_RECIP_SHIFT, TANH_LUT, TANH_STEP_BITS, U_FRAC,
                           eps_fx)

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
_DIV_QBITS = 33          # widest quotient (LayerNorm reciprocal < 2**33)


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
            if not isinstance(eps, (int, float)) or not 2**-28 <= eps < 16:
                raise ValueError(f"eps must be a number in [2**-28, 16), not {eps!r}")
        self.eps = eps
        super().__init__({
            "i_stream": In(stream.Signature(request_layout)),
            "o_stream": Out(stream.Signature(response_layout)),
        })

    def elaborate(self, platform):
        m = Module()
        x = [Signal(signed(16), name=f"x{i}") for i in range(LANES)]
        y = [Signal(16, name=f"y{i}") for i in range(LANES)]
        op = Signal(AAUOp)
        m.d.comb += [self.o_stream.payload.op.eq(op)]
        m.d.comb += [self.o_stream.payload.y[i].eq(y[i]) for i in range(LANES)]

        # Tables: one read port per lane.
        m.submodules.exp2 = exp2 = memory.Memory(shape=unsigned(17), depth=256, init=EXP2_Q16)
        tanh_words = [TANH_LUT[i] | ((TANH_LUT[i + 1] - TANH_LUT[i]) << 17) for i in range(256)]
        m.submodules.tanh = tanh = memory.Memory(shape=unsigned(30), depth=256, init=tanh_words)
        exp_rd = [exp2.read_port() for _ in range(LANES)]
        tanh_rd = [tanh.read_port() for _ in range(LANES)]

        # Shared restoring divider: quot = floor(rem0 / divisor), quotient < 2**qbits.
        rem = Signal(LN_RECIP_SHIFT + 1)
        dsh = Signal(31 + _DIV_QBITS)
        quot = Signal(_DIV_QBITS)
        div_steps = Signal(range(_DIV_QBITS + 1))

        def div_step():
            with m.If(rem >= dsh):
                m.d.sync += [rem.eq(rem - dsh), quot.eq((quot << 1) | 1)]
            with m.Else():
                m.d.sync += quot.eq(quot << 1)
            m.d.sync += [dsh.eq(dsh >> 1), div_steps.eq(div_steps - 1)]

        # Softmax state.
        e = [Signal(17, name=f"e{i}") for i in range(LANES)]
        ip = [Signal(range(2**10), name=f"ip{i}") for i in range(LANES)]
        # GELU state.
        inner = [Signal(signed(42), name=f"inner{i}") for i in range(LANES)]
        g_a = [Signal(14, name=f"g_a{i}") for i in range(LANES)]
        g_neg = [Signal(name=f"g_neg{i}") for i in range(LANES)]
        # LayerNorm state.
        d = [Signal(signed(22), name=f"d{i}") for i in range(LANES)]
        sq_op = Signal(_SQRT_BITS)
        sq_res = Signal(_SQRT_BITS)
        sq_one = Signal(_SQRT_BITS)

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += self.i_stream.ready.eq(1)
                with m.If(self.i_stream.valid):
                    m.d.sync += [x[i].eq(self.i_stream.payload.x[i]) for i in range(LANES)]
                    m.d.sync += op.eq(self.i_stream.payload.op)
                    with m.Switch(self.i_stream.payload.op):
                        with m.Case(AAUOp.SOFTMAX):
                            m.next = "SM_EXP"
                        with m.Case(AAUOp.GELU):
                            m.next = "G_CUBE"
                        with m.Default():
                            m.next = "LN_DIFF"

            # ---- softmax -----------------------------------------------------------------------
            with m.State("SM_EXP"):
                big = _tree(x, lambda a, b: Mux(a > b, a, b))
                for i in range(LANES):
                    nd = Signal(range(2**18), name=f"nd{i}")
                    m.d.comb += nd.eq(-(((x[i] - big) * LOG2E_Q15) >> 15))
                    m.d.comb += [exp_rd[i].addr.eq(nd[:8]), exp_rd[i].en.eq(1)]
                    m.d.sync += ip[i].eq(nd[8:])
                m.next = "SM_SUM"
            with m.State("SM_SUM"):
                for i in range(LANES):
                    ev = Signal(17, name=f"ev{i}")
                    m.d.comb += ev.eq(Mux(ip[i] <= 16, exp_rd[i].data >> ip[i], 0))
                    m.d.sync += e[i].eq(ev)
                # The sum is taken from the registered e next cycle's divider setup instead of here
                # to keep this cycle's path short.
                m.next = "SM_DIVSET"
            with m.State("SM_DIVSET"):
                total = _tree(e, lambda a, b: a + b)
                m.d.sync += [rem.eq(1 << SOFTMAX_RECIP_SHIFT), dsh.eq(total << 19), quot.eq(0),
                             div_steps.eq(20)]
                m.next = "SM_DIV"
            with m.State("SM_DIV"):
                with m.If(div_steps != 0):
                    div_step()
                with m.Else():
                    for i in range(LANES):
                        m.d.sync += y[i].eq((e[i] * quot[:20] + (1 << 19)) >> 20)
                    m.next = "OUT"

            # ---- GELU --------------------------------------------------------------------------
            with m.State("G_CUBE"):
                for i in range(LANES):
                    xc = Signal(signed(12), name=f"xc{i}")
                    m.d.comb += xc.eq(Mux(x[i] < -2048, -2048, Mux(x[i] > 2047, 2047, x[i])))
                    x3 = Signal(signed(36), name=f"x3_{i}")
                    m.d.comb += x3.eq(xc * xc * xc)
                    m.d.sync += inner[i].eq((xc << 16) + ((GELU_C1 * x3) >> 16))
                m.next = "G_TANH"
            with m.State("G_TANH"):
                for i in range(LANES):
                    u = Signal(signed(32), name=f"u{i}")
                    m.d.comb += u.eq((inner[i] * GELU_C0) >> (24 + 16 - U_FRAC))
                    a = Signal(32, name=f"ua{i}")
                    m.d.comb += a.eq(Mux(u < 0, -u, u))
                    sat = 256 << (U_FRAC - TANH_STEP_BITS)
                    a_c = Signal(14, name=f"uac{i}")
                    m.d.comb += a_c.eq(Mux(a > sat, sat, a))
                    m.d.comb += [tanh_rd[i].addr.eq(a_c >> (U_FRAC - TANH_STEP_BITS)),
                                 tanh_rd[i].en.eq(1)]
                    m.d.sync += [g_a[i].eq(a_c), g_neg[i].eq(u < 0)]
                m.next = "G_OUT"
            with m.State("G_OUT"):
                fbits = U_FRAC - TANH_STEP_BITS
                for i in range(LANES):
                    lo = tanh_rd[i].data[:17]
                    delta = tanh_rd[i].data[17:]
                    t_mag = Signal(17, name=f"tm{i}")
                    m.d.comb += t_mag.eq(Mux(g_a[i][fbits:] >= 256, TANH_LUT[256],
                                             lo + ((delta * g_a[i][:fbits]) >> fbits)))
                    t = Signal(signed(18), name=f"t{i}")
                    m.d.comb += t.eq(Mux(g_neg[i], -t_mag, t_mag))
                    m.d.sync += y[i].eq((x[i] * (65536 + t) + (1 << 16)) >> 17)
                m.next = "OUT"

            # ---- LayerNorm ---------------------------------------------------------------------
            with m.State("LN_DIFF"):
                total = _tree(x, lambda a, b: a + b)
                for i in range(LANES):
                    m.d.sync += d[i].eq(LANES * x[i] - total)
                m.next = "LN_VAR"
            with m.State("LN_VAR"):
                var = _tree([d[i] * d[i] for i in range(LANES)], lambda a, b: a + b)
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
                    m.d.sync += [rem.eq(1 << LN_RECIP_SHIFT), dsh.eq(sq_res << (_DIV_QBITS - 1)),
                                 quot.eq(0), div_steps.eq(_DIV_QBITS)]
                    m.next = "LN_DIV"
            with m.State("LN_DIV"):
                with m.If(div_steps != 0):
                    div_step()
                with m.Else():
                    for i in range(LANES):
                        m.d.sync += y[i].eq((d[i] * quot + (1 << 23)) >> 24)
                    m.next = "OUT"

            with m.State("OUT"):
                m.d.comb += self.o_stream.valid.eq(1)
                with m.If(self.o_stream.ready):
                    m.next = "IDLE"
        return m
