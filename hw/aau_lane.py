"""One AAU lane: the lane's registers, its two table ROMs and one shared multiplier.

Every variable and constant product of the three operators goes through the lane's single
34 x 22-bit signed multiplier, one product per cycle, chosen by the ``step`` the AAU's sequencer
gives all lanes (:class:`LaneStep`). Softmax, GELU and LayerNorm therefore share the multiplier
instead of each owning theirs; the lane is the same circuit 16 times, which the area flow maps
once (``ahasd.synth.hierarchy``). Operand ranges (why 34 x 22 bits suffice):

======== =================================== =====================
step     product                             operand ranges
======== =================================== =====================
SM_EXP   (x - max) * LOG2E_Q15               17s x 17u
SM_OUT   e * R[19:0]                         20u x 17u
G_SQ     xc * xc                             12s x 12s
G_CUBE   xc**2 * xc                          23s x 12s
G_INNER  xc**3 * GELU_C1                     34s x 12u (|xc**3| <= 2**33)
G_TANH   inner * GELU_C0                     30s x 16u (|inner| < 2**29)
G_INTERP delta * frac                        13u x 5u
G_OUT    x * (65536 + t)                     16s x 18u (0..131072)
LN_VAR   d * d                               21s x 21s (|d| <= 2**20)
LN_OUT   d * R                               21s x 33u
======== =================================== =====================
"""

from amaranth.hdl import Module, Mux, Signal, signed, unsigned
from amaranth.lib import enum, memory, wiring
from amaranth.lib.wiring import In, Out

from ahasd.spec.aau import EXP2_Q16, GELU_C0, GELU_C1, LANES, LOG2E_Q15, TANH_LUT, TANH_STEP_BITS, U_FRAC

__all__ = ["LaneStep", "AAULane", "QUOT_BITS"]

QUOT_BITS = 33          # widest reciprocal (LayerNorm's, < 2**33)
_A, _B = 34, 22         # multiplier operand widths (signed)
_FBITS = U_FRAC - TANH_STEP_BITS


class LaneStep(enum.Enum, shape=4):
    """What every lane does this cycle (one multiplier product at most)."""
    HOLD = 0
    LOAD = 1
    SM_EXP = 2
    SM_SUM = 3
    SM_OUT = 4
    G_SQ = 5
    G_CUBE = 6
    G_INNER = 7
    G_TANH = 8
    G_INTERP = 9
    G_OUT = 10
    LN_DIFF = 11
    LN_VAR = 12
    LN_OUT = 13


class AAULane(wiring.Component):
    """One lane of :class:`ahasd.hw.aau.AAU` (no parameters).

    Ports
    -----
    step : in LaneStep
        This cycle's step (the same for every lane).
    x_in : in signed(16)
        The lane's input, loaded on ``LOAD``.
    big, total : in
        Softmax: the largest input (``SM_EXP``); LayerNorm: the sum of the inputs (``LN_DIFF``).
    quot : in unsigned(33)
        The shared reciprocal (``SM_OUT``, ``LN_OUT``).
    x : out signed(16)
        The loaded input (for the cross-lane max and sum).
    acc : out signed(34)
        The lane's working register: ``e`` after ``SM_SUM``, ``d`` after ``LN_DIFF``.
    prod : out signed(56)
        This cycle's product (``d * d`` on ``LN_VAR``, for the variance sum).
    y : out unsigned(16)
        The result word.
    """

    step: In(LaneStep)
    x_in: In(signed(16))
    big: In(signed(16))
    total: In(signed(20))
    quot: In(unsigned(QUOT_BITS))
    x: Out(signed(16))
    acc: Out(signed(_A))
    prod: Out(signed(_A + _B))
    y: Out(unsigned(16))

    def elaborate(self, platform):
        m = Module()
        # Each lane owns a copy of the tables: one read port each, which is what a 16-port
        # ROM is built from anyway.
        m.submodules.exp2 = exp2 = memory.Memory(shape=unsigned(17), depth=256, init=EXP2_Q16)
        tanh_words = [TANH_LUT[i] | ((TANH_LUT[i + 1] - TANH_LUT[i]) << 17) for i in range(256)]
        m.submodules.tanh = tanh = memory.Memory(shape=unsigned(30), depth=256, init=tanh_words)
        exp_rd, tanh_rd = exp2.read_port(), tanh.read_port()

        x, acc, y = self.x, self.acc, self.y
        ip = Signal(range(2**10))
        g_a = Signal(14)
        g_neg = Signal()
        a = Signal(signed(_A))
        b = Signal(signed(_B))
        p = self.prod
        m.d.comb += p.eq(a * b)
        xc = Signal(signed(12))
        m.d.comb += xc.eq(Mux(x < -2048, -2048, Mux(x > 2047, 2047, x)))

        with m.Switch(self.step):
            with m.Case(LaneStep.LOAD):
                m.d.sync += x.eq(self.x_in)
            # ---- softmax
            with m.Case(LaneStep.SM_EXP):
                m.d.comb += [a.eq(x - self.big), b.eq(LOG2E_Q15)]
                nd = Signal(range(2**18))
                m.d.comb += nd.eq(-(p >> 15))
                m.d.comb += [exp_rd.addr.eq(nd[:8]), exp_rd.en.eq(1)]
                m.d.sync += ip.eq(nd[8:])
            with m.Case(LaneStep.SM_SUM):
                m.d.sync += acc.eq(Mux(ip <= 16, exp_rd.data >> ip, 0))
            with m.Case(LaneStep.SM_OUT):
                m.d.comb += [a.eq(self.quot[:20]), b.eq(acc[:17])]
                m.d.sync += y.eq((p + (1 << 19)) >> 20)
            # ---- GELU
            with m.Case(LaneStep.G_SQ):
                m.d.comb += [a.eq(xc), b.eq(xc)]
                m.d.sync += acc.eq(p)
            with m.Case(LaneStep.G_CUBE):
                m.d.comb += [a.eq(acc), b.eq(xc)]
                m.d.sync += acc.eq(p)
            with m.Case(LaneStep.G_INNER):
                m.d.comb += [a.eq(acc), b.eq(GELU_C1)]
                m.d.sync += acc.eq((xc << 16) + (p >> 16))
            with m.Case(LaneStep.G_TANH):
                m.d.comb += [a.eq(acc), b.eq(GELU_C0)]
                u = Signal(signed(32))
                m.d.comb += u.eq(p >> (24 + 16 - U_FRAC))
                mag = Signal(32)
                m.d.comb += mag.eq(Mux(u < 0, -u, u))
                sat = 256 << _FBITS
                a_c = Signal(14)
                m.d.comb += a_c.eq(Mux(mag > sat, sat, mag))
                m.d.comb += [tanh_rd.addr.eq(a_c >> _FBITS), tanh_rd.en.eq(1)]
                m.d.sync += [g_a.eq(a_c), g_neg.eq(u < 0)]
            with m.Case(LaneStep.G_INTERP):
                lo, delta = tanh_rd.data[:17], tanh_rd.data[17:]
                m.d.comb += [a.eq(delta), b.eq(g_a[:_FBITS])]
                t_mag = Signal(17)
                m.d.comb += t_mag.eq(Mux(g_a[_FBITS:] >= 256, TANH_LUT[256], lo + (p >> _FBITS)))
                m.d.sync += acc.eq(Mux(g_neg, -t_mag, t_mag))
            with m.Case(LaneStep.G_OUT):
                m.d.comb += [a.eq(x), b.eq(65536 + acc)]
                m.d.sync += y.eq((p + (1 << 16)) >> 17)
            # ---- LayerNorm
            with m.Case(LaneStep.LN_DIFF):
                m.d.sync += acc.eq((x << 4) - self.total)   # LANES * x - sum x
            with m.Case(LaneStep.LN_VAR):
                m.d.comb += [a.eq(acc), b.eq(acc)]
            with m.Case(LaneStep.LN_OUT):
                m.d.comb += [a.eq(self.quot), b.eq(acc)]
                m.d.sync += y.eq((p + (1 << 23)) >> 24)
        assert LANES == 16  # LN_DIFF's shift by 4
        return m
