"""Streaming entropy unit: one pass over a logit stream -> entropy in nats, UQ4.12, for EDC.

Bit-exact with :func:`ahasd.sim.blocks.entropy.entropy_fx`; see that module for the arithmetic and the
error bound (<= 0.02 nats against float64 for vocabularies up to 64k; tested).

Pipeline (one logit per cycle):

* A: ``y = (z * LOG2E_Q15) >> shift`` (base-2 logit, 8 fraction bits).
* B: running integer max ``M = ceil(max y)``; ``k`` = growth of M (a rescale by ``2**-k``),
  ``nd = M - y``; the fraction of ``nd`` addresses the ``2**-x`` table.
* C: ``p = table >> floor(nd)`` and ``nd * p``.
* D: ``S = (S >> k) + p``, ``U = (U >> k) + k*(S >> k) + nd*p`` (the only loop-carried stage).

After the element with ``last``: leading-one detection and the ``log2`` table for ``log2 S``, then
a 22-cycle restoring division ``U / S`` (:class:`ahasd.hw.divider.Divider`; a quotient that
saturates is found in its first cycle, and then no division runs), then
``H = (log2 S + U/S) * ln 2`` on ``o_stream``. The input is held off (``ready`` low) from the ``last`` element until the result has been taken, about
30 cycles per stream.
"""

from amaranth.hdl import Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.divider import Divider
from ahasd.spec.entropy import (EXP2_LUT, LN2_Q16, LOG2_LUT, LOG2E_Q15, LOG_INDEX, LOG_INTERP,
                               P_FRAC, Q_BITS, Q_FRAC, Y_FRAC, EntropyConfig)

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
            "o_stream": Out(stream.Signature(unsigned(16))),
            "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        cfg = self.cfg
        yw = cfg.y_width
        ndw = yw + 1                  # nd = M - y >= 0
        sw = cfg.s_width
        uw = sw + ndw - Y_FRAC + 1

        m.submodules.exp2 = exp2 = memory.Memory(shape=unsigned(P_FRAC + 1), depth=2**Y_FRAC,
                                                 init=EXP2_LUT)
        exp_rd = exp2.read_port()
        log_words = [LOG2_LUT[i] | ((LOG2_LUT[i + 1] - LOG2_LUT[i]) << 16)
                     for i in range(2**LOG_INDEX)]
        m.submodules.log2 = log2 = memory.Memory(shape=unsigned(26), depth=2**LOG_INDEX,
                                                 init=log_words)
        log_rd = log2.read_port()

        # ---- input and stage A ----------------------------------------------------------------
        hold = Signal()      # from the `last` element until the result is taken
        count = Signal(range(cfg.max_vocab + 1))
        m.d.comb += self.i_stream.ready.eq(~hold)
        take = Signal()
        m.d.comb += take.eq(self.i_stream.valid & self.i_stream.ready)
        a_valid, a_last = Signal(), Signal()
        a_y = Signal(signed(yw))
        m.d.sync += [a_valid.eq(take), a_last.eq(self.i_stream.payload.last),
                     a_y.eq((self.i_stream.payload.logit * LOG2E_Q15) >> cfg.y_shift)]
        with m.If(take):
            with m.If(self.i_stream.payload.last):
                m.d.sync += [hold.eq(1), count.eq(0)]
            with m.Elif(count == cfg.max_vocab):
                m.d.sync += self.error.eq(1)
            with m.Else():
                m.d.sync += count.eq(count + 1)
            with m.If(self.i_stream.payload.last & (count == cfg.max_vocab)):
                m.d.sync += self.error.eq(1)

        # ---- stage B: running max -----------------------------------------------------------
        big_m = Signal(signed(yw + 1))
        first = Signal(init=1)
        c = Signal(signed(yw + 1))
        m_new = Signal(signed(yw + 1))
        k_new = Signal(ndw)
        nd_new = Signal(ndw)
        m.d.comb += c.eq(((a_y + (2**Y_FRAC - 1)) >> Y_FRAC) << Y_FRAC)
        with m.If(first):
            m.d.comb += [m_new.eq(c), k_new.eq(0)]
        with m.Elif(c > big_m):
            m.d.comb += [m_new.eq(c), k_new.eq((c - big_m) >> Y_FRAC)]
        with m.Else():
            m.d.comb += [m_new.eq(big_m), k_new.eq(0)]
        m.d.comb += nd_new.eq(m_new - a_y)
        with m.If(a_valid):
            m.d.sync += [big_m.eq(m_new), first.eq(a_last)]
        b_valid, b_last, b_first = Signal(), Signal(), Signal()
        b_k = Signal(ndw)
        b_nd = Signal(ndw)
        m.d.sync += [b_valid.eq(a_valid), b_last.eq(a_last), b_first.eq(first), b_k.eq(k_new),
                     b_nd.eq(nd_new)]
        m.d.comb += [exp_rd.addr.eq(nd_new[:Y_FRAC]), exp_rd.en.eq(1)]

        # ---- stage C: p = 2**-nd and nd * p (outside the accumulation loop) ------------------
        ip = Signal(ndw - Y_FRAC)
        p = Signal(P_FRAC + 1)
        m.d.comb += [ip.eq(b_nd[Y_FRAC:]),
                     p.eq(Mux(ip <= P_FRAC, exp_rd.data >> ip, 0))]
        c_valid, c_last, c_first = Signal(), Signal(), Signal()
        c_k = Signal(ndw)
        c_p = Signal(P_FRAC + 1)
        c_np = Signal(ndw + P_FRAC + 1 - Y_FRAC)
        m.d.sync += [c_valid.eq(b_valid), c_last.eq(b_last), c_first.eq(b_first), c_k.eq(b_k),
                     c_p.eq(p), c_np.eq((b_nd * p) >> Y_FRAC)]

        # ---- stage D: accumulate (the only loop: rescale by 2**-k and add) --------------------
        s_acc = Signal(sw)
        u_acc = Signal(uw)
        s_old = Signal(sw)
        u_old = Signal(uw)
        m.d.comb += [s_old.eq(Mux(c_first, 0, s_acc)), u_old.eq(Mux(c_first, 0, u_acc))]
        s_k = Signal(sw)
        m.d.comb += s_k.eq(s_old >> c_k)
        s_next = Signal(sw)
        u_next = Signal(uw)
        m.d.comb += [
            s_next.eq(s_k + c_p),
            u_next.eq((u_old >> c_k) + c_k * s_k + c_np),
        ]
        fin_start = Signal()
        with m.If(c_valid):
            m.d.sync += [s_acc.eq(s_next), u_acc.eq(u_next)]
            m.d.comb += fin_start.eq(c_last)

        # ---- finaliser: log2 S, U / S, H -------------------------------------------------------
        e = Signal(range(sw))
        for bit in range(sw):
            with m.If(s_acc[bit]):
                m.d.comb += e.eq(bit)
        norm = Signal(sw)
        lz = Signal(range(sw))       # leading zeros of S, registered in LOG
        m.d.comb += norm.eq(s_acc << lz)
        frac = norm[sw - 1 - LOG_INDEX - LOG_INTERP:sw - 1]
        interp = Signal(LOG_INTERP)
        exponent = Signal(signed(8))
        m.d.comb += [log_rd.addr.eq(frac[LOG_INTERP:]), log_rd.en.eq(1)]

        # The shared divider, saturating in a check cycle: U / S in Q_FRAC fraction bits.
        m.submodules.divider = div = Divider(dividend_width=uw + Q_FRAC, divisor_width=sw,
                                             quotient_bits=Q_BITS, check_cycle=True)
        m.d.comb += [div.dividend.eq(u_acc << Q_FRAC), div.divisor.eq(s_acc)]
        log2_s = Signal(signed(32))
        h_bits = Signal(signed(34))
        result = Signal(16)
        with m.FSM():
            with m.State("IDLE"):
                with m.If(fin_start):
                    m.next = "LOG"
            with m.State("LOG"):
                # s_acc is final: find its leading one.
                m.d.sync += [lz.eq(sw - 1 - e), exponent.eq(e - P_FRAC)]
                m.next = "NORM"
            with m.State("NORM"):
                # The mantissa (S shifted by the registered leading-zero count) addresses the
                # log table this cycle; the divider starts (its check cycle is LUT's).
                m.d.sync += interp.eq(frac[:LOG_INTERP])
                m.d.comb += div.start.eq(1)
                m.next = "LUT"
            with m.State("LUT"):
                lo = log_rd.data[:16]
                delta = log_rd.data[16:]
                m.d.sync += log2_s.eq((exponent << Q_FRAC) + lo + ((delta * interp) >> LOG_INTERP))
                m.next = "DIV"
            with m.State("DIV"):
                with m.If(~div.busy):
                    m.d.sync += h_bits.eq(log2_s + div.quotient)
                    m.next = "SCALE"
            with m.State("SCALE"):
                h = Signal(signed(52))
                m.d.comb += h.eq((Mux(h_bits < 0, 0, h_bits) * LN2_Q16 + (1 << 19)) >> 20)
                m.d.sync += result.eq(Mux(h > 65535, 65535, h))
                m.next = "OUT"
            with m.State("OUT"):
                m.d.comb += [self.o_stream.valid.eq(1), self.o_stream.payload.eq(result)]
                with m.If(self.o_stream.ready):
                    m.d.sync += hold.eq(0)
                    m.next = "IDLE"
        return m
