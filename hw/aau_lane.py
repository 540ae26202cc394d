"""One AAU lane: the lane's registers, its two table ROMs and one shared, pipelined multiplier.

Every variable and constant product of the three operators goes through the lane's single
34 x 22-bit signed multiplier, chosen by the ``step`` the AAU's sequencer gives all lanes
(:class:`LaneStep`). Softmax, GELU and LayerNorm therefore share the multiplier instead of each
owning theirs; the lane is the same circuit 16 times, which the area flow maps once
(``ahasd.synth.hierarchy``). Operand ranges (why 34 x 22 bits suffice):

======== =================================== =====================
step     product                             operand ranges
======== =================================== =====================
SM_EXP   (max - x) * LOG2E_Q15               17u x 17u
SM_OUT   e * R[19:0]                         20u x 17u
G_SQ     xc * xc                             12s x 12s
G_CUBE   xc**2 * xc                          23s x 12s
G_INNER  xc**3 * GELU_C1                     34s x 12u (|xc**3| <= 2**33)
G_TANH   inner * (+-GELU_C0)                 30s x 17s (|inner| < 2**29)
G_INTERP delta * (+-frac)                    13u x 6s
G_OUT    x * t                               16s x 18s (|t| <= 65536)
LN_VAR   d * d                               21s x 21s (|d| <= 2**20)
LN_OUT   d * R                               21s x 33u
======== =================================== =====================

The multiplier is pipelined for 800 MHz at 28 nm (:mod:`ahasd.hw.carry_save`): in a step's
*issue* cycle its partial products and up to two addends go through a carry-save tree into two
:data:`PRODUCT_BITS`-bit rows (registered); the rows are resolved in three 17-bit segments over
the next three cycles, and in the third (*write*) cycle the step's result, a bit field of the
sum, is written. The addends fold every addition and negation the original datapath did after a
product into the tree (rounding constants, ``xc << 16`` of G_INNER, ``x << 16`` of G_OUT, the
negations of G_TANH's and G_INTERP's magnitudes), so a write is a slice plus, for G_TANH, the
clamp; every result is the golden model's bit for bit. A product step therefore takes
:data:`PRODUCT_CYCLES` cycles; the sequencer issues the next step no earlier. Steps without a
product (LOAD, SM_DIFF, SM_SUM, LN_DIFF) act in their issue cycle.
"""

from amaranth.hdl import Module, Mux, Signal, signed, unsigned
from amaranth.lib import enum, memory, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.carry_save import SEGMENT, csa_tree, segment_latency, segmented_sum
from ahasd.spec.aau import EXP2_Q16, GELU_C0, GELU_C1, LANES, LOG2E_Q15, TANH_LUT, TANH_STEP_BITS, U_FRAC

__all__ = ["LaneStep", "AAULane", "QUOT_BITS", "PRODUCT_BITS", "PRODUCT_CYCLES", "PRODUCT_STEPS"]

QUOT_BITS = 33          # widest reciprocal (LayerNorm's, < 2**33)
_A, _B = 34, 22         # multiplier operand widths (signed)
_FBITS = U_FRAC - TANH_STEP_BITS
_U_SHIFT = 24 + 16 - U_FRAC   # u = (inner * GELU_C0) >> 30
#: Bits of the product rows: the highest bit any step reads is G_INNER's bit 49.
PRODUCT_BITS = 3 * SEGMENT


class LaneStep(enum.Enum, shape=4):
    """What every lane does this cycle (the issue of one multiplier product at most)."""
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
    SM_DIFF = 14


#: The steps that issue a product.
PRODUCT_STEPS = (LaneStep.SM_EXP, LaneStep.SM_OUT, LaneStep.G_SQ, LaneStep.G_CUBE,
                 LaneStep.G_INNER, LaneStep.G_TANH, LaneStep.G_INTERP, LaneStep.G_OUT,
                 LaneStep.LN_VAR, LaneStep.LN_OUT)
#: Cycles of a product step: the issue cycle and three segment cycles (the last writes).
PRODUCT_CYCLES = 4


class AAULane(wiring.Component):
    """One lane of :class:`ahasd.hw.aau.AAU` (no parameters).

    Ports
    -----
    step : in LaneStep
        This cycle's step (the same for every lane).
    x_in : in signed(16)
        The lane's input, loaded on ``LOAD``.
    big, total : in
        Softmax: the largest input (``SM_DIFF``); LayerNorm: the sum of the inputs (``LN_DIFF``).
    quot : in unsigned(33)
        The shared reciprocal (issue of ``SM_OUT``, ``LN_OUT``).
    x : out signed(16)
        The loaded input (for the cross-lane max and sum).
    acc : out signed(34)
        The lane's working register: ``e`` after ``SM_SUM``, ``d`` after ``LN_DIFF``.
    prod : out signed(41)
        ``d * d``, written by ``LN_VAR`` (for the variance sum).
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
    prod: Out(signed(41))
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
        xc = Signal(signed(12))
        m.d.comb += xc.eq(Mux(x < -2048, -2048, Mux(x > 2047, 2047, x)))

        # ---- issue: operands, addends, the carry-save tree into two registered rows
        a = Signal(signed(_A))
        b = Signal(signed(_B))
        e1 = Signal(PRODUCT_BITS)       # addends, modulo 2**PRODUCT_BITS
        e2 = Signal(PRODUCT_BITS)
        with m.Switch(self.step):
            with m.Case(LaneStep.LOAD):
                m.d.sync += x.eq(self.x_in)
            # ---- softmax
            with m.Case(LaneStep.SM_DIFF):
                m.d.sync += acc.eq(self.big - x)                 # max - x >= 0
            with m.Case(LaneStep.SM_EXP):
                # nd = -(((x - max) * LOG2E) >> 15) = ((max - x) * LOG2E + 2**15 - 1) >> 15
                m.d.comb += [a.eq(acc), b.eq(LOG2E_Q15), e1.eq((1 << 15) - 1)]
            with m.Case(LaneStep.SM_SUM):
                m.d.sync += acc.eq(Mux(ip <= 16, exp_rd.data >> ip, 0))
            with m.Case(LaneStep.SM_OUT):
                m.d.comb += [a.eq(self.quot[:20]), b.eq(acc[:17]), e1.eq(1 << 19)]
            # ---- GELU
            with m.Case(LaneStep.G_SQ):
                m.d.comb += [a.eq(xc), b.eq(xc)]
            with m.Case(LaneStep.G_CUBE):
                m.d.comb += [a.eq(acc), b.eq(xc)]
            with m.Case(LaneStep.G_INNER):
                # (xc << 16) + (p >> 16) = ((xc << 32) + p) >> 16
                m.d.comb += [a.eq(acc), b.eq(GELU_C1), e1.eq(xc << 32)]
            with m.Case(LaneStep.G_TANH):
                # |u| for u = (inner * C0) >> 30: (|inner| * C0 + (2**30 - 1 if inner < 0)) >> 30
                neg = acc[-1]
                m.d.comb += [a.eq(acc), b.eq(Mux(neg, -GELU_C0, GELU_C0)),
                             e1.eq(Mux(neg, (1 << _U_SHIFT) - 1, 0))]
                m.d.sync += g_neg.eq(neg)
            with m.Case(LaneStep.G_INTERP):
                # t = +-(lo + ((delta * frac) >> 5)), or +-TANH_LUT[256] beyond the table:
                # v = lo * 32 + delta * frac; t = v >> 5, or -t = (-v + 31) >> 5 with
                # -v = ~(lo * 32) + 1 + delta * (-frac).
                lo, delta = tanh_rd.data[:17], tanh_rd.data[17:]
                frac = g_a[:_FBITS]
                sat = g_a[_FBITS:] >= 256
                base = Signal(PRODUCT_BITS)
                m.d.comb += base.eq(Mux(sat, TANH_LUT[256] << _FBITS, lo << _FBITS))
                m.d.comb += [a.eq(Mux(sat, 0, delta)), b.eq(Mux(g_neg, -frac, frac)),
                             e1.eq(Mux(g_neg, ~base, base)),
                             e2.eq(Mux(g_neg, 1 << _FBITS, 0))]
            with m.Case(LaneStep.G_OUT):
                # x * (65536 + t) + 2**16 = x * t + (x << 16) + 2**16
                m.d.comb += [a.eq(x), b.eq(acc), e1.eq(x << 16), e2.eq(1 << 16)]
            # ---- LayerNorm
            with m.Case(LaneStep.LN_DIFF):
                m.d.sync += acc.eq((x << 4) - self.total)   # LANES * x - sum x
            with m.Case(LaneStep.LN_VAR):
                m.d.comb += [a.eq(acc), b.eq(acc)]
            with m.Case(LaneStep.LN_OUT):
                m.d.comb += [a.eq(self.quot), b.eq(acc), e1.eq(1 << 23)]

        # Signed a * b as partial products modulo 2**PRODUCT_BITS: b's sign bit weighs
        # -2**21, so its row is the complement of a << 21 plus one.
        w = PRODUCT_BITS
        a_w = Signal(w)
        m.d.comb += a_w.eq(a)
        rows = [Mux(b[i], (a_w << i)[:w], 0) for i in range(_B - 1)]
        rows += [Mux(b[-1], ~(a_w << (_B - 1))[:w], 0), b[-1], e1, e2]
        row_s, row_c = csa_tree(m, rows, w)
        rs, rc = Signal(w), Signal(w)
        step_at = [Signal(LaneStep, name=f"step_d{i}") for i in range(1, PRODUCT_CYCLES)]
        m.d.sync += step_at[0].eq(LaneStep.HOLD)
        with m.If(self.step.as_value().matches(*PRODUCT_STEPS)):
            m.d.sync += [rs.eq(row_s), rc.eq(row_c), step_at[0].eq(self.step)]
        for before, after in zip(step_at, step_at[1:]):
            m.d.sync += after.eq(before)

        # ---- three segment cycles; the last writes the step's bit field of the sum r
        assert segment_latency(w) == PRODUCT_CYCLES - 2
        r = segmented_sum(m, rs, rc, w, name="prod")
        with m.Switch(step_at[-1]):
            with m.Case(LaneStep.SM_EXP):
                nd = r[15:33]
                m.d.comb += [exp_rd.addr.eq(nd[:8]), exp_rd.en.eq(1)]
                m.d.sync += ip.eq(nd[8:])
            with m.Case(LaneStep.SM_OUT):
                m.d.sync += y.eq(r[20:36])
            with m.Case(LaneStep.G_SQ, LaneStep.G_CUBE):
                m.d.sync += acc.eq(r[:_A])
            with m.Case(LaneStep.G_INNER):
                m.d.sync += acc.eq(r[16:16 + _A])
            with m.Case(LaneStep.G_TANH):
                mag = r[_U_SHIFT:]                      # < 2**15 (|inner * C0| < 2**45)
                sat = 256 << _FBITS
                a_c = Signal(14)
                m.d.comb += a_c.eq(Mux(mag > sat, sat, mag))
                m.d.comb += [tanh_rd.addr.eq(a_c >> _FBITS), tanh_rd.en.eq(1)]
                m.d.sync += g_a.eq(a_c)
            with m.Case(LaneStep.G_INTERP):
                m.d.sync += acc.eq(r[_FBITS:_FBITS + _A])
            with m.Case(LaneStep.G_OUT):
                m.d.sync += y.eq(r[17:33])
            with m.Case(LaneStep.LN_VAR):
                m.d.sync += self.prod.eq(r[:41])
            with m.Case(LaneStep.LN_OUT):
                m.d.sync += y.eq(r[24:40])
        assert LANES == 16  # LN_DIFF's shift by 4
        return m
