"""Streaming entropy unit: one pass over a logit stream -> entropy in nats, UQ4.12, for EDC.

Bit-exact with :func:`ahasd.sim.blocks.entropy.entropy_fx`; see that module for the arithmetic and the
error bound (<= 0.02 nats against float64 for vocabularies up to 64k; tested).

Pipeline (one logit per cycle), for 800 MHz at 28 nm by the rules of :mod:`ahasd.hw.carry_save`
(at most a 17-bit word adder per cycle, wide sums as carry-save rows):

* A1: ``z * LOG2E_Q15`` as two rows. A2: ``y = (z * LOG2E_Q15) >> shift`` (base-2 logit, 8
  fraction bits; the carry into bit ``shift`` a comparison). A3: ``ceil(y)`` and ``nd mod 1 =
  -y mod 1``, which addresses the ``2**-x`` table.
* B: running integer max ``M = ceil(max y)``; ``k`` = growth of M (a rescale by ``2**-k``) and
  the integer part of ``nd = M - y``, both differences beside the comparison.
* C: ``p = table >> floor(nd)`` from the registered table word; ``k`` clamped (the largest, with
  an empty mask, at a stream's first element: both sums start afresh).
* D: ``S = (S >> k) + p``, S as two rows (:func:`ahasd.hw.carry_save.shifted_rows`: one
  carry-save level, the loop of S), beside ``nd * p`` as rows.
* E: ``k * (S >> k) + (nd * p >> 8)`` as rows; E2, E3: that sum as a word (segment carries
  compared, then the segments added side by side).
* F: ``U = (U >> k) + k * (S >> k) + nd * p``, U as two rows (the loop of U, two stages after S's).

After the element with ``last``: S and U resolved in segments, then the carry-save division
``U / S`` (:class:`ahasd.hw.carry_save.CarrySaveDivider`, 22 quotient bits after a check cycle; a
quotient that saturates is found there, and then no division runs) beside ``log2 S`` a step per
cycle (leading one, mantissa, table, interpolation), then ``H = (log2 S + U/S) * ln 2`` (a sum in
segments, a product as rows, its resolution, the clamp) on ``o_stream``, 42 cycles after the
cycle that takes ``last``. The input is held off (``ready`` low) from the ``last`` element until
the result has been taken.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.carry_save import (
    CarrySaveDivider,
    compared_sum,
    csa,
    csa_tree,
    low_mask,
    segment_carries,
    segment_latency,
    segmented_sum,
    shifted_rows,
)
from ahasd.hw.construction import rejecting_construction
from ahasd.spec.entropy import (
    EXP2_LUT,
    LN2_Q16,
    LOG2_LUT,
    LOG2E_Q15,
    LOG_INDEX,
    LOG_INTERP,
    OUTPUT,
    P_FRAC,
    Q_BITS,
    Q_FRAC,
    Y_FRAC,
    EntropyConfig,
)

__all__ = ["EntropyUnit", "logit_layout"]


def logit_layout(logit_width):
    """Payload of the logit stream: the logit and the end-of-stream flag."""
    return data.StructLayout({"logit": signed(logit_width), "last": 1})


class EntropyUnit(wiring.Component):
    """Streaming entropy of a logit vector (online max, one pass).

    Parameters
    ----------
    logit_width, logit_frac, max_vocab : int
        See :class:`ahasd.spec.entropy.EntropyConfig` (defaults Q8.8 logits, 65535 long streams).

    Ports
    -----
    i_stream : in stream of {logit, last}
        The logits of one token's distribution; ``last`` on the final one.
    o_stream : out stream of unsigned(16)
        Entropy in nats, UQ4.12, saturating at 65535.
    error : out
        Sticky: a stream was longer than ``max_vocab`` (its result is not meaningful).
    """

    def __init__(self, *, logit_width=16, logit_frac=8, max_vocab=65535):
        with rejecting_construction(self):
            self.cfg = EntropyConfig(logit_width=logit_width, logit_frac=logit_frac,
                                     max_vocab=max_vocab)
        super().__init__({
            "i_stream": In(stream.Signature(logit_layout(logit_width))),
            "o_stream": Out(stream.Signature(unsigned(OUTPUT.width))),
            "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        cfg = self.cfg
        yw = cfg.y_width
        ndw = yw + 1                  # nd = M - y >= 0
        sw = cfg.s_width
        uw = sw + ndw - Y_FRAC + 1
        iw = yw - Y_FRAC + 1          # integer parts: ceil(y) and the running max M, signed
        kw = uw.bit_length()          # k clamped to 2**kw - 1 >= uw: every shifted term is zero
        sh = cfg.y_shift
        pw = yw + sh                  # the product z * LOG2E_Q15

        m.submodules.exp2 = exp2 = memory.Memory(shape=unsigned(P_FRAC + 1), depth=2**Y_FRAC,
                                                 init=EXP2_LUT)
        exp_rd = exp2.read_port()
        log_words = [LOG2_LUT[i] | ((LOG2_LUT[i + 1] - LOG2_LUT[i]) << 16)
                     for i in range(2**LOG_INDEX)]
        m.submodules.log2 = log2 = memory.Memory(shape=unsigned(26), depth=2**LOG_INDEX,
                                                 init=log_words)
        log_rd = log2.read_port()

        # ---- input and stage A1: z * LOG2E_Q15 as two rows ----------------------------------
        hold = Signal()      # from the `last` element until the result is taken
        count = Signal(range(cfg.max_vocab + 1))
        m.d.comb += self.i_stream.ready.eq(~hold)
        take = Signal()
        m.d.comb += take.eq(self.i_stream.valid & self.i_stream.ready)
        logit = self.i_stream.payload.logit
        a_valid, a_last = Signal(name="a_valid"), Signal(name="a_last")
        a_s, a_c = Signal(pw, name="a_s"), Signal(pw, name="a_c")
        rows = csa_tree(m, [logit << j for j in range(16) if LOG2E_Q15 >> j & 1], pw)
        m.d.sync += [a_valid.eq(take), a_last.eq(self.i_stream.payload.last),
                     a_s.eq(rows[0]), a_c.eq(rows[1])]
        with m.If(take):
            with m.If(self.i_stream.payload.last):
                m.d.sync += [hold.eq(1), count.eq(0)]
            with m.Elif(count == cfg.max_vocab):
                m.d.sync += self.error.eq(1)
            with m.Else():
                m.d.sync += count.eq(count + 1)
            with m.If(self.i_stream.payload.last & (count == cfg.max_vocab)):
                m.d.sync += self.error.eq(1)

        # ---- stage A2: y = (z * LOG2E_Q15) >> shift, the carry into bit `shift` compared ----
        y_s, y_c, y_carry = shifted_rows(a_s, a_c, sh)
        a2_valid, a2_last = Signal(name="a2_valid"), Signal(name="a2_last")
        a2_y = Signal(signed(yw))
        m.d.sync += [a2_valid.eq(a_valid), a2_last.eq(a_last),
                     a2_y.eq(y_s[:yw] + y_c[:yw] + y_carry)]

        # ---- stage A3: ceil(y) (an integer) and the fraction of nd = M - y -------------------
        a3_valid, a3_last = Signal(name="a3_valid"), Signal(name="a3_last")
        a3_c = Signal(signed(iw))     # ceil(y / 2**Y_FRAC)
        a3_ndf = Signal(Y_FRAC)       # nd mod 1 = -y mod 1: it does not depend on M
        m.d.sync += [a3_valid.eq(a2_valid), a3_last.eq(a2_last),
                     a3_c.eq((a2_y >> Y_FRAC) + (a2_y[:Y_FRAC] != 0)),
                     a3_ndf.eq(-a2_y)]
        # The 2**-x table is read with nd's fraction as A3 forms it; its word is registered
        # in B (a block RAM's read data is slow on an FPGA: no logic after it in one cycle).
        m.d.comb += [exp_rd.addr.eq(-a2_y), exp_rd.en.eq(1)]

        # ---- stage B: running max M (integer), k and the integer part of nd ------------------
        # Both differences beside the comparison: k = c - M when M grows, else nd's integer
        # part is M - c (nd = M - y and ceil(y) = c).
        big_m = Signal(signed(iw))
        first = Signal(init=1)
        grow = Signal()
        m.d.comb += grow.eq(first | (a3_c > big_m))
        with m.If(a3_valid):
            m.d.sync += first.eq(a3_last)
            with m.If(grow):
                m.d.sync += big_m.eq(a3_c)
        b_valid, b_last, b_first = (Signal(name="b_valid"), Signal(name="b_last"),
                                    Signal(name="b_first"))
        b_k = Signal(ndw - Y_FRAC)
        b_ndi = Signal(ndw - Y_FRAC)
        b_ndf = Signal(Y_FRAC)
        b_exp = Signal(P_FRAC + 1)
        m.d.sync += [b_valid.eq(a3_valid), b_last.eq(a3_last), b_first.eq(first),
                     b_k.eq(Mux(grow & ~first, a3_c - big_m, 0)),
                     b_ndi.eq(Mux(grow, 0, big_m - a3_c)), b_ndf.eq(a3_ndf), b_exp.eq(exp_rd.data)]

        # ---- stage C: p = 2**-nd; k clamped --------------------------------------------------
        # At a stream's first element k is the largest (2**kw - 1 > uw) and the mask empty:
        # S >> k, U >> k and their carries are zero, so the sums start afresh without a
        # multiplexer in their loops (and k * (S >> k) is zero too).
        c_valid, c_last, c_first = (Signal(name="c_valid"), Signal(name="c_last"),
                                    Signal(name="c_first"))
        c_k = Signal(kw)
        c_p = Signal(P_FRAC + 1)
        ndp = 13                      # bits of nd where p != 0 (nd < (P_FRAC + 1) * 2**Y_FRAC)
        c_nd = Signal(ndp)
        c_mask = Signal(sw)           # the low k bits, for the carry out of them in D
        m.d.sync += [c_valid.eq(b_valid), c_last.eq(b_last), c_first.eq(b_first),
                     c_k.eq(Mux(b_first | (b_k >= 2**kw), 2**kw - 1, b_k)),
                     c_p.eq(Mux(b_ndi <= P_FRAC, b_exp >> b_ndi, 0)),
                     c_nd.eq(Cat(b_ndf, b_ndi)),
                     c_mask.eq(Mux(b_first, 0, low_mask(b_k, sw)))]

        # ---- stage D: S = (S >> k) + p, the loop of S (carry-save rows); nd * p as rows ------
        s_s, s_c = Signal(sw, name="s_s"), Signal(sw, name="s_c")     # S = s_s + s_c
        sk_a, sk_b, sk_bit = shifted_rows(s_s, s_c, c_k, c_mask)
        ns_s, ns_c = csa(sk_a, sk_b, c_p, sw)
        with m.If(c_valid):
            m.d.sync += [s_s.eq(ns_s), s_c.eq(Cat(sk_bit, ns_c[1:]))]
        npw = ndp + P_FRAC + 1
        np_rows = csa_tree(m, [Mux(c_nd[j], c_p << j, 0) for j in range(ndp)], npw)
        d_valid, d_last, d_first = (Signal(name="d_valid"), Signal(name="d_last"),
                                    Signal(name="d_first"))
        d_k = Signal(kw)
        # S >> k as two rows and a bit
        d_ta, d_tb = Signal(sw, name="d_ta"), Signal(sw, name="d_tb")
        d_tbit = Signal()
        d_np_s, d_np_c = Signal(npw, name="d_np_s"), Signal(npw, name="d_np_c")     # nd * p
        m.d.sync += [d_valid.eq(c_valid), d_last.eq(c_last), d_first.eq(c_first), d_k.eq(c_k),
                     d_ta.eq(sk_a), d_tb.eq(sk_b), d_tbit.eq(sk_bit),
                     d_np_s.eq(np_rows[0]), d_np_c.eq(np_rows[1])]

        # ---- stage E: k * (S >> k) + (nd * p >> Y_FRAC) as two rows --------------------------
        np_a, np_b, np_bit = shifted_rows(d_np_s, d_np_c, Y_FRAC)
        terms = [Mux(d_k[j], t << j, 0) for j in range(kw) for t in (d_ta, d_tb)]
        terms += [Mux(d_tbit, d_k, 0), np_a, np_b, np_bit]
        e_rows = csa_tree(m, terms, uw)
        e_valid, e_last = Signal(name="e_valid"), Signal(name="e_last")
        e_k = Signal(kw)
        e_s, e_c = Signal(uw, name="e_s"), Signal(uw, name="e_c")
        e_mask = Signal(uw)           # the low k bits, for the carry out of them in F
        m.d.sync += [e_valid.eq(d_valid), e_last.eq(d_last), e_k.eq(d_k),
                     e_s.eq(e_rows[0]), e_c.eq(e_rows[1]), e_mask.eq(Mux(d_first, 0, low_mask(d_k, uw)))]

        # ---- stages E2, E3: that sum as a word (the carries into its segments compared in
        # E2, the segments added side by side in E3) -----------------------------------------
        e2_valid, e2_last = Signal(name="e2_valid"), Signal(name="e2_last")
        e2_k = Signal(kw)
        e2_mask = Signal(uw)
        e2_s, e2_c = Signal(uw, name="e2_s"), Signal(uw, name="e2_c")
        e2_carries = Signal(len(segment_carries(e_s, e_c, uw)))
        m.d.sync += [e2_valid.eq(e_valid), e2_last.eq(e_last), e2_k.eq(e_k), e2_mask.eq(e_mask),
                     e2_s.eq(e_s), e2_c.eq(e_c), e2_carries.eq(segment_carries(e_s, e_c, uw))]
        e3_valid, e3_last = Signal(name="e3_valid"), Signal(name="e3_last")
        e3_k = Signal(kw)
        e3_mask = Signal(uw)
        e3_sum = Signal(uw)
        m.d.sync += [e3_valid.eq(e2_valid), e3_last.eq(e2_last), e3_k.eq(e2_k),
                     e3_mask.eq(e2_mask), e3_sum.eq(compared_sum(e2_s, e2_c, uw, e2_carries))]

        # ---- stage F: U = (U >> k) + k * (S >> k) + nd * p, the loop of U (rows) -------------
        u_s, u_c = Signal(uw, name="u_s"), Signal(uw, name="u_c")     # U = u_s + u_c
        uk_a, uk_b, uk_bit = shifted_rows(u_s, u_c, e3_k, e3_mask)
        nu_s, nu_c = csa(uk_a, uk_b, e3_sum, uw)
        fin_start = Signal()
        with m.If(e3_valid):
            # The carry out of U's low k bits in the carry row's free bit 0 (no logic after
            # the comparison).
            m.d.sync += [u_s.eq(nu_s), u_c.eq(Cat(uk_bit, nu_c[1:]))]
            m.d.comb += fin_start.eq(e3_last)

        # ---- finaliser: S and U resolved, log2 S, U / S, H -----------------------------------
        s_sum = segmented_sum(m, s_s, s_c, sw, name="s")
        u_sum = segmented_sum(m, u_s, u_c, uw, name="u")
        s_word = Signal(sw)
        wait = Signal(range(max(segment_latency(uw), 3) + 1))
        e = leading_one(m, s_word)
        lz = Signal(range(sw))        # leading zeros of S
        exponent = Signal(signed(8))
        frac = Signal(LOG_INDEX + LOG_INTERP)
        m.d.comb += [log_rd.addr.eq(frac[LOG_INTERP:]), log_rd.en.eq(1)]

        # The carry-save divider, saturating in a check cycle: U / S in Q_FRAC fraction bits.
        m.submodules.divider = div = CarrySaveDivider(dividend_width=uw + Q_FRAC,
                                                      divisor_width=sw, quotient_bits=Q_BITS,
                                                      check_cycle=True)
        m.d.comb += [div.dividend.eq(u_sum << Q_FRAC), div.divisor.eq(s_sum)]
        lw_ = Q_FRAC + LOG_INTERP + 1
        # lo + delta * interp, 2**LOG_INTERP times, as rows
        l_s, l_c = Signal(lw_, name="l_s"), Signal(lw_, name="l_c")
        mant = Signal(Q_FRAC + 1)                 # log2 S = (exponent << Q_FRAC) + mant
        log2_s = Signal(signed(34))
        # H_bits = log2 S + U / S, resolved in segments; if it is >= 2**21, H saturates
        # (2**21 * LN2_Q16 >> 20 > 65535), else H = (H_bits * LN2_Q16 + 2**19) >> 20.
        quotient = Signal(34)
        m.d.comb += quotient.eq(div.quotient)
        hb_sum = segmented_sum(m, log2_s, quotient, 34, name="hb")
        hb_neg, hb_big = Signal(name="hb_neg"), Signal(name="hb_big")
        hb = Signal(21)
        hw_ = len(hb) + 16 + 1
        h_s, h_c = Signal(hw_, name="h_s"), Signal(hw_, name="h_c")
        h_sum = segmented_sum(m, h_s, h_c, hw_, name="h")
        result = Signal(OUTPUT.width)
        # The finaliser's step terms (each registered in the state named):
        # INTERP: lo + delta * interp, 2**LOG_INTERP times, as rows;
        log_word = Signal(len(log_rd.data))     # the table's word, registered in READ
        lo = log_word[:16]
        delta = log_word[16:]
        interp = frac[:LOG_INTERP]
        l_rows = csa_tree(m, [lo << LOG_INTERP]
                          + [Mux(interp[j], delta << j, 0) for j in range(LOG_INTERP)], lw_)
        # MANT: its fraction bits dropped (the carry out of them a comparison);
        ma, mb, mbit = shifted_rows(l_s, l_c, LOG_INTERP)
        # SCALE: H_bits * LN2_Q16 + 2**19 as rows.
        h_rows = csa_tree(m, [hb << j for j in range(16) if LN2_Q16 >> j & 1] + [1 << 19], hw_)
        with m.FSM():
            with m.State("IDLE"):
                with m.If(fin_start):
                    m.d.sync += wait.eq(segment_latency(uw) - 1)
                    m.next = "RESOLVE"
            with m.State("RESOLVE"):
                # The rows of S and U are final; their segments resolve.
                m.d.sync += wait.eq(wait - 1)
                with m.If(wait == 0):
                    m.next = "START"
            with m.State("START"):
                m.d.comb += div.start.eq(1)
                m.d.sync += s_word.eq(s_sum)
                m.next = "LOG"
            with m.State("LOG"):
                # S's leading one (a tree).
                m.d.sync += [lz.eq(sw - 1 - e), exponent.eq(e - P_FRAC)]
                m.next = "NORM"
            with m.State("NORM"):
                # The mantissa below the leading one: table index and interpolation bits.
                norm = (s_word << lz)[:sw]
                m.d.sync += frac.eq(norm[sw - 1 - LOG_INDEX - LOG_INTERP:sw - 1])
                m.next = "LUT"
            with m.State("LUT"):
                # The table reads frac's index this cycle.
                m.next = "READ"
            with m.State("READ"):
                m.d.sync += log_word.eq(log_rd.data)
                m.next = "INTERP"
            with m.State("INTERP"):
                m.d.sync += [l_s.eq(l_rows[0]), l_c.eq(l_rows[1])]
                m.next = "MANT"
            with m.State("MANT"):
                m.d.sync += mant.eq(ma[:Q_FRAC + 1] + mb[:Q_FRAC + 1] + mbit)
                m.next = "LOG2"
            with m.State("LOG2"):
                m.d.sync += log2_s.eq(Cat(mant[:Q_FRAC], exponent + mant[Q_FRAC]).as_signed())
                m.next = "DIV"
            with m.State("DIV"):
                # When the division is done, its quotient and log2 S go into hb_sum's
                # segments (one cycle).
                with m.If(~div.busy):
                    m.next = "HBITS"
            with m.State("HBITS"):
                m.d.sync += [hb_neg.eq(hb_sum[33]), hb_big.eq(hb_sum[len(hb):33] != 0),
                             hb.eq(hb_sum)]
                m.next = "SCALE"
            with m.State("SCALE"):
                m.d.sync += [h_s.eq(h_rows[0]), h_c.eq(h_rows[1]),
                             wait.eq(segment_latency(hw_) - 1)]
                m.next = "ROUND"
            with m.State("ROUND"):
                m.d.sync += wait.eq(wait - 1)
                with m.If(wait == 0):
                    m.next = "CLAMP"
            with m.State("CLAMP"):
                h = h_sum[20:]
                m.d.sync += result.eq(Mux(hb_neg, 0, Mux(hb_big | (h > OUTPUT.max_code),
                                                         OUTPUT.max_code, h)))
                m.next = "OUT"
            with m.State("OUT"):
                m.d.comb += [self.o_stream.valid.eq(1), self.o_stream.payload.eq(result)]
                with m.If(self.o_stream.ready):
                    m.d.sync += hold.eq(0)
                    m.next = "IDLE"
        return m


def leading_one(m, value):
    """The position of the highest set bit of ``value`` (0 if none), as a tree of multiplexers
    (pairs of halves: the upper half's position if it has a set bit, else the lower's)."""
    nodes = [(value[i], Const(0, 0)) for i in range(len(value))]
    while len(nodes) > 1:
        if len(nodes) % 2:
            nodes.append((Const(0, 1), Const(0, len(nodes[0][1]))))
        nodes = [(lo[0] | hi[0], Mux(hi[0], Cat(hi[1], Const(1, 1)), Cat(lo[1], Const(0, 1))))
                 for lo, hi in zip(nodes[0::2], nodes[1::2])]
    pos = Signal(max(1, len(nodes[0][1])), name="leading_one")
    m.d.comb += pos.eq(nodes[0][1])
    return pos
