"""Mean entropy of a draft batch, from the logits of its tokens: the EDC ``draft_entropy`` input.

:class:`ahasd.hw.entropy.EntropyUnit` computes each token's entropy; this block sums them and, at
the end of the batch, divides by the token count (16-cycle restoring divider,
:class:`ahasd.hw.divider.Divider`, rounded half up), bit-exact with :func:`ahasd.sim.blocks.entropy.batch_mean_fx`.
"""

from amaranth.hdl import Module, Signal, signed, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.divider import Divider
from ahasd.hw.entropy import EntropyUnit
from ahasd.spec.params import check_int

__all__ = ["BatchEntropy", "batch_logit_layout"]


def batch_logit_layout(logit_width):
    """A logit, the end of its token's distribution (``last``) and of the batch (``batch_last``,
    only meaningful with ``last``)."""
    return data.StructLayout({"logit": signed(logit_width), "last": 1, "batch_last": 1})


class BatchEntropy(wiring.Component):
    """Per-token streaming entropy and the batch mean.

    Parameters
    ----------
    max_batch : int
        Most tokens per batch (1..256); a longer batch sets ``error``.
    logit_width, logit_frac, max_vocab : int
        Passed to :class:`ahasd.hw.entropy.EntropyUnit`.

    Ports
    -----
    i_stream : in stream of {logit, last, batch_last}
    o_stream : out stream of unsigned(16)
        Batch mean entropy, UQ4.12 nats (connect ``valid``/``payload`` to EDC's
        ``draft_valid``/``draft_entropy``).
    error : out
        Sticky: a batch longer than ``max_batch`` or a vocabulary longer than ``max_vocab``.
    """

    def __init__(self, *, max_batch=16, logit_width=16, logit_frac=8, max_vocab=65535):
        with rejecting_construction(self):
            check_int("max_batch", max_batch, 1, 256)
            self.entropy = EntropyUnit(logit_width=logit_width, logit_frac=logit_frac,
                                       max_vocab=max_vocab)
        self.max_batch = max_batch
        super().__init__({
            "i_stream": In(stream.Signature(batch_logit_layout(logit_width))),
            "o_stream": Out(stream.Signature(unsigned(16))),
            "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.entropy = ent = self.entropy
        count = Signal(range(self.max_batch + 1))
        total = Signal(16 + self.max_batch.bit_length() + 1)
        end_pending = Signal()      # the token in the entropy unit ends its batch
        too_long = Signal()

        m.d.comb += [
            ent.i_stream.valid.eq(self.i_stream.valid),
            ent.i_stream.payload.logit.eq(self.i_stream.payload.logit),
            ent.i_stream.payload.last.eq(self.i_stream.payload.last),
            self.i_stream.ready.eq(ent.i_stream.ready),
            self.error.eq(too_long | ent.error),
        ]
        with m.If(self.i_stream.valid & self.i_stream.ready & self.i_stream.payload.last):
            m.d.sync += end_pending.eq(self.i_stream.payload.batch_last)

        # The shared divider: (sum + n // 2) // n, 16 quotient bits (a mean of 16-bit values).
        m.submodules.divider = div = Divider(dividend_width=len(total) + 1,
                                             divisor_width=len(count) + 1, quotient_bits=16,
                                             round_half_up=True)
        with m.FSM():
            with m.State("SUM"):
                m.d.comb += ent.o_stream.ready.eq(1)
                with m.If(ent.o_stream.valid):
                    new_total = total + ent.o_stream.payload
                    new_count = count + 1
                    with m.If(count == self.max_batch):
                        m.d.sync += too_long.eq(1)
                    with m.If(end_pending):
                        m.d.comb += [div.start.eq(1), div.dividend.eq(new_total),
                                     div.divisor.eq(new_count)]
                        m.d.sync += [total.eq(0), count.eq(0)]
                        m.next = "DIV"
                    with m.Else():
                        m.d.sync += [total.eq(new_total), count.eq(new_count)]
            with m.State("DIV"):
                with m.If(~div.busy):
                    m.next = "OUT"
            with m.State("OUT"):
                m.d.comb += [self.o_stream.valid.eq(1), self.o_stream.payload.eq(div.quotient)]
                with m.If(self.o_stream.ready):
                    m.next = "SUM"
        return m
