"""EDC: entropy-history-aware drafting control (docs/architecture.md 4.1), variant ``committed``.

The golden model is :class:`ahasd.sim.blocks.edc.EDC`; this block matches it decision for decision,
including the same-cycle rule (a verify is applied before a draft in the same cycle).
"""

from amaranth import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.counters import EventCounter
from ahasd.spec.edc import ENTROPY_BITS, EDCParams
from ahasd.spec.params import COUNTER_BITS, check_int

__all__ = ["EDC", "decision_layout"]


def decision_layout(index_bits):
    """Payload of the EDC ``decision`` stream: ``continue`` (keep drafting ahead) and ``index``."""
    return data.StructLayout({"continue": 1, "index": index_bits})


class EDC(wiring.Component):
    """Entropy-history-aware drafting control.

    Parameters (keyword-only, validated by :class:`ahasd.spec.edc.EDCParams`)
    ---------------------------------------------------------------------------
    history_depth, bucket_bits, llr_bits, counter_bits, counter_reset, fifo_depth_log2, h_max_nats
    stats_bits : int
        Width of the wrapping statistics counters (default
        :data:`ahasd.spec.params.COUNTER_BITS`; not an EDCParams field: the golden model counts
        in Python integers).

    Ports
    -----
    draft : In(stream.Signature(unsigned(16), always_ready=True))
        A drafted batch; the payload is its mean entropy, UQ4.12 nats. Accepted every cycle.
    verify : In(stream.Signature(unsigned(1), always_ready=True))
        The oldest unverified batch was verified; the payload is 1 when it was fully accepted.
        Accepted every cycle; ignored (no state change) when no batch is pending.
    decision : Out(stream.Signature(decision_layout, always_ready=True))
        One cycle after each ``draft``: ``continue`` (keep drafting ahead) and ``index`` (the PHT
        index), see :attr:`decision_layout`.
    llr : Out(llr_bits)
        Number of unverified look-ahead batches (saturating).
    pending : Out(fifo_depth_log2 + 1)
        Entries in the FIFO of pending (index, bucket) pairs.
    decisions, suppressed, verifications, squashes, fifo_drops : Out(stats_bits)
        Wrapping statistics counters; ``suppressed`` counts *stop* decisions when they appear on
        ``decision_*``, the others count at the input event.

    Timing
    ------
    Input to decision is one cycle: the draft's PHT index is registered (it is the decision's
    ``index``) and the lookup reads the PHT asynchronously at that register in the next cycle,
    after the same-cycle PHT update of a verify was written at the clock edge. So a verify and a
    draft in the same cycle behave as "verify, then draft" (the order of the golden model's
    :meth:`~ahasd.sim.blocks.edc.EDC.step`), as with a transparent synchronous port, but without
    the forwarding multiplexer such a port needs on an FPGA's LUT RAM. The verify's
    read-modify-write uses a second asynchronous read port of the PHT, so back-to-back verifies
    to the same entry need no forwarding either.

    ``verify.valid`` and ``draft.valid`` arrive late (behind the queues' handshakes in the
    controller): the next state (history, LLR, head, count, head entry, decision index) is
    computed for all four combinations of them and they only select between the results; the
    pending FIFO's write address and data are the drafting case's (written only when a draft
    is accepted), so only the write enable depends on ``draft.valid``.
    """

    def __init__(self, *, history_depth=8, bucket_bits=3, llr_bits=3, counter_bits=2,
                 counter_reset=None, fifo_depth_log2=3, h_max_nats=10.0,
                 stats_bits=COUNTER_BITS):
        with rejecting_construction(self):
            check_int("stats_bits", stats_bits, 1, 64)
            self.params = p = EDCParams(
                history_depth=history_depth, bucket_bits=bucket_bits, llr_bits=llr_bits,
                counter_bits=counter_bits, counter_reset=counter_reset,
                fifo_depth_log2=fifo_depth_log2, h_max_nats=h_max_nats)
        #: Payload of ``decision`` (:func:`decision_layout`).
        self.decision_layout = decision_layout(p.index_bits)
        super().__init__({
            "draft": In(stream.Signature(unsigned(ENTROPY_BITS), always_ready=True)),
            "verify": In(stream.Signature(unsigned(1), always_ready=True)),
            "decision": Out(stream.Signature(self.decision_layout, always_ready=True)),
            "llr": Out(p.llr_bits),
            "pending": Out(p.fifo_depth_log2 + 1),
            "decisions": Out(stats_bits),
            "suppressed": Out(stats_bits),
            "verifications": Out(stats_bits),
            "squashes": Out(stats_bits),
            "fifo_drops": Out(stats_bits),
        })

    def _shift_in(self, history, bucket):
        return [bucket] + history[:-1]

    def _index(self, history, llr):
        p = self.params
        half = p.history_depth // 2
        avg_low = (sum(history[:half]) >> p.half_shift)[:p.bucket_bits]
        avg_high = (sum(history[half:]) >> p.half_shift)[:p.bucket_bits]
        return Cat(llr, avg_low, avg_high)

    def elaborate(self, platform):
        p = self.params
        m = Module()

        leht = [Signal(p.bucket_bits, name=f"leht{i}") for i in range(p.history_depth)]
        lceht = [Signal(p.bucket_bits, name=f"lceht{i}") for i in range(p.history_depth)]
        llr = Signal(p.llr_bits)
        head = Signal(p.fifo_depth_log2)
        count = Signal(p.fifo_depth_log2 + 1)

        # PHT: one table of saturating counters.
        m.submodules.pht = pht = Memory(shape=p.counter_bits, depth=p.pht_entries,
                                        init=[p.counter_reset] * p.pht_entries)
        pht_wr = pht.write_port()
        pht_train = pht.read_port(domain="comb")
        # The lookup reads asynchronously at the registered index (the decision's own): the
        # verify of the draft's cycle was written at the clock edge, so the read sees it, as a
        # transparent synchronous port would, without a forwarding multiplexer behind it.
        pht_lookup = pht.read_port(domain="comb")

        # FIFO of (index, bucket) of the batches waiting for verification.
        m.submodules.fifo = fifo = Memory(shape=p.index_bits + p.bucket_bits,
                                          depth=p.fifo_depth, init=[])
        fifo_wr = fifo.write_port()
        # The entries at `head` and `head + 1`, read from registers' addresses: a verify or a
        # drop (never both: a verify leaves room) moves the head by one and only selects.
        fifo_at_head = fifo.read_port(domain="comb")
        fifo_after_head = fifo.read_port(domain="comb")
        # The oldest entry, kept in a register (the FIFO entry at `head` whenever count != 0), so
        # that a verify's read-modify-write of the PHT does not start behind a FIFO read.
        head_entry = Signal(p.index_bits + p.bucket_bits)

        # --- verify phase (first) ---
        verify_full = self.verify.payload
        verify = Signal()
        head_index = Signal(p.index_bits)
        head_bucket = Signal(p.bucket_bits)
        m.d.comb += [
            verify.eq(self.verify.valid & (count != 0)),
            Cat(head_index, head_bucket).eq(head_entry),
            pht_train.addr.eq(head_index),
            pht_wr.addr.eq(head_index),
            pht_wr.en.eq(verify),
        ]
        counter = pht_train.data
        with m.If(verify_full):
            m.d.comb += pht_wr.data.eq(Mux(counter == p.counter_max, counter, counter + 1))
        with m.Else():
            m.d.comb += pht_wr.data.eq(Mux(counter == 0, counter, counter - 1))

        bucket = Signal(p.bucket_bits)
        m.d.comb += bucket.eq(sum(self.draft.payload >= t for t in p.thresholds))

        def phases(verify, draft, suffix):
            """The cycle's next state for a given ``verify`` and ``draft``: the verify phase,
            then the draft phase on the state after it."""
            accept = verify & verify_full
            reject = verify & ~verify_full
            leht1 = [Mux(reject, c, s) for s, c in zip(leht, lceht)]
            lceht1 = [Mux(accept, n, c) for c, n in zip(lceht, self._shift_in(lceht, head_bucket))]
            llr1 = Mux(accept, Mux(llr == 0, 0, llr - 1), Mux(reject, 0, llr))[:p.llr_bits]
            head1 = Mux(verify, head + 1, head)[:p.fifo_depth_log2]
            count1 = Mux(accept, count - 1, Mux(reject, 0, count))[:p.fifo_depth_log2 + 1]
            leht2 = [Mux(draft, n, s) for s, n in zip(leht1, self._shift_in(leht1, bucket))]
            llr2 = Mux(draft, Mux(llr1 == p.llr_max, llr1, llr1 + 1), llr1)[:p.llr_bits]
            index = Signal(p.index_bits, name=f"index_{suffix}")
            m.d.comb += index.eq(self._index(leht2, llr2))
            full_fifo = count1 == p.fifo_depth
            drop = draft & full_fifo
            # The new head is the entry written now when the FIFO is empty after the verify,
            # else an entry already stored (a drop overwrites the old head, not the new one:
            # depth >= 2); a verify or a drop (never both: a verify leaves room) moves it by one.
            written_at_head = draft & (count1 == 0)
            return {
                "leht": Cat(*leht2), "lceht": Cat(*lceht1), "llr": llr2,
                "head": Mux(drop, head1 + 1, head1)[:p.fifo_depth_log2],
                "count": Mux(draft & ~full_fifo, count1 + 1, count1)[:p.fifo_depth_log2 + 1],
                "index": index,
                "fifo_addr": (head1 + count1)[:p.fifo_depth_log2],
                "head_entry": Mux(written_at_head, Cat(index, bucket),
                                  Mux(verify | drop, fifo_after_head.data, fifo_at_head.data)),
                "reject": reject, "drop": drop,
            }

        # `verify.valid` and `draft.valid` come late (behind the feedback queue's and the draft
        # queue's handshakes in the controller): the state after the cycle is computed for all
        # four of their values, and they only select. The FIFO's write address does not depend
        # on the draft, nor its data (the drafting case's; in a cycle without a draft nothing
        # is written): only its enable does.
        draft = self.draft.valid
        cases = {(v, d): phases(Const(0, 1) if v == 0 else count != 0, Const(d, 1),
                                f"{'verify' if v else 'idle'}_{'draft' if d else 'none'}")
                 for v in (0, 1) for d in (0, 1)}

        def select(key, d=None):
            def by_verify(d):
                return Mux(self.verify.valid, cases[1, d][key], cases[0, d][key])
            return by_verify(d) if d is not None else Mux(draft, by_verify(1), by_verify(0))

        nxt = {k: select(k) for k in cases[0, 0]}
        index = nxt["index"]
        drop, reject = nxt["drop"], nxt["reject"]
        m.d.comb += [
            pht_lookup.addr.eq(self.decision.payload.index),
            fifo_wr.addr.eq(select("fifo_addr", 1)),
            fifo_wr.data.eq(Cat(select("index", 1), bucket)),
            fifo_wr.en.eq(draft),
            fifo_at_head.addr.eq(head),
            fifo_after_head.addr.eq(head + 1),
        ]
        m.d.sync += [
            Cat(*leht).eq(nxt["leht"]),
            Cat(*lceht).eq(nxt["lceht"]),
            llr.eq(nxt["llr"]),
            head.eq(nxt["head"]),
            count.eq(nxt["count"]),
            head_entry.eq(nxt["head_entry"]),
            self.decision.valid.eq(draft),
            self.decision.payload.index.eq(index),
        ]

        # The lookup's data appears one cycle after its address, with the decision.
        cont = pht_lookup.data >= p.continue_threshold
        m.d.comb += [
            self.decision.payload["continue"].eq(self.decision.valid & cont),
            self.llr.eq(llr),
            self.pending.eq(count),
        ]
        # The statistics counters keep `count + 1` in a register (EventCounter), so an event
        # (a drop behind the FIFO's occupancy and the verify logic) only selects: no carry
        # chain follows it. The events behind a late input or a lookup are registered first
        # (`late_event`): a stop decision (behind the PHT lookup), and a verification, a squash
        # and a drop (behind `verify.valid`, the controller's feedback-queue handshake, whose
        # event would otherwise drive the counters' 64 enables). Each count still shows its event
        # from the next cycle.
        events = {"decisions": draft, "suppressed": self.decision.valid & ~cont,
                  "verifications": verify, "squashes": reject, "fifo_drops": drop}
        for name, event in events.items():
            counter = EventCounter(width=len(getattr(self, name)),
                                   late_event=name != "decisions")
            m.submodules[f"count_{name}"] = counter
            m.d.comb += [counter.event.eq(event), getattr(self, name).eq(counter.count)]
        return m
