"""The data-flow parts of :class:`ahasd.hw.controller.Controller`'s ``elaborate``.

Each function adds one named part to the controller's module ``m``: the bus, the queues, the EDC
decisions, the TVC requests and the GTS. ``ctl`` is the controller (its ports and sub-blocks),
``regs`` the CSR's register ports, and ``s`` a namespace of the signals the parts share (each
part documents what it adds to it). The order of the calls is the order of the data flow.
"""

from amaranth import Mux, Signal
from amaranth.lib import wiring

from ahasd.hw.gts import TaskKind
from ahasd.hw.tvc import Table

__all__ = ["bus", "queues", "edc_decisions", "tvc_requests", "gts_tasks"]


def bus(m, ctl, regs, ranks):
    """The AXI4-Lite port to the CSR, and the constant PARAMS register."""
    wiring.connect(m, wiring.flipped(ctl.s_axil), ctl._csr.s_axil)
    m.d.comb += [
        regs.params.draft_depth.eq(ctl.depths[0]),
        regs.params.feedback_depth.eq(ctl.depths[1]),
        regs.params.preverify_depth.eq(ctl.depths[2]),
        regs.params.ranks.eq(ranks),
    ]


def queues(m, ctl, s):
    """Draft queue PIM -> NPU (each push an EDC ``draft`` event) and feedback queue NPU -> PIM
    (each result handed over an EDC ``verify`` event and a TVC NVCT record).

    Adds ``s.draft_push`` and ``s.fb_pop`` (the handshakes of those events).
    """
    edc, tvc = ctl._edc, ctl._tvc
    dq, fq = ctl._queues.draft, ctl._queues.feedback
    s.draft_push = ctl.draft_in.valid & dq.i_stream.ready
    draft_event = edc.draft.signature.flip().create(path=("edc_draft",))
    m.d.comb += [
        dq.i_stream.valid.eq(ctl.draft_in.valid),
        dq.i_stream.payload.eq(ctl.draft_in.payload),
        ctl.draft_in.ready.eq(dq.i_stream.ready),
        ctl.draft_squash.eq(dq.w_squash),
        ctl.draft_out.valid.eq(dq.o_stream.valid),
        ctl.draft_out.payload.eq(dq.o_stream.payload),
        dq.o_stream.ready.eq(ctl.draft_out.ready),
        dq.squash.eq(ctl.squash),
        ctl.squash_ready.eq(dq.squash_ready),
        draft_event.valid.eq(s.draft_push),
        draft_event.payload.eq(ctl.draft_in.payload.mean_entropy),
    ]
    wiring.connect(m, draft_event, edc.draft)

    m.d.comb += [
        fq.i_stream.valid.eq(ctl.feedback_in.valid),
        fq.i_stream.payload.eq(ctl.feedback_in.payload),
        ctl.feedback_in.ready.eq(fq.i_stream.ready),
    ]
    verify_event = edc.verify.signature.flip().create(path=("edc_verify",))
    wiring.connect(m, verify_event, edc.verify)
    # Feedback results are TVC's first record source (priority over the PIM's records), so the
    # NVCT record's multipliers read the queue's output register, not a late multiplexer.
    fb_offer = fq.o_stream.valid & tvc.record_first.ready
    s.fb_pop = fb_offer & ctl.feedback_out.ready
    result = fq.o_stream.payload
    m.d.comb += [
        ctl.feedback_out.valid.eq(fb_offer),
        ctl.feedback_out.payload.eq(result),
        fq.o_stream.ready.eq(ctl.feedback_out.ready & tvc.record_first.ready),
        verify_event.valid.eq(s.fb_pop),
        verify_event.payload.eq(result.full),
        # Accepted exactly when fb_pop (TVC takes a record whenever it is ready).
        tvc.record_first.valid.eq(fq.o_stream.valid & ctl.feedback_out.ready),
        tvc.record_first.payload.table.eq(Table.NVCT),
        tvc.record_first.payload.cycles.eq(result.cycles),
        tvc.record_first.payload.length.eq(result.kv_length),
    ]
    # A PIM record goes in only in a cycle without a feedback record (TVC's record.ready).
    wiring.connect(m, wiring.flipped(ctl.record), tvc.record)


def edc_decisions(m, ctl, regs, s, modes):
    """EDC decisions after the ``EDC_CTRL.mode`` override and ``CTRL.enable``; EDC status.

    Adds ``s.decided`` (a decision leaves), ``s.draft`` (it says keep drafting), ``s.stop`` and
    ``s.last_stop`` (the last decision was a stop).
    """
    edc = ctl._edc
    mode = regs.edc_ctrl.mode
    s.draft = Signal()
    m.d.comb += s.draft.eq(Mux(mode == modes["always"], 1,
                               Mux(mode == modes["never"], 0, edc.decision.payload["continue"])))
    s.decided = edc.decision.valid & regs.ctrl.enable
    s.stop = s.decided & ~s.draft
    m.d.comb += [
        ctl.decision.valid.eq(s.decided),
        ctl.decision.payload.draft.eq(s.draft),
    ]
    s.last_stop = Signal()
    with m.If(s.decided):
        m.d.sync += s.last_stop.eq(~s.draft)
    m.d.comb += [
        regs.edc_status.llr.eq(edc.llr),
        regs.edc_status.pending.eq(edc.pending),
        regs.edc_status.last_continue.eq(~s.last_stop),
        regs.edc_decisions.count.eq(edc.decisions),
        regs.edc_suppressed.count.eq(edc.suppressed),
        regs.edc_verifications.count.eq(edc.verifications),
        regs.edc_squashes.count.eq(edc.squashes),
        regs.edc_fifo_drops.count.eq(edc.fifo_drops),
    ]


def tvc_requests(m, ctl, regs, s):
    """One TVC decision request at a time, only with room in the pre-verify queue; an insert
    becomes a pre-verify descriptor (length capped by ``TVC_CTRL.max_len``).

    Adds ``s.want`` / ``s.deciding`` (a request waits / is in TVC's pipeline), ``s.insert``,
    ``s.last_insert`` and ``s.tvc_error_event`` (the error count changed).
    """
    tvc, pq = ctl._tvc, ctl._queues.preverify
    tvc_ctrl = regs.tvc_ctrl
    soft_reset = regs.ctrl.soft_reset
    s.want = want = Signal()
    s.deciding = deciding = Signal()
    issue = Signal()
    m.d.comb += [
        tvc.freq_ratio.eq(regs.tvc_freq_ratio.ratio),
        tvc.preset.nvct.eq(regs.tvc_nvct_preset.ratio),
        tvc.preset.pdct.eq(regs.tvc_pdct_preset.ratio),
        tvc.preset.pvct.eq(regs.tvc_pvct_preset.ratio),
        tvc.preset.load.eq(tvc_ctrl.load_presets.replicate(3)),
        tvc.decide.valid.eq(want & ~deciding & pq.i_stream.ready),
        tvc.decide.payload.kv_len.eq(ctl.tvc_inputs.kv_len),
        tvc.decide.payload.now.eq(ctl.tvc_inputs.now),
        tvc.decide.payload.pending.eq(ctl.tvc_inputs.pending),
        issue.eq(tvc.decide.valid & tvc.decide.ready),
    ]
    with m.If(issue):
        m.d.sync += [want.eq(0), deciding.eq(1)]
    with m.If(s.stop & ~tvc_ctrl.disable):
        m.d.sync += want.eq(1)
    with m.If(tvc.result.valid):
        m.d.sync += deciding.eq(0)
    max_len = Mux(tvc_ctrl.max_len == 0, 1, tvc_ctrl.max_len)
    length = Signal(len(tvc.result.payload.length))
    m.d.comb += length.eq(Mux(tvc.result.payload.length > max_len, max_len,
                              tvc.result.payload.length))
    s.insert = Signal()
    m.d.comb += s.insert.eq(tvc.result.valid & tvc.result.payload.insert & ~tvc_ctrl.disable)
    # `issue` required pq.i_stream.ready and nothing else pushes into this queue, so it still
    # has room when the result arrives.
    m.d.comb += [
        pq.i_stream.valid.eq(s.insert),
        pq.i_stream.payload.verify_length.eq(length),
        pq.i_stream.payload.urgent.eq(0),
    ]
    last_length = Signal(len(regs.tvc_status.last_length))
    s.last_insert = Signal()
    with m.If(tvc.result.valid):
        m.d.sync += [last_length.eq(Mux(s.insert, length, 0)), s.last_insert.eq(s.insert)]
    with m.If(soft_reset):   # the request in flight is lost with TVC's pipeline
        m.d.sync += [want.eq(0), deciding.eq(0)]
    prev_errors = Signal.like(tvc.error_count)
    m.d.sync += prev_errors.eq(tvc.error_count)
    # A rise only: the count also changes when a soft reset clears it, which rejects nothing.
    s.tvc_error_event = tvc.error_count > prev_errors
    clear = regs.ctrl.clear_counters
    m.d.comb += [
        regs.tvc_decisions.count_incr.eq(issue),
        regs.tvc_decisions.count_clr.eq(clear),
        regs.tvc_inserts.count_incr.eq(s.insert),
        regs.tvc_inserts.count_clr.eq(clear),
        regs.tvc_errors.count.eq(tvc.error_count),
        regs.tvc_status.last_length.eq(last_length),
        regs.tvc_status.deciding.eq(want | deciding),
        regs.tvc_status.busy.eq(tvc.busy),
        regs.tvc_nvct_avg.ratio.eq(tvc.average.nvct),
        regs.tvc_pdct_avg.ratio.eq(tvc.average.pdct),
        regs.tvc_pvct_avg.ratio.eq(tvc.average.pvct),
    ]


def gts_tasks(m, ctl, regs, s):
    """GTS: pre-verify tasks first, then permitted draft requests.

    Drafting is allowed after a continue decision and after each verification result (a new
    verified base), and stopped by a stop decision.
    """
    gts, pq = ctl._gts, ctl._queues.preverify
    soft_reset = regs.ctrl.soft_reset
    enable = regs.ctrl.enable
    draft_allowed = Signal(init=1)
    with m.If(s.fb_pop):
        m.d.sync += draft_allowed.eq(1)
    with m.If(s.decided):
        m.d.sync += draft_allowed.eq(s.draft)
    # A refused request stays offered unchanged until GTS takes it (stream rule), even if the
    # gating changes meanwhile.
    held = Signal()
    held_pre = Signal()
    offer_pre = Signal()
    offer_draft = Signal()
    with m.If(soft_reset):
        pass   # GTS is being reset: it must not take (and so lose) a task in this cycle
    with m.Elif(held):
        m.d.comb += [
            offer_pre.eq(held_pre & pq.o_stream.valid),
            offer_draft.eq(~held_pre & ctl.draft_request.valid),
        ]
    with m.Else():
        m.d.comb += [
            offer_pre.eq(pq.o_stream.valid & enable),
            offer_draft.eq(~offer_pre & ctl.draft_request.valid & draft_allowed & enable),
        ]
    m.d.comb += [
        gts.i_task.valid.eq(offer_pre | offer_draft),
        gts.i_task.payload.kind.eq(Mux(offer_pre, TaskKind.PREVERIFY, TaskKind.DRAFT)),
        gts.i_task.payload.length.eq(Mux(offer_pre, pq.o_stream.payload.verify_length,
                                         ctl.draft_request.payload.length)),
        pq.o_stream.ready.eq(offer_pre & gts.i_task.ready),
        ctl.draft_request.ready.eq(offer_draft & gts.i_task.ready),
        gts.done.eq(ctl.task_done),
        gts.cfg.valid.eq(1),   # the masks follow their registers one cycle later
        gts.cfg.payload.draft_mask.eq(regs.gts_draft_mask.mask),
        gts.cfg.payload.preverify_mask.eq(regs.gts_preverify_mask.mask),
        ctl.rank_en.eq(gts.rank_en),
        regs.gts_status.state.eq(gts.state),
        regs.gts_status.switching.eq(gts.switching),
        regs.gts_status.draft_allowed.eq(draft_allowed),
        regs.gts_status.rank_enable.eq(gts.rank_en),
        regs.gts_switches.count.eq(gts.switch_count),
        regs.gts_busy.count.eq(gts.busy_count),
        regs.gts_stalls.count.eq(gts.stall_count),
    ]
    wiring.connect(m, gts.o_task, wiring.flipped(ctl.task))
    m.d.sync += [held.eq(gts.i_task.valid & ~gts.i_task.ready), held_pre.eq(offer_pre)]
    with m.If(soft_reset):
        m.d.sync += [held.eq(0), draft_allowed.eq(1)]
