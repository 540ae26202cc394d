"""The three AHASD task queues (docs/architecture.md 4.3) and the plain descriptor FIFO they use.

=================  ========================  =====  =========================  =========
queue              producer -> consumer      depth  clock domains              squash
=================  ========================  =====  =========================  =========
unverified-draft   PIM -> NPU                64     ``pim`` -> ``npu`` (CDC)   yes
feedback           NPU -> PIM                32     ``npu`` -> ``pim`` (CDC)   no
pre-verify         controller -> PIM         16     ``pim``                    no
=================  ========================  =====  =========================  =========

Every queue is a valid/ready stream FIFO: a full queue pushes back (``i_stream.ready`` low), and
nothing is dropped, duplicated or reordered, except the squash of the draft queue, which removes
exactly the entries described in :mod:`ahasd.hw.draft_queue`. The golden model is
:mod:`ahasd.sim.blocks.queues`.
"""

from amaranth import Module, Signal
from amaranth.hdl import DomainRenamer
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from ahasd.hw.cdc_fifo import AsyncFIFO
from ahasd.hw.construction import rejecting_construction
from ahasd.hw.descriptors import DraftDescriptor, FeedbackDescriptor, PreverifyDescriptor
from ahasd.hw.draft_queue import DraftQueue
from ahasd.spec.params import check_domain, check_power_of_two

__all__ = ["DescriptorQueue", "Queues"]


class DescriptorQueue(wiring.Component):
    """A descriptor FIFO with stream ports, across clock domains or within one.

    Parameters (keyword-only)
    -------------------------
    layout : data.Layout
        Payload layout (e.g. :data:`ahasd.hw.descriptors.FeedbackDescriptor`).
    depth : int
        Entries, a power of two >= 2.
    w_domain, r_domain : str
        Producer and consumer clock domains. Different domains give an ``AsyncFIFO`` (Gray-code
        pointers, two-flop synchronisers); the same domain gives a ``SyncFIFOBuffered``.

    Ports
    -----
    i_stream : In(stream.Signature(layout)), write domain
        Descriptors in; ``ready`` is low while the queue is full.
    o_stream : Out(stream.Signature(layout)), read domain
        Descriptors out, in push order.
    w_level, r_level : Out(ceil_log2(depth + 1))
        Fill seen from the write and the read domain (equal for a single-domain queue).
    """

    def __init__(self, *, layout, depth, w_domain="sync", r_domain="sync"):
        with rejecting_construction(self):
            check_power_of_two("depth", depth, low=2)
            check_domain("w_domain", w_domain)
            check_domain("r_domain", r_domain)
        self.layout = layout
        self.depth = depth
        self.w_domain = w_domain
        self.r_domain = r_domain
        level_bits = ceil_log2(depth + 1)
        self._level_checks = []
        super().__init__({
            "i_stream": In(stream.Signature(layout)),
            "o_stream": Out(stream.Signature(layout)),
            "w_level": Out(level_bits),
            "r_level": Out(level_bits),
        })

    def r_level_at_least(self, threshold):
        """A signal of the read domain equal to ``r_level >= threshold`` in every cycle
        (``threshold`` a value of the read domain); call before elaboration. Across domains
        :meth:`ahasd.hw.cdc_fifo.AsyncFIFO.r_level_at_least` (no comparator behind the level's
        subtraction)."""
        reached = Signal(name=f"r_level_at_least_{len(self._level_checks)}")
        self._level_checks.append((threshold, reached))
        return reached

    def elaborate(self, platform):
        m = Module()
        width = len(self.i_stream.payload.as_value())
        if self.w_domain == self.r_domain:
            fifo = DomainRenamer(self.w_domain)(SyncFIFOBuffered(width=width, depth=self.depth))
        else:
            # Two storage copies, the read data selected after them (the AsyncFIFO's
            # `fast_read`): the feedback queue's r_en is late (TVC's ready and the PIM's, on
            # ECP5 behind the empty flag and a long route), so it must reach no read address.
            fifo = AsyncFIFO(width=width, depth=self.depth, w_domain=self.w_domain,
                             r_domain=self.r_domain)
        m.submodules.fifo = fifo
        for threshold, reached in self._level_checks:
            if isinstance(fifo, AsyncFIFO):
                m.d.comb += reached.eq(fifo.r_level_at_least(threshold))
            else:
                m.d.comb += reached.eq(self.r_level >= threshold)
        m.d.comb += [
            fifo.w_data.eq(self.i_stream.payload),
            fifo.w_en.eq(self.i_stream.valid),
            self.i_stream.ready.eq(fifo.w_rdy),
            self.o_stream.payload.eq(fifo.r_data),
            self.o_stream.valid.eq(fifo.r_rdy),
            fifo.r_en.eq(self.o_stream.ready),
            self.w_level.eq(fifo.w_level),
            self.r_level.eq(fifo.r_level),
        ]
        return m


class Queues(wiring.Component):
    """All three task queues with their default depths, as one block.

    Parameters (keyword-only)
    -------------------------
    draft_depth, feedback_depth, preverify_depth : int
        Powers of two >= 2 (defaults 64, 32, 16).
    npu_domain, pim_domain : str
        Clock domain names (defaults ``"npu"``, ``"pim"``); in Verilog the clocks and resets are
        ``<domain>_clk`` and ``<domain>_rst``.

    Ports
    -----
    draft : Out(DraftQueue.signature)
        The unverified-draft queue (:class:`~ahasd.hw.draft_queue.DraftQueue`), PIM -> NPU:
        ``draft.i_stream``, ``draft.w_squash``, ``draft.w_level`` (PIM domain) and
        ``draft.o_stream``, ``draft.squash``, ``draft.squash_ready``, ``draft.r_level``,
        ``draft.discarded``, ``draft.discarding`` (NPU domain).
    feedback : Out(DescriptorQueue.signature)
        The feedback queue, NPU -> PIM: ``feedback.i_stream``, ``feedback.w_level`` (NPU),
        ``feedback.o_stream``, ``feedback.r_level`` (PIM).
    preverify : Out(DescriptorQueue.signature)
        The pre-verify queue, all in the PIM domain.
    """

    def __init__(self, *, draft_depth=64, feedback_depth=32, preverify_depth=16,
                 npu_domain="npu", pim_domain="pim"):
        with rejecting_construction(self):
            check_power_of_two("draft_depth", draft_depth, low=2)
            check_power_of_two("feedback_depth", feedback_depth, low=2)
            check_power_of_two("preverify_depth", preverify_depth, low=2)
            check_domain("npu_domain", npu_domain)
            check_domain("pim_domain", pim_domain)
            if npu_domain == pim_domain:
                raise ValueError(f"npu_domain and pim_domain must differ, both are "
                                 f"{npu_domain!r}")
        self._draft = DraftQueue(depth=draft_depth, layout=DraftDescriptor,
                                 w_domain=pim_domain, r_domain=npu_domain)
        self._feedback = DescriptorQueue(layout=FeedbackDescriptor, depth=feedback_depth,
                                         w_domain=npu_domain, r_domain=pim_domain)
        self._preverify = DescriptorQueue(layout=PreverifyDescriptor, depth=preverify_depth,
                                          w_domain=pim_domain, r_domain=pim_domain)
        super().__init__({
            "draft": Out(self._draft.signature),
            "feedback": Out(self._feedback.signature),
            "preverify": Out(self._preverify.signature),
        })

    def r_level_at_least(self, queue, threshold):
        """``r_level >= threshold`` of the ``"feedback"`` or ``"preverify"`` queue in its read
        domain, every cycle (:meth:`DescriptorQueue.r_level_at_least`); call before
        elaboration."""
        queues = {"feedback": self._feedback, "preverify": self._preverify}
        return queues[queue].r_level_at_least(threshold)

    def elaborate(self, platform):
        m = Module()
        m.submodules.draft = self._draft
        m.submodules.feedback = self._feedback
        m.submodules.preverify = self._preverify
        # Forward each queue's ports unchanged (flipped: our inputs drive the queue's inputs).
        wiring.connect(m, wiring.flipped(self.draft), self._draft)
        wiring.connect(m, wiring.flipped(self.feedback), self._feedback)
        wiring.connect(m, wiring.flipped(self.preverify), self._preverify)
        return m
