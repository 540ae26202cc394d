"""EDC: entropy-history-aware drafting control (docs/architecture.md 4.1), variant ``committed``.

The golden model is :class:`ahasd.sim.blocks.edc.EDC`; this block matches it decision for decision,
including the same-cycle rule (a verify is applied before a draft in the same cycle).
"""

from amaranth import Cat, Const, Module, Mux, Signal, Value, unsigned
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
    ``index``). The PHT is kept in rows of the entries that differ only in the newer half's
    average (``avg_low``); a draft's row (its LLR and the older half's average) depends on
    registers alone, so the row's ``counter >= threshold`` bits are read in the draft's cycle
    (from one of three copies: without a verify, after an accepting and after a rejecting
    verify of the same cycle) and
    registered, and the next cycle selects the column. When the verify of the draft's cycle
    trains an entry of that row, the row it writes is taken instead of the one read, so a verify
    and a draft in the same cycle behave as "verify, then draft" (the order of the golden
    model's :meth:`~ahasd.sim.blocks.edc.EDC.step`). The verify's read-modify-write reads its
    row asynchronously at the head entry's index (a register), so back-to-back verifies to the
    same entry need no forwarding.

    ``verify.valid`` and ``draft.valid`` arrive late (behind the queues' handshakes in the
    controller): the next state (history, the sums of its averaged windows, LLR, head, count,
    head entry, decision index, the decision's row) is computed from registers for every verify
    outcome (none, accept, reject) and draft value, and the handshakes (with ``verify.payload``)
    only select between the results; the pending FIFO's write address and data are the drafting
    case's (written only when a draft is accepted), so only the write enable depends on
    ``draft.valid``. The pending FIFO is kept in two copies, read at ``head`` and ``head + 1``.
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

    def _windows(self, history):
        """The two windows of ``history`` a draft's index averages besides its own bucket:
        ``low`` joins the new bucket in the newer half, ``high`` is the older half."""
        half = self.params.history_depth // 2
        return {"low": history[:half - 1], "high": history[half - 1:-1]}

    def elaborate(self, platform):
        p = self.params
        m = Module()

        leht = [Signal(p.bucket_bits, name=f"leht{i}") for i in range(p.history_depth)]
        lceht = [Signal(p.bucket_bits, name=f"lceht{i}") for i in range(p.history_depth)]
        llr = Signal(p.llr_bits)
        head = Signal(p.fifo_depth_log2)
        count = Signal(p.fifo_depth_log2 + 1)

        # The PHT in rows: an index is Cat(llr, avg_low, avg_high); a row holds the entries of
        # one (llr, avg_high), one per avg_low (the column). A draft's row needs only registers
        # (avg_high averages the older half of the history, which the new bucket does not
        # reach), so it is read in the draft's cycle and only the column is left for the next.
        cols = 1 << p.bucket_bits
        cb = p.counter_bits

        def row_of(index):
            return Cat(index[:p.llr_bits], index[p.llr_bits + p.bucket_bits:])

        def col_of(index):
            return index[p.llr_bits:p.llr_bits + p.bucket_bits]

        rows = 1 << (p.llr_bits + p.bucket_bits)
        # The counters, read and written a row at a time by the verify's read-modify-write.
        m.submodules.pht = pht = Memory(
            shape=cols * cb, depth=rows,
            init=[sum(p.counter_reset << (i * cb) for i in range(cols))] * rows)
        pht_wr = pht.write_port()
        pht_train = pht.read_port(domain="comb")
        # Each entry's `counter >= continue_threshold` (the decision), in three copies written
        # alike, read at the row of a draft without a verify, after an accepting and after a
        # rejecting verify of its cycle (one memory with several reads would be merged by
        # synthesis into one read at a multiplexed address, behind the late `verify.valid`).
        cont_init = (1 << cols) - 1 if p.counter_reset >= p.continue_threshold else 0
        cont_tables = [Memory(shape=cols, depth=rows, init=[cont_init] * rows)
                       for _ in range(3)]
        m.submodules.cont_idle, m.submodules.cont_accept, m.submodules.cont_reject = cont_tables
        cont_writes = [table.write_port() for table in cont_tables]
        cont_idle, cont_accept, cont_reject = (table.read_port(domain="comb")
                                               for table in cont_tables)

        # FIFO of (index, bucket) of the batches waiting for verification, in two copies written
        # alike, read at `head` and at `head + 1` (both registers): a verify or a drop (never
        # both: a verify leaves room) moves the head by one and only selects. One memory with
        # both reads would be merged by synthesis into one read at a multiplexed address, with
        # the late `draft.valid` in front of it.
        fifos = [Memory(shape=p.index_bits + p.bucket_bits, depth=p.fifo_depth, init=[])
                 for _ in range(2)]
        m.submodules.fifo, m.submodules.fifo_next = fifos
        fifo_writes = [fifo.write_port() for fifo in fifos]
        fifo_at_head, fifo_after_head = (fifo.read_port(domain="comb") for fifo in fifos)
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
            pht_train.addr.eq(row_of(head_index)),
            pht_wr.addr.eq(row_of(head_index)),
            pht_wr.en.eq(verify),
        ]
        # Every column's counter is trained and the head's column selects (no multiplexer
        # between the read and the arithmetic); likewise the new `cont` bits.
        counters = [pht_train.data[i * cb:(i + 1) * cb] for i in range(cols)]
        trained = [Mux(verify_full, Mux(c == p.counter_max, c, c + 1),
                       Mux(c == 0, c, c - 1))[:cb] for c in counters]
        at_head = [col_of(head_index) == i for i in range(cols)]
        new_cont = Signal(cols)
        m.d.comb += [
            pht_wr.data.eq(Cat(*(Mux(h, t, c) for h, t, c in zip(at_head, trained, counters)))),
            new_cont.eq(Cat(*(Mux(h, t, c) >= p.continue_threshold
                              for h, t, c in zip(at_head, trained, counters)))),
        ]
        for port in cont_writes:
            m.d.comb += [port.addr.eq(row_of(head_index)), port.data.eq(new_cont),
                         port.en.eq(verify)]

        bucket = Signal(p.bucket_bits)
        m.d.comb += bucket.eq(sum(self.draft.payload >= t for t in p.thresholds))

        # The sums of each history's windows, registers (from the next histories), so that a
        # draft's index (and its PHT row) starts from registers instead of adders.
        sums = {}
        for table, history in (("leht", leht), ("lceht", lceht)):
            for window, values in self._windows(history).items():
                total = Signal(range(len(values) * ((1 << p.bucket_bits) - 1) + 1),
                               name=f"{table}_{window}_sum")
                sums[table, window] = total
        #: (register, combinational formula) pairs that must agree in every cycle (tests).
        self.shadowed = [(sums[t, w], sum(v)) for t, h in (("leht", leht), ("lceht", lceht))
                         for w, v in self._windows(h).items()]

        def phases(outcome, draft, suffix):
            """The cycle's next state for a verify ``outcome`` (``None``, ``"accept"`` or
            ``"reject"``: constants, so the state comes from registers alone) and ``draft``:
            the verify phase, then the draft phase on the state after it."""
            accept, reject = outcome == "accept", outcome == "reject"
            leht1 = lceht if reject else leht
            sums1 = {w: sums["lceht" if reject else "leht", w] for w in ("low", "high")}
            lceht1 = self._shift_in(lceht, head_bucket) if accept else lceht
            llr1 = (Mux(llr == 0, 0, llr - 1)[:p.llr_bits] if accept else
                    Const(0, p.llr_bits) if reject else llr)
            head1 = (head + 1)[:p.fifo_depth_log2] if outcome else head
            count1 = ((count - 1)[:p.fifo_depth_log2 + 1] if accept else
                      Const(0, p.fifo_depth_log2 + 1) if reject else count)
            leht2 = [Mux(draft, n, s) for s, n in zip(leht1, self._shift_in(leht1, bucket))]
            llr2 = Mux(draft, Mux(llr1 == p.llr_max, llr1, llr1 + 1), llr1)[:p.llr_bits]
            index = Signal(p.index_bits, name=f"index_{suffix}")
            if draft.value:
                # The new bucket joins the newer half; the windows' sums are registers.
                m.d.comb += index.eq(Cat(
                    llr2, ((bucket + sums1["low"]) >> p.half_shift)[:p.bucket_bits],
                    (sums1["high"] >> p.half_shift)[:p.bucket_bits]))
            else:
                m.d.comb += index.eq(self._index(leht2, llr2))
            full_fifo = count1 == p.fifo_depth
            drop = draft & full_fifo
            # The new head is the entry written now when the FIFO is empty after the verify,
            # else an entry already stored (a drop overwrites the old head, not the new one:
            # depth >= 2); a verify or a drop (never both: a verify leaves room) moves it by one.
            written_at_head = draft & (count1 == 0)
            moved = drop if outcome is None else Const(1, 1)
            window_sums = {(t, w): sum(v) for t, h in (("leht", leht2), ("lceht", lceht1))
                           for w, v in self._windows(h).items()}
            return {
                "leht": Cat(*leht2), "lceht": Cat(*lceht1), "llr": llr2,
                **{f"{t}_{w}_sum": total for (t, w), total in window_sums.items()},
                "head": Mux(drop, head1 + 1, head1)[:p.fifo_depth_log2],
                "count": Mux(draft & ~full_fifo, count1 + 1, count1)[:p.fifo_depth_log2 + 1],
                "index": index,
                "fifo_addr": (head1 + count1)[:p.fifo_depth_log2],
                "head_entry": Mux(written_at_head, Cat(index, bucket),
                                  Mux(moved, fifo_after_head.data, fifo_at_head.data)),
                "drop": drop,
            }

        # `verify.valid` and `draft.valid` come late (behind the feedback queue's and the draft
        # queue's handshakes in the controller): the state after the cycle is computed for
        # every verify outcome (none, accept, reject) and draft value from registers alone, and
        # the handshakes (and the verify's payload, and `count != 0`) only select. The FIFO's
        # write address does not depend on the draft, nor its data (the drafting case's; in a
        # cycle without a draft nothing is written): only its enable does.
        draft = self.draft.valid
        outcomes = (None, "accept", "reject")
        cases = {(o, d): phases(o, Const(d, 1), f"{o or 'idle'}_{'draft' if d else 'none'}")
                 for o in outcomes for d in (0, 1)}

        # `verify.valid` selects last: whether a verify applies (`count != 0`) and its outcome
        # (the payload, a register in the controller) select before it.
        count_nz = Signal()
        m.d.comb += count_nz.eq(count != 0)

        # The selected values before the late selects are signals kept through synthesis
        # (`keep`): a mapping for depth (ABC9 on an FPGA) sees every input arrive at once and
        # would fold the early selects into the late ones; kept apart, the late handshakes
        # meet one level of multiplexers (on ECP5 a LUT pair and its PFU multiplexer).
        def kept(value, name):
            signal = Signal(len(Value.cast(value)), name=name, attrs={"keep": 1})
            m.d.comb += signal.eq(value)
            return signal

        def select(key, d=None):
            def by_verify(d):
                verified = kept(Mux(count_nz, Mux(verify_full, cases["accept", d][key],
                                                  cases["reject", d][key]),
                                    cases[None, d][key]), f"{key}_verified_{d}")
                idle = kept(cases[None, d][key], f"{key}_idle_{d}")
                return Mux(self.verify.valid, verified, idle)
            return by_verify(d) if d is not None else Mux(draft, by_verify(1), by_verify(0))

        nxt = {k: select(k) for k in cases[None, 0]}
        drop = nxt["drop"]
        reject = verify & ~verify_full
        for port in fifo_writes:
            m.d.comb += [
                port.addr.eq(select("fifo_addr", 1)),
                port.data.eq(Cat(select("index", 1), bucket)),
                port.en.eq(draft),
            ]
        m.d.comb += [
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
            self.decision.payload.index.eq(nxt["index"]),
            *(total.eq(nxt[f"{t}_{w}_sum"]) for (t, w), total in sums.items()),
        ]

        # The decision's row of `cont` bits, read in the draft's cycle for each verify outcome
        # (registers' addresses) and registered; the next cycle selects its column. The verify
        # of the draft's cycle writes its row at the clock edge, after the read: when that is
        # the draft's row, the row written (`new_cont`) is taken instead, so the decision sees
        # the verify of its cycle ("verify, then draft", as the golden model).
        m.d.comb += cont_idle.addr.eq(row_of(cases[None, 1]["index"]))
        written = {}
        for outcome, port in (("accept", cont_accept), ("reject", cont_reject)):
            row = row_of(cases[outcome, 1]["index"])
            m.d.comb += port.addr.eq(row)
            written[outcome] = Mux(row_of(head_index) == row, new_cont, port.data)
        cont_row = Signal(cols, reset_less=True)   # read only behind decision.valid
        verified = Mux(count_nz, Mux(verify_full, written["accept"], written["reject"]),
                       cont_idle.data)
        m.d.sync += cont_row.eq(Mux(self.verify.valid, verified, cont_idle.data))
        cont = cont_row.word_select(col_of(self.decision.payload.index), 1)
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
