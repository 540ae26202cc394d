"""TVC: time-aware pre-verification control (docs/architecture.md 4.2).

The golden model is :class:`ahasd.sim.blocks.tvc.TVC` (transaction level); this block gives the same
decisions and the same table contents for the transactions it accepts, in the order defined in
:class:`TVC` (Ordering). ``docs/tvc.md`` summarises the interface for the controller top.
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.carry_save import csa, csa_tree
from ahasd.hw.construction import rejecting_construction
from ahasd.hw.tvc_arith import at_least, floor_rows, packed_rows, pieces, product_rows
from ahasd.hw.tvc_decisions import decisions
from ahasd.hw.tvc_divider import RecordDivider
from ahasd.spec.params import check_bool
from ahasd.spec.tvc import FREQ_BITS, FREQ_FRAC_BITS, RATIO_FRAC_BITS, TABLES, TVCParams

__all__ = ["Table", "TVC", "DECISION_LATENCY", "record_layout", "decide_layout", "result_layout"]

#: Cycles from the cycle a decide is accepted to the cycle its result is valid.
DECISION_LATENCY = 3


class Table(enum.Enum, shape=2):
    """Table code of a record (the order of :data:`ahasd.spec.tvc.TABLES`); code 3 is invalid."""
    NVCT = 0
    PDCT = 1
    PVCT = 2


assert [t.name.lower() for t in Table] == list(TABLES)


def record_layout(params, *, table=Table):
    """Payload of ``record`` for :class:`TVCParams` ``params``: table, cycles, length.

    ``table=unsigned(2)`` gives the same bits with a plain table code, so that a driver can also
    send the code 3 that the block must reject.
    """
    return data.StructLayout({"table": table, "cycles": params.cycles_bits,
                              "length": params.length_bits})


def decide_layout(params):
    """Payload of ``decide``: kv_len, now (NCR), pending."""
    return data.StructLayout({"kv_len": params.length_bits, "now": params.cycles_bits,
                              "pending": params.length_bits})


def result_layout(params):
    """Payload of ``result``: insert, length."""
    return data.StructLayout({"insert": 1, "length": params.result_length_bits})


class TVC(wiring.Component):
    """Time-aware pre-verification control.

    Parameters (keyword-only, validated by :class:`ahasd.spec.tvc.TVCParams`)
    -----------------------------------------------------------------------
    depth, ratio_bits, max_preverify_len, cycles_bits, length_bits, counter_bits
    second_record : bool
        Add the record port ``record_first`` (default False).

    Ports (``rb`` = ratio_bits, ``cb`` = cycles_bits, ``lb`` = length_bits)
    --------------------------------------------------------------------------
    freq_ratio : In(16)
        f_PIM / f_NPU, UQ2.14 (a CSR). Every transaction uses the value of its accept cycle.
    preset__nvct, preset__pdct, preset__pvct : In(rb)
        Offline-profiled ratios, UQ(rb-8).8 (CSRs). Loaded into every entry of their table in the
        first cycle after reset, and again for each bit set in ``preset__load``.
    preset__load : In(3)
        One-cycle strobe, bit ``i`` = table ``i`` (NVCT, PDCT, PVCT): load ``preset__<table>``
        into every entry. Never refused (no ready): a preset takes effect at once.
    record__valid, record__ready, record__payload : stream of {table: Table, cycles: cb,
        length: lb}
        A measured run: ``cycles`` (NPU cycles for NVCT, PIM cycles otherwise) for ``length``
        tokens. Payload bit order: table [1:0], cycles, then length.
    record_first__valid, record_first__ready, record_first__payload : as ``record``, only with
        ``second_record``
        A second source of records with priority over ``record`` (whose ``ready`` is low while
        ``record_first__valid``): the controller's feedback results. Each source has its own
        ``to_pim`` multipliers, so neither payload waits for the choice between them.
    decide__valid, decide__ready, decide__payload : stream of {kv_len: lb, now: cb,
        pending: lb}
        A decision request (KV length, NPU cycles elapsed in the current verification = NCR,
        unverified tokens available). Payload bit order: kv_len, now, pending.
    result__valid, result__payload : Out(stream.Signature({insert: 1,
        length: bits(max_preverify_len)}, always_ready=True))
        Exactly :data:`DECISION_LATENCY` (3) cycles after each accepted decide, in order; no
        ready (the pipeline never stalls).
    error_count : Out(counter_bits)
        Saturating count of rejected records: length 0, or table code 3.
    busy : Out(1)
        The divider is working on a record (or the post-reset preset load is happening); both
        ``ready`` outputs are low.
    average__nvct, average__pdct, average__pvct : Out(rb)
        Current ``avg(T)`` of each table (for CSR read-back).

    Ordering and backpressure
    -------------------------
    ``record__ready`` and ``decide__ready`` are both ``~busy``. A record with a non-zero length
    starts the sequential divider (:class:`ahasd.hw.tvc_divider.RecordDivider`, one quotient
    bit per cycle) and keeps ``busy`` high until its ratio is in the table: ``min(cb + 2 + 8, rb)
    + 2`` cycles after accept (:attr:`record_latency`, 34 with the defaults); a ratio that would
    saturate is detected in the cycle after accept and written then (2 cycles). A decide reads
    the tables in its accept cycle, so a decide and a record accepted in the same cycle behave
    as "decide, then record"; anything after a record waits for it. A preset in the same cycle as
    an accepted record, or while the divider works on a record of the same table, comes after
    it and overwrites the table: the record's ratio is discarded (the divider stops). Within a
    cycle the order is therefore decide, record, preset, and ``freq_ratio`` applies to all three.

    Timing
    ------
    No divider, no multiplier by ``L`` and no word adder wider than half a bound on the
    decision path (:mod:`ahasd.hw.tvc_decisions`; docs/tvc.md, "Decision pipeline"). The
    averages are registers written with their table, and each length's bound (the negated
    ``threshold(L) = L * avg(PVCT) + (avg(PDCT) >> 8) * 256``) is formed from them when a table
    changes, not when a decide asks. Three register stages: (1) the products
    ``A = avg(NVCT) * kv_len`` and ``B = now * freq_ratio`` as 8 x 16-bit pieces into registers
    (one MULT18X18D each on ECP5) and the thermometer ``pending >= L``; (2) a full-adder tree of
    the pieces' floors as nonnegative rows, ending per length in one full-adder level with its
    bound (0 where ``pending < L``); (3) per length one ``>=`` comparison of two registers
    (``L * avg(PVCT) <= C_left * 256``) and the count of the thermometer code of the lengths that
    fit. One decide per cycle while not busy; the decisions, the latencies and the ordering are
    those of the golden model.

    The record side has no word adder either, and no late signal reaches a wide enable
    (ECP5). Each table is a ring of entries with a one-hot write position (a write enables one
    entry). Accept cycle: the products of ``cycles``' 8-bit pieces with ``freq_ratio`` (8 x 16
    bits each, into registers; one set per source); the record's verdicts (rejected, squashed,
    the saturation of a PDCT or PVCT record) formed per source, the late source choice selecting
    after them; the record registers loaded in every cycle TVC is not busy. Check cycle (the
    next): for an NVCT record, per source, the saturation check ``to_pim(cycles) >= length <<
    (steps - 8)`` as the sign of one sum (the pieces' full-adder tree with ``~(length << ...) +
    1``, the sign as a comparison); the entry at the write position takes the saturated ratio
    whatever the check finds, and the divider starts whatever it finds (a saturating division
    is aborted in the next cycle), so the check drives a few flip-flops only: ``busy`` and
    ``ready`` are registers that leave the check out, corrected by its one register
    (``pend_sat``). The divider
    (:class:`ahasd.hw.tvc_divider.RecordDivider`, non-restoring) takes ``to_pim(cycles) * 256``
    as two carry-save rows, never resolved, writes its remainder rows in every step (one
    full-adder level) and looks each sign ahead a step, so a quotient bit comes from registers
    through one multiplexer (the first bit checked beside the saturation and given with the
    start); its quotient replaces the entry in the last step, at the position the table's
    division started at (held per table: the write position moves on in every check cycle).
    The entries are summed as carry-save rows every cycle, once without the write position
    (the saturation) and once without the dividing position (the new average, whose
    candidates for the last bit 0 and 1 are registered a step ahead). The averages are written from registers only: the
    record's table's average takes the saturated average in the check cycle, whatever the check
    finds, and a divided record's new average in the last step; meanwhile the average register
    holds the saturated value, which nothing reads (decides wait while busy), and the
    ``average`` ports show the value from before the record.
    """

    def __init__(self, *, depth=4, ratio_bits=32, max_preverify_len=8, cycles_bits=32,
                 length_bits=16, counter_bits=16, second_record=False):
        with rejecting_construction(self):
            self.params = p = TVCParams(
                depth=depth, ratio_bits=ratio_bits, max_preverify_len=max_preverify_len,
                cycles_bits=cycles_bits, length_bits=length_bits, counter_bits=counter_bits)
            check_bool("second_record", second_record)
        self.second_record = second_record
        self.record_layout = record_layout(p)
        self.decide_layout = decide_layout(p)
        self.result_layout = result_layout(p)
        tables = {name: Out(p.ratio_bits) for name in TABLES}
        super().__init__({
            "freq_ratio": In(FREQ_BITS),
            "preset": In(wiring.Signature({**tables, "load": Out(len(TABLES))})),
            "record": In(stream.Signature(self.record_layout)),
            **({"record_first": In(stream.Signature(self.record_layout))}
               if second_record else {}),
            "decide": In(stream.Signature(self.decide_layout)),
            # always_ready: no `ready` port (docs/streams.md).
            "result": Out(stream.Signature(self.result_layout, always_ready=True)),
            "error_count": Out(p.counter_bits),
            "busy": Out(1),
            "average": Out(wiring.Signature(tables)),
        })

    @property
    def divider_steps(self):
        """Quotient bits the divider computes one per cycle."""
        return min(self.params.numerator_bits, self.params.ratio_bits)

    @property
    def record_latency(self):
        """Cycles from a (non-saturating) record's accept until ``ready`` is high again."""
        return self.divider_steps + 2

    def _error_counter(self, m, event):
        """``error_count``: a saturating count of ``event``, which is late (a record's
        handshake and its verdict): the event is registered (``pending``) and added one cycle
        late, and the count shown is the stored count or the stored ``count + 1``, selected by
        ``pending`` (a multiplexer after registers), so it reads exactly as a counter
        incremented at the event."""
        p = self.params
        top = (1 << p.counter_bits) - 1
        stored = Signal(p.counter_bits)
        incremented = Signal(p.counter_bits, init=1)
        pending = Signal()
        m.d.comb += self.error_count.eq(Mux(pending, incremented, stored))
        m.d.sync += pending.eq(event)
        with m.If(pending):     # `incremented` stays at the top: the count saturates
            m.d.sync += [stored.eq(incremented),
                         incremented.eq(Mux(incremented == top, top, incremented + 1))]

    def elaborate(self, platform):
        m = Module()
        p = self.params
        rb, lb = p.ratio_bits, p.length_bits

        # -- tables and their averages --------------------------------------------------------
        # Each table is a ring of `depth` entries with a one-hot write position `slot` (its
        # oldest entry): a record replaces one entry, so a write enables `rb` flip-flops, not
        # the whole table. The averages are registers, written in the same cycle as their
        # table: a preset's value itself (every entry equal), or the new ratio plus the sum of
        # the entries that stay.
        tables = {name: [Signal(rb, name=f"{name}_{i}") for i in range(p.depth)]
                  for name in TABLES}
        slots = {name: Signal(p.depth, init=1, name=f"{name}_slot") for name in TABLES}
        # The position a record's division writes: the write position as it was at the record's
        # check cycle (the write position moves on in every check cycle, whatever the check
        # finds). A division's sums leave its entry out (it holds the saturated ratio until the
        # quotient replaces it), a next record's sums the entry at the write position.
        dividing_at = {name: Signal(p.depth, init=1, name=f"{name}_dividing") for name in TABLES}
        averages = {name: Signal(rb, name=f"avg_{name}") for name in TABLES}

        # The tables take the preset CSRs in the first cycle after reset.
        init = Signal(init=1)
        m.d.sync += init.eq(0)

        # busy = init | pend | (div.busy & ~pend_sat): its value is formed below from registers.
        busy = Signal()
        # `ready`: ~busy from registers of its own (below), for the handshakes outside (the
        # controller's feedback queue, EDC and counters read it), `busy` for TVC's own logic:
        # each placed beside its readers on an FPGA (kept apart in synthesis, synth/fpga.py).
        ready = Signal()
        m.d.comb += [
            self.busy.eq(busy),
            self.decide.ready.eq(ready),
        ]
        # Records enter at `record` (and with `second_record` at `record_first`, which has
        # priority: `record` is ready only while `record_first` is not valid).
        sources = [self.record_first, self.record] if self.second_record else [self.record]
        first = Signal()   # the record of this cycle is the first source's
        if self.second_record:
            m.d.comb += [
                first.eq(self.record_first.valid),
                self.record_first.ready.eq(ready),
                self.record.ready.eq(ready & ~self.record_first.valid),
            ]
        else:
            m.d.comb += self.record.ready.eq(ready)
        rec = Signal(self.record_layout)
        m.d.comb += rec.eq(Mux(first, sources[0].payload, sources[-1].payload))
        load = Signal(len(TABLES))
        m.d.comb += load.eq(self.preset.load | init.replicate(len(TABLES)))

        def by_source(values):
            """The value of this cycle's source: each source's own value is formed from its
            payload, and the late `first` only selects between them."""
            return Mux(first, values[0], values[-1])

        # -- records: rejection, squash, sequential divider -------------------------------------
        # A record is rejected (length 0, table code 3) or squashed (a preset of its table in
        # the same cycle) by verdicts formed per source.
        rec_accept = Signal()
        rec_bad = Signal()
        rec_ok = Signal()
        m.d.comb += [
            rec_accept.eq(Cat(*(src.valid for src in sources)).any() & ~busy),
            rec_bad.eq(by_source([(src.payload.length == 0) |
                                  (src.payload.table.as_value() == 3) for src in sources])),
            rec_ok.eq(by_source([(src.payload.length != 0) &
                                 (src.payload.table.as_value() != 3) &
                                 ~load.bit_select(src.payload.table.as_value(), 1)
                                 for src in sources])),
        ]
        self._error_counter(m, rec_accept & rec_bad)

        steps = self.divider_steps
        # The record is registered in its accept cycle (cycles, length, table; NVCT cycles as
        # the PIECE_BITS-bit pieces of cycles * freq_ratio, a product per piece and source, each
        # into a register) and reaches the divider one cycle later: `pend`, the check cycle.
        # These registers take the offered record in every cycle TVC is not busy, accepted or
        # not, so that no enable waits for the accept. The saturation check (numerator >> steps
        # >= length) is made in the check cycle on the registered operands, per source, each
        # one carry chain (the sign of a sum of rows), and a saturating ratio is written in that
        # cycle. The divider starts in that cycle whatever the check finds and a saturating
        # division is aborted in the next one (`pend_sat`), so the check drives only the
        # averages' writes and the write position.
        pend = Signal()
        div_sel = Signal(len(TABLES))   # one-hot: the table of the record in the divider
        pend_cycles = Signal(p.cycles_bits)
        pend_length = Signal(lb)
        pend_nvct = div_sel[Table.NVCT.value]
        # One set of multipliers per source, each into registers of its own, selected after
        # them (by `pend_first`): the multipliers see the sources' payloads (registers or
        # ports), not the late choice between them, and no multiplexer sits behind two
        # products (yosys's `share` would merge the two multipliers into one behind it).
        names = ["rec_first_to_pim", "rec_to_pim"] if self.second_record else ["rec_to_pim"]
        source_pieces = [pieces(m, src.payload.cycles, self.freq_ratio, name)
                         for src, name in zip(sources, names)]
        pend_first = Signal()
        m.d.sync += [pend_first.eq(first), pend_cycles.eq(rec.cycles)]
        # numerator >> steps >= length  <=>  c >= length << shift  (numerator = c * 256), and
        # for NVCT  to_pim(cycles) >= length << shift  <=>  product >= length << (shift + 14).
        # The product is below 2**top, so it reaches length << nvct_shift only for a length
        # below 2**spare; the negated low bits of the length are registered at accept. The
        # check of a PDCT or PVCT record needs no product: it is made in the accept cycle, per
        # source, and registered (`over_plain`).
        shift = steps - RATIO_FRAC_BITS
        nvct_shift = shift + FREQ_FRAC_BITS
        top = max(offset + len(product) for offset, product in source_pieces[0])
        spare = top - nvct_shift
        pend_minus = Signal(max(spare + 1, 1))   # -(length mod 2**spare) mod 2**(spare + 1)
        # Registered at accept, set only for a record that starts: `plain_sat` (a PDCT or PVCT
        # record that saturates) and which source's product check counts
        # (`use_check`: an NVCT record of a length that can saturate), so that the check cycle
        # combines each product check with one register and needs no `pend`.
        plain_sat = Signal()
        use_check = Signal(len(sources))
        if spare > 0:
            fits = [at_least(m, source, pend_minus, nvct_shift) for source in source_pieces]
            over_nvct = Cat(*(use & fit for use, fit in zip(use_check, fits))).any()
        else:
            over_nvct = Const(0, 1)
        pend_over = Signal()
        m.d.comb += pend_over.eq(over_nvct | plain_sat)
        # The quotient's first bit, numerator >= length << (steps - 1), checked beside the
        # saturation in the same way (one place lower; `first_plain` at accept, the products'
        # check per source in the check cycle): the divider's first step takes it from a
        # register instead of forming the sign of its first remainder.
        spare1 = spare + 1
        pend_minus1 = Signal(max(spare1 + 1, 1))  # -(length mod 2**spare1) mod 2**(spare1 + 1)
        first_plain = Signal()
        use_first = Signal(len(sources))
        if spare1 > 0:
            firsts = [at_least(m, source, pend_minus1, nvct_shift - 1) for source in source_pieces]
            first_nvct = Cat(*(use & fit for use, fit in zip(use_first, firsts))).any()
        else:
            first_nvct = Const(0, 1)
        pend_pieces = [(offset, Mux(pend_first, a, b)) for (offset, a), (_, b)
                       in zip(source_pieces[0], source_pieces[-1])]
        # The dividend as two rows: to_pim(cycles) is never resolved (the divider keeps them).
        if len(packed_rows(pend_pieces)) > 1:
            floors = floor_rows(product_rows(m, pend_pieces), FREQ_FRAC_BITS)
            to_pim = csa(*floors, len(floors[0]))
        else:   # one row: the floor is a shift
            to_pim = (packed_rows(pend_pieces)[0][1][FREQ_FRAC_BITS:], Const(0, 1))
        numerator = [Signal(p.numerator_bits, name=f"numerator_{row}") for row in "sc"]
        m.d.comb += [
            numerator[0].eq(Cat(Const(0, RATIO_FRAC_BITS),
                                Mux(pend_nvct, to_pim[0][:p.pim_cycles_bits], pend_cycles))),
            numerator[1].eq(Cat(Const(0, RATIO_FRAC_BITS),
                                Mux(pend_nvct, to_pim[1][:p.pim_cycles_bits], 0))),
        ]
        m.submodules.divider = div = RecordDivider(
            dividend_width=p.numerator_bits, divisor_width=lb, quotient_bits=steps,
            given_first_bit=True)
        rec_start = Signal()
        pend_abort = Signal()
        pend_sat = Signal()             # the previous cycle wrote a saturated ratio
        pend_aborted = Signal()         # a preset of its table stopped the previous check cycle
        m.d.comb += [
            rec_start.eq(rec_accept & rec_ok),
            pend_abort.eq((load & div_sel).any()),
            # The divider starts in every check cycle (`pend`, a register, no preset before
            # its enables); one a preset of its table stops there is aborted in the next
            # cycle (`pend_aborted`), as a saturating one is (`pend_sat`).
            div.abort.eq(pend_abort | pend_sat | pend_aborted),
            div.start.eq(pend),
            div.dividend.eq(numerator[0]),
            div.dividend_carry.eq(numerator[1]),
            div.divisor.eq(pend_length),
            div.first_bit.eq(first_nvct | first_plain),
        ]
        m.d.sync += [pend.eq(rec_start), pend_sat.eq(~pend_abort & pend_over),
                     pend_aborted.eq(pend & pend_abort)]
        # Next cycle: pend (a record started), or the divider started and not saturated, or it
        # goes on (not aborted, not done). While pend, the divider is idle.
        # `busy` and `ready` come from registers that leave the saturation check out (as if no
        # record saturated) and `pend_sat` (the check's register) corrects them in the cycle
        # after it: the check ends in one register, and only registers reach busy's readers.
        # `ready` has registers of its own (kept apart from `busy_unchecked`).
        next_busy_unchecked = Signal()
        m.d.comb += next_busy_unchecked.eq(rec_start | (pend & ~pend_abort) |
                                           (div.busy & ~div.abort & ~div.done.valid))
        busy_unchecked = Signal(1, init=1)
        ready_unchecked = Signal(1, init=0, attrs={"keep": 1})
        m.d.sync += [busy_unchecked.eq(next_busy_unchecked),
                     ready_unchecked.eq(~next_busy_unchecked)]
        m.d.comb += [busy.eq(busy_unchecked & ~pend_sat), ready.eq(ready_unchecked | pend_sat)]
        nvct = [src.payload.table == Table.NVCT for src in sources]
        plain = by_source([~is_nvct & (src.payload.cycles >= Cat(Const(0, shift), src.payload.length))
                           for is_nvct, src in zip(nvct, sources)])
        m.d.sync += plain_sat.eq(rec_start & plain)
        m.d.sync += first_plain.eq(rec_start & by_source([
            ~is_nvct & (src.payload.cycles >= Cat(Const(0, shift - 1), src.payload.length))
            for is_nvct, src in zip(nvct, sources)]))
        with m.If(~busy):
            m.d.sync += [div_sel.eq(Cat(rec.table.as_value() == i for i in range(len(TABLES)))),
                         pend_length.eq(rec.length)]
            if spare > 0:
                m.d.sync += pend_minus.eq(-rec.length[:spare])
            if spare1 > 0:
                m.d.sync += pend_minus1.eq(-rec.length[:spare1])
        # Which source's product check counts: an NVCT record whose length fits the check's
        # spare bits, of the source that starts.
        for register, spare_bits in ((use_first, spare1), (use_check, spare)):
            if spare_bits > 0:
                uses = [is_nvct & (src.payload.length[spare_bits:] == 0)
                        for is_nvct, src in zip(nvct, sources)]
                if self.second_record:
                    uses = [first & uses[0], ~first & uses[1]]
                m.d.sync += register.eq(Cat(*(rec_start & use for use in uses)))

        # The new average of the divider's table, ready as the last quotient bit arrives. The
        # entries that stay (all but the one at the write position) are summed as two
        # carry-save rows every cycle (the divider writes a table at least a cycle after its
        # last change: a record waits for the one before it, a preset of its table stops it),
        # the divider's table selects them. The sum with the quotient is split at bit `lo`: the
        # high part's two candidates (carry 0 and 1) are registered in the cycle before the last
        # step (every quotient bit they need is known then), the low part is added in the last
        # step beside the last bit, which only selects. The saturated sum (written in the check
        # cycle) has its low part and carry registered every cycle ahead, per table.
        width = rb + p.depth_log2      # the sum of all entries fits
        lo = width // 2
        ones = Const((1 << steps) - 1, steps)
        rows, sat_lows, sat_rows = [], [], []
        for name in TABLES:
            kept_rows = [Signal(width, name=f"kept_{name}_{row}") for row in "sc"]
            sat_low = Signal(lo + 1, name=f"saturated_{name}_lo")
            sat_high = [Signal(width - lo, name=f"saturated_{name}_hi_{row}") for row in "sc"]
            now = csa_tree(m, [Mux(dividing_at[name][i], 0, entry)
                               for i, entry in enumerate(tables[name])], width)
            staying = csa_tree(m, [Mux(slot_bit, 0, entry)
                                   for slot_bit, entry in zip(slots[name], tables[name])], width)
            sat = csa(*staying, ones, width)
            m.d.sync += [r.eq(v) for r, v in zip(kept_rows, now)]
            m.d.sync += [sat_low.eq(sat[0][:lo] + sat[1][:lo]),
                         *(r.eq(v[lo:]) for r, v in zip(sat_high, sat))]
            rows.append(kept_rows)
            sat_lows.append(sat_low)
            sat_rows.append(sat_high)

        def by_table(values):
            return Mux(div_sel[0], values[0], Mux(div_sel[1], values[1], values[2]))

        # The divider's table's rows, registered (the last step is at least 9 cycles after
        # div_sel is set); a saturated sum per table (a table takes only its own).
        kept = [Signal(width, name=f"kept_{row}") for row in "sc"]
        m.d.sync += [row.eq(by_table([r[i] for r in rows])) for i, row in enumerate(kept)]
        # The saturated average per table, from the registered halves (its high half added).
        saturated = [Cat(low[:lo], high[0] + high[1] + low[lo])[p.depth_log2:]
                     for low, high in zip(sat_lows, sat_rows)]
        # kept + quotient, as the new average's two candidates (last quotient bit 0 or 1),
        # registered in the step before the last: there quotient bit j >= 2 is quo[j - 2] and
        # bit 1 is the divider's `next_bit` (registers through one multiplexer), which selects
        # last between sums formed for both of its values. The sum is split at `lo`: its high
        # part (bits from 3 on placed, below them zeros, so the full-adder level gives the same
        # high rows; `lo` >= 4) is registered with carry 0 and 1 in the step before that, when
        # every quotient bit from 3 on is quo[j - 3]; each low part is added beside the
        # candidates (the carry row's bit 0 is free: it takes the last bit) and its carry
        # selects the high part.
        earlier = csa(*kept, Cat(Const(0, 3), div.quotient[:-3]), width)
        high_sums = [Signal(width - lo, name=f"sum_hi{carry}") for carry in (0, 1)]
        m.d.sync += [h.eq(earlier[0][lo:] + earlier[1][lo:] + carry)
                     for carry, h in enumerate(high_sums)]
        totals = []     # totals[bit1][bit0]
        for bit1 in (0, 1):
            u, v = csa(*kept, Cat(Const(0, 1), Const(bit1, 1), div.quotient[:-2]), width)
            row = []
            for bit0 in (0, 1):
                low = u[:lo] + Cat(Const(bit0, 1), v[1:lo])
                row.append(Cat(low[:lo], Mux(low[lo], high_sums[1], high_sums[0])))
            totals.append(row)
        candidates = [Signal(rb, name=f"new_average{bit}") for bit in (0, 1)]
        for bit0, candidate in enumerate(candidates):
            m.d.sync += candidate.eq(
                Mux(div.next_bit, totals[1][bit0], totals[0][bit0])[p.depth_log2:])

        # -- table updates: a preset wins over a record's write in the same cycle ---------------
        # In the check cycle the entry at the write position takes the saturated ratio whatever
        # the check finds (the enables are registers) and the position moves on; the divider's
        # quotient, if it comes, replaces that entry (`writing`; the sum of the entries that
        # stay never includes it).
        # The quotient as the last step shows it, taken before the divider gates `done` with
        # its abort: the last bit is `next_bit` (the divider has at least two steps).
        assert steps >= 2
        quotient = Cat(div.next_bit, div.quotient[:-1])
        # The last step of the divider's record, without the divider's abort (a preset of the
        # divider's table wins over the write anyway, and a saturating record's division, which
        # `pend_sat` aborts, is in its first step), so that no preset reaches these enables
        # through the divider.
        done = div.busy & div.last_step & ~pend_sat & ~pend_aborted
        # The averages are written from registers only, whatever the check finds: in the
        # check cycle the record's table's average takes the saturated average, and a divided
        # record's takes its new average (chosen by the last quotient bit, registers through
        # one multiplexer) in the last step. Until then, while the divider works, the average
        # register holds the saturated value, which nothing reads: decides wait while TVC is
        # busy, and the average TVC shows (its `average` ports, the CSR read-back) is the value
        # from before the record (`before`) while `speculating`. So the saturation check
        # reaches neither an average's enables nor its value, and the decision pipeline reads
        # the average registers themselves.
        before = Signal(rb)             # the average of the record's table at its check cycle
        with m.If(pend):
            m.d.sync += before.eq(by_table([averages[name] for name in TABLES]))
        new_average = Mux(div.next_bit, candidates[1], candidates[0])
        for index, (name, entries) in enumerate(tables.items()):
            preset = getattr(self.preset, name)
            slot = slots[name]
            mine = div_sel[index]
            dividing = dividing_at[name]
            speculating = Signal(name=f"speculating_{name}")
            with m.If(load[index]):
                m.d.sync += [entry.eq(preset) for entry in entries]
            with m.Elif(pend & mine):
                for i, entry in enumerate(entries):
                    with m.If(slot[i]):
                        m.d.sync += entry.eq(ones)
            with m.Elif(done & mine):
                for i, entry in enumerate(entries):
                    with m.If(dividing[i]):
                        m.d.sync += entry.eq(quotient)
            with m.If(pend & mine):
                m.d.sync += [slot.eq(slot.rotate_left(1)), dividing.eq(slot)]
            with m.If(load[index]):
                m.d.sync += averages[name].eq(preset)
            with m.Elif(pend & mine):
                m.d.sync += averages[name].eq(saturated[index])
            with m.Elif(done & mine):
                m.d.sync += averages[name].eq(new_average)
            # Speculating from a record's check cycle to its division's last step (or a preset
            # of the table), unless the check found it saturating (`pend_sat`, the cycle after):
            # the average register holds the saturated value meanwhile.
            m.d.sync += speculating.eq(~load[index] & ~pend_sat &
                                       ((pend & mine) | (speculating & ~(done & mine))))
            m.d.comb += getattr(self.average, name).eq(
                Mux(speculating & ~pend_sat, before, averages[name]))

        decisions(m, p, averages=averages, decide=self.decide, freq_ratio=self.freq_ratio,
                  result=self.result)
        return m
