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
    ``index``) and the lookup reads the PHT asynchronously at that register in the next cycle.
    A verify's PHT update is registered and written in the next cycle; both PHT reads (the
    lookup and the verify's read-modify-write) take that pending update instead of the table's
    entry when it is to the address they read. So a verify and a draft in the same cycle behave
    as "verify, then draft" (the order of the golden model's
    :meth:`~ahasd.sim.blocks.edc.EDC.step`), and back-to-back verifies to one entry see each
    other's updates; the update is register -> PHT read -> increment/saturate -> register. The
    update registers have no reset: an update decided in a (soft) reset cycle is written.

    ``verify.valid``, its payload and ``draft.valid`` arrive late (behind the queues'
    handshakes in the controller): the next state (history, LLR, head, count, head entry,
    decision index) is computed from registers for each verify outcome (none, accept, reject)
    and each draft value, and they only select between the results; the pending FIFO's write
    address and data are the drafting case's (written only when a draft is accepted), so only
    the write enable depends on ``draft.valid``. The FIFO is kept in two copies, read at
    ``head`` and at ``head + 1``.
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

        # PHT: one table of saturating counters. A verify's update is written one cycle late,
        # from registers (`pht_wq_*`): both reads take the pending update instead of the
        # table's entry when it is to the address read (`pht_pending`), so the PHT's contents
        # as seen are those of an immediate write. The registers have no reset: an update
        # decided in a reset cycle is written, as an immediate write would be.
        m.submodules.pht = pht = Memory(shape=p.counter_bits, depth=p.pht_entries,
                                        init=[p.counter_reset] * p.pht_entries)
        pht_wr = pht.write_port()
        pht_train = pht.read_port(domain="comb")
        # The lookup reads asynchronously at the registered index (the decision's own), after
        # the update of the draft's cycle (pending, so forwarded).
        pht_lookup = pht.read_port(domain="comb")
        pht_wq_en = Signal(reset_less=True)
        pht_wq_addr = Signal(p.index_bits, reset_less=True)
        pht_wq_data = Signal(p.counter_bits, reset_less=True)
        m.d.comb += [pht_wr.en.eq(pht_wq_en), pht_wr.addr.eq(pht_wq_addr),
                     pht_wr.data.eq(pht_wq_data)]

        def pht_pending(addr):
            """The update not yet written is to ``addr``: a read there takes it instead."""
            return pht_wq_en & (addr == pht_wq_addr)

        # FIFO of (index, bucket) of the batches waiting for verification, in two copies written
        # alike: one read at `head`, one at `head + 1`, both from registers' addresses. A verify
        # or a drop (never both: a verify leaves room) moves the head by one and only selects
        # between them. (Read ports of one memory whose data are selected would be merged by
        # synthesis into one port behind an address multiplexer, with the late select in it.)
        fifo_shape = p.index_bits + p.bucket_bits
        m.submodules.fifo = fifo = Memory(shape=fifo_shape, depth=p.fifo_depth, init=[])
        m.submodules.fifo_next = fifo_next = Memory(shape=fifo_shape, depth=p.fifo_depth, init=[])
        fifo_wr = fifo.write_port()
        fifo_next_wr = fifo_next.write_port()
        fifo_at_head = fifo.read_port(domain="comb")
        fifo_after_head = fifo_next.read_port(domain="comb")
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
        ]
        counter = Signal(p.counter_bits)
        trained = Signal(p.counter_bits)
        m.d.comb += [
            pht_train.addr.eq(head_index),
            counter.eq(Mux(pht_pending(head_index), pht_wq_data, pht_train.data)),
        ]
        with m.If(verify_full):
            m.d.comb += trained.eq(Mux(counter == p.counter_max, counter, counter + 1))
        with m.Else():
            m.d.comb += trained.eq(Mux(counter == 0, counter, counter - 1))
        m.d.sync += [pht_wq_en.eq(verify), pht_wq_addr.eq(head_index), pht_wq_data.eq(trained)]

        bucket = Signal(p.bucket_bits)
        m.d.comb += bucket.eq(sum(self.draft.payload >= t for t in p.thresholds))

        def phases(outcome, draft, suffix):
            """The cycle's next state for a verify ``outcome`` (``None``: no verify, else the
            verify's ``accept``) and a ``draft`` (both constants): the verify phase, then the
            draft phase on the state after it. Only registers feed it."""
            verify = outcome is not None
            accept = outcome is True
            reject = outcome is False
            leht1 = lceht if reject else leht
            lceht1 = self._shift_in(lceht, head_bucket) if accept else lceht
            llr1 = (Mux(llr == 0, 0, llr - 1) if accept else Const(0, p.llr_bits) if reject
                    else llr)[:p.llr_bits]
            head1 = (head + 1 if verify else head)[:p.fifo_depth_log2]
            count1 = (count - 1 if accept else Const(0, len(count)) if reject
                      else count)[:len(count)]
            leht2 = self._shift_in(leht1, bucket) if draft else leht1
            llr2 = (Mux(llr1 == p.llr_max, llr1, llr1 + 1) if draft else llr1)[:p.llr_bits]
            index = Signal(p.index_bits, name=f"index_{suffix}")
            m.d.comb += index.eq(self._index(leht2, llr2))
            full_fifo = Const(0) if reject or not draft else count1 == p.fifo_depth
            drop = full_fifo if draft else Const(0)
            # The new head is the entry written now when the FIFO is empty after the verify,
            # else an entry already stored (a drop overwrites the old head, not the new one:
            # depth >= 2); a verify or a drop (never both: a verify leaves room) moves it by one.
            written_at_head = (count1 == 0) if draft else Const(0)
            moved = Const(1) if verify else drop
            return {
                "leht": Cat(*leht2), "lceht": Cat(*lceht1), "llr": llr2,
                "head": Mux(drop, head1 + 1, head1)[:p.fifo_depth_log2],
                "count": (Mux(full_fifo, count1, count1 + 1) if draft
                          else count1)[:p.fifo_depth_log2 + 1],
                "index": index,
                "fifo_addr": (head1 + count1)[:p.fifo_depth_log2],
                "head_entry": Mux(written_at_head, Cat(index, bucket),
                                  Mux(moved, fifo_after_head.data, fifo_at_head.data)),
                "reject": Const(int(reject), 1), "drop": drop,
            }

        # `verify.valid`, its payload and `draft.valid` come late (behind the feedback queue's
        # and the draft queue's handshakes in the controller): the state after the cycle is
        # computed from registers alone for each verify outcome (none, accept, reject; a verify
        # with no pending batch is none) and each value of `draft.valid`, and the late inputs
        # only select. The FIFO's write address does not depend on the draft, nor its data (the
        # drafting case's; in a cycle without a draft nothing is written): only its enable does.
        draft = self.draft.valid
        outcomes = {"idle": None, "accept": True, "reject": False}
        cases = {(o, d): phases(outcomes[o], bool(d), f"{o}_{'draft' if d else 'none'}")
                 for o in outcomes for d in (0, 1)}
        accepted = Signal()
        rejected = Signal()
        m.d.comb += [accepted.eq(verify & verify_full), rejected.eq(verify & ~verify_full)]

        def select(key, d=None):
            def by_verify(d):
                return Mux(rejected, cases["reject", d][key],
                           Mux(accepted, cases["accept", d][key], cases["idle", d][key]))
            return by_verify(d) if d is not None else Mux(draft, by_verify(1), by_verify(0))

        nxt = {k: select(k) for k in cases["idle", 0]}
        index = nxt["index"]
        drop, reject = nxt["drop"], nxt["reject"]
        m.d.comb += [
            fifo_wr.addr.eq(select("fifo_addr", 1)),
            fifo_wr.data.eq(Cat(select("index", 1), bucket)),
            fifo_wr.en.eq(draft),
            fifo_next_wr.addr.eq(fifo_wr.addr),
            fifo_next_wr.data.eq(fifo_wr.data),
            fifo_next_wr.en.eq(fifo_wr.en),
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
        m.d.comb += pht_lookup.addr.eq(self.decision.payload.index)
        cont = Mux(pht_pending(self.decision.payload.index),
                   pht_wq_data >= p.continue_threshold,
                   pht_lookup.data >= p.continue_threshold)
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
