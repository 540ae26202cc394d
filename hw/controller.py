"""Controller top: EDC + TVC + the three task queues + GTS behind one AXI4-Lite register file.

Clock domains: ``sync`` is the PIM clock (``clk`` / ``rst``; the CSR bus, EDC, TVC and the PIM
ends of the queues), ``npu`` the NPU clock (``npu_clk`` / ``npu_rst``; the NPU ends of the draft
and feedback queues). The registers are those of ``hw/regs.rdl`` (see ``docs/registers.md``).

Data flow
---------
* The PIM pushes each drafted batch into ``draft_in``; the push (handshake) is the EDC ``draft``
  event with the batch's mean entropy, and one cycle later ``decision`` says whether to keep
  drafting ahead (after the ``EDC_CTRL.mode`` override and ``CTRL.enable``).
* The NPU pops batches from ``draft_out``, squashes look-ahead with ``squash`` and pushes
  verification results into ``feedback_in``.
* The PIM takes results from ``feedback_out``. Each result handed over is, in the same cycle, the
  EDC ``verify`` event (``full``) and a TVC NVCT record (``cycles`` for ``kv_length`` tokens), so
  ``feedback_out`` is valid only while TVC can take a record. The PIM's own measurements (PDCT,
  PVCT) enter at ``record``; a feedback result wins a same-cycle conflict.
* A *stop* decision asks TVC for a decision on the values at ``tvc_inputs`` (one request at a
  time; stop decisions while one is outstanding merge into it). A request is issued only while
  the pre-verify queue has room, so its result can always be pushed: an insert becomes a
  pre-verify descriptor (length capped by ``TVC_CTRL.max_len``).
* The GTS (:class:`ahasd.hw.gts.GTS`) runs the PIM ranks: it takes pre-verify tasks from the
  pre-verify queue first, then the PIM's ``draft_request`` while drafting is allowed (after a
  continue decision or a verification result; a stop decision withholds them). Each task start
  appears on ``task`` with the ranks in ``rank_en``; the PIM reports ``task_done``.
"""

from amaranth import Cat, Module, Mux, ResetInserter, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.counters import EventCounter
from ahasd.hw.csr import AXI_PREFIX, CSR, axil_ports
from ahasd.hw.descriptors import DraftDescriptor, FeedbackDescriptor
from ahasd.hw.edc import EDC
from ahasd.hw.gts import GTS, Task, TaskKind
from ahasd.hw.queues import Queues
from ahasd.hw.regmap import load
from ahasd.hw.tvc import TVC, Table
from ahasd.sim.blocks.edc import EDCParams
from ahasd.sim.blocks.tvc import TVCParams

__all__ = ["Controller", "EDC_MODE_PREDICT", "EDC_MODE_ALWAYS", "EDC_MODE_NEVER"]

EDC_MODE_PREDICT = 0
EDC_MODE_ALWAYS = 1
EDC_MODE_NEVER = 2

#: Interrupt sources, in INT_STATUS bit order (the field names of hw/regs.rdl).
#: PIM ranks under the GTS (the width of the mask registers).
RANKS = 16

INTERRUPTS = ("draft_q", "feedback_q", "preverify_q", "edc_stop", "tvc_insert", "tvc_error")


class Controller(wiring.Component):
    """The AHASD controller: EDC, TVC, the task queues and GTS with CSRs, counters, interrupts.

    Parameters (keyword-only)
    -------------------------
    draft_depth, feedback_depth, preverify_depth : int
        Queue depths, powers of two >= 2 (64, 32, 16).
    addr_width : int
        AXI4-Lite byte-address width (default 8).
    edc, tvc : dict, optional
        Keyword parameters of :class:`ahasd.hw.edc.EDC` and :class:`ahasd.hw.tvc.TVC`.

    Ports
    -----
    s_axil_* : AXI4-Lite slave, ``sync`` (:class:`ahasd.hw.csr.CSR`).
    irq : Out(1), ``sync``
        OR of ``INT_STATUS & INT_ENABLE``.
    draft_in : In(stream of DraftDescriptor), ``sync``
        Drafted batches from the PIM (push-back while the draft queue is full).
    draft_squash : Out(1), ``sync``
        The draft queue's ``w_squash`` pulse: a squash reached the PIM.
    decision : Out({valid, draft}), ``sync``
        One cycle after each ``draft_in`` push: ``draft`` = keep drafting ahead.
    feedback_out : Out(stream of FeedbackDescriptor), ``sync``
        Verification results to the PIM.
    record : In(stream of {table, cycles, length}), ``sync``
        PIM-measured TVC records (:class:`ahasd.hw.tvc.Table` PDCT or PVCT).
    tvc_inputs : In({kv_len, now, pending}), ``sync``
        Operands of TVC decisions: KV length, NPU cycles elapsed in the current verification
        (NCR), unverified tokens available. Sampled when a request is issued; the integrator
        keeps them stable in the PIM clock domain.
    draft_request : In(stream of {length}), ``sync``
        The PIM asks to draft a batch of ``length`` tokens; taken by GTS while drafting is
        allowed and no pre-verify task waits.
    task : Out({start, payload: ahasd.hw.gts.Task}), ``sync``
        ``start`` pulses when GTS starts a task (``payload``: kind DRAFT / PREVERIFY, length).
    task_done : In(1), ``sync``
        The running task finishes.
    rank_en : Out(16), ``sync``
        Rank enables (GTS_DRAFT_MASK / GTS_PREVERIFY_MASK while a task of that kind runs).
    draft_out : Out(stream of DraftDescriptor), ``npu``
        Batches for the NPU to verify.
    squash : In(1), squash_ready : Out(1), ``npu``
        Squash the look-ahead (see :class:`ahasd.hw.draft_queue.DraftQueue`).
    feedback_in : In(stream of FeedbackDescriptor), ``npu``
        Verification results from the NPU.
    """

    def __init__(self, *, draft_depth=64, feedback_depth=32, preverify_depth=16, addr_width=8,
                 edc=None, tvc=None):
        parts = []
        try:
            with rejecting_construction(self):
                for name, value in (("edc", edc), ("tvc", tvc)):
                    if value is not None and not isinstance(value, dict):
                        raise ValueError(f"{name} must be a dict of parameters, not {value!r}")
                # Validate every parameter before building anything: a part built before an
                # error would warn that it was never elaborated (and so would its own parts).
                self._check_fit(EDCParams(**(edc or {})), TVCParams(**(tvc or {})))
                parts.append(CSR(regmap=load(), addr_width=addr_width))
                parts.append(Queues(draft_depth=draft_depth, feedback_depth=feedback_depth,
                                    preverify_depth=preverify_depth, npu_domain="npu",
                                    pim_domain="sync"))
                parts.append(EDC(**(edc or {})))
                parts.append(TVC(**(tvc or {})))
                parts.append(GTS(ranks=RANKS))
        except Exception:
            for part in parts:   # built before the error; they will never be elaborated
                part._MustUse__silence = True
            raise
        self._csr, self._queues, self._edc, self._tvc, self._gts = parts
        self.depths = (draft_depth, feedback_depth, preverify_depth)
        tp = self._tvc.params
        super().__init__({
            **axil_ports(addr_width),
            "irq": Out(1),
            "draft_in": In(stream.Signature(DraftDescriptor)),
            "draft_squash": Out(1),
            "decision": Out(wiring.Signature({"valid": Out(1), "draft": Out(1)})),
            "feedback_out": Out(stream.Signature(FeedbackDescriptor)),
            "record": In(stream.Signature(self._tvc.record_layout)),
            "tvc_inputs": In(wiring.Signature({"kv_len": Out(tp.length_bits),
                                               "now": Out(tp.cycles_bits),
                                               "pending": Out(tp.length_bits)})),
            "draft_request": In(stream.Signature(
                data.StructLayout({"length": Task["length"].shape}))),
            "task": Out(wiring.Signature({"start": Out(1), "payload": Out(Task)})),
            "task_done": In(1),
            "rank_en": Out(RANKS),
            "draft_out": Out(stream.Signature(DraftDescriptor)),
            "squash": In(1),
            "squash_ready": Out(1),
            "feedback_in": In(stream.Signature(FeedbackDescriptor)),
        })

    @staticmethod
    def _check_fit(edc, tvc):
        """Block parameters must fit the descriptor fields and the register fields."""
        limits = [
            ("tvc", "cycles_bits", tvc.cycles_bits, 32, 32, "the feedback descriptor's cycles"),
            ("tvc", "length_bits", tvc.length_bits, 16, 16,
             "the feedback descriptor's kv_length"),
            ("tvc", "ratio_bits", tvc.ratio_bits, 9, 32, "the 32-bit preset registers"),
            ("tvc", "max_preverify_len", tvc.max_preverify_len, 1, 15,
             "the 4-bit pre-verify length"),
            ("tvc", "counter_bits", tvc.counter_bits, 1, 16, "the 16-bit TVC_ERRORS register"),
            ("edc", "llr_bits", edc.llr_bits, 1, 8, "the 8-bit EDC_STATUS.llr field"),
            ("edc", "fifo_depth_log2", edc.fifo_depth_log2, 0, 7,
             "the 8-bit EDC_STATUS.pending field"),
        ]
        for block, name, value, low, high, why in limits:
            if not low <= value <= high:
                span = f"{low}" if low == high else f"in {low}..{high}"
                raise ValueError(f"{block} {name} must be {span} to fit {why}, not {value}")

    def elaborate(self, platform):
        m = Module()
        csr, queues = self._csr, self._queues
        regs = csr.regs
        soft_reset = regs.ctrl.soft_reset
        clear = regs.ctrl.clear_counters
        m.submodules.csr = csr
        m.submodules.queues = queues
        m.submodules.edc = edc = ResetInserter(soft_reset)(self._edc)
        m.submodules.tvc = tvc = ResetInserter(soft_reset)(self._tvc)
        m.submodules.gts = ResetInserter(soft_reset)(self._gts)
        edc, tvc, gts = self._edc, self._tvc, self._gts

        # ---- the bus -----------------------------------------------------------------------
        for name, member in axil_ports(csr.addr_width).items():
            if member.flow == In:
                m.d.comb += getattr(csr, name).eq(getattr(self, name))
            else:
                m.d.comb += getattr(self, name).eq(getattr(csr, name))
        m.d.comb += [
            regs.params.draft_depth.eq(self.depths[0]),
            regs.params.feedback_depth.eq(self.depths[1]),
            regs.params.preverify_depth.eq(self.depths[2]),
            regs.params.ranks.eq(RANKS),
        ]

        # ---- draft queue: PIM -> NPU, each push is an EDC draft event -------------------------
        dq = queues.draft
        draft_push = self.draft_in.valid & dq.i_stream.ready
        m.d.comb += [
            dq.i_stream.valid.eq(self.draft_in.valid),
            dq.i_stream.payload.eq(self.draft_in.payload),
            self.draft_in.ready.eq(dq.i_stream.ready),
            self.draft_squash.eq(dq.w_squash),
            self.draft_out.valid.eq(dq.o_stream.valid),
            self.draft_out.payload.eq(dq.o_stream.payload),
            dq.o_stream.ready.eq(self.draft_out.ready),
            dq.squash.eq(self.squash),
            self.squash_ready.eq(dq.squash_ready),
            edc.draft_valid.eq(draft_push),
            edc.draft_entropy.eq(self.draft_in.payload.mean_entropy),
        ]

        # ---- feedback queue: NPU -> PIM, each result is an EDC verify and a TVC record ------
        fq = queues.feedback
        m.d.comb += [
            fq.i_stream.valid.eq(self.feedback_in.valid),
            fq.i_stream.payload.eq(self.feedback_in.payload),
            self.feedback_in.ready.eq(fq.i_stream.ready),
        ]
        fb_offer = fq.o_stream.valid & tvc.record.ready
        fb_pop = fb_offer & self.feedback_out.ready
        result = fq.o_stream.payload
        m.d.comb += [
            self.feedback_out.valid.eq(fb_offer),
            self.feedback_out.payload.eq(result),
            fq.o_stream.ready.eq(self.feedback_out.ready & tvc.record.ready),
            edc.verify_valid.eq(fb_pop),
            edc.verify_full.eq(result.full),
            # A PIM record goes in only in a cycle without a feedback record.
            self.record.ready.eq(tvc.record.ready & ~fb_pop),
            tvc.record.valid.eq(fb_pop | self.record.valid),
        ]
        with m.If(fb_pop):
            m.d.comb += [
                tvc.record.payload.table.eq(Table.NVCT),
                tvc.record.payload.cycles.eq(result.cycles),
                tvc.record.payload.length.eq(result.kv_length),
            ]
        with m.Else():
            m.d.comb += tvc.record.payload.eq(self.record.payload)

        # ---- EDC decisions ------------------------------------------------------------------
        mode = regs.edc_ctrl.mode
        enable = regs.ctrl.enable
        draft = Signal()
        m.d.comb += draft.eq(Mux(mode == EDC_MODE_ALWAYS, 1,
                                 Mux(mode == EDC_MODE_NEVER, 0, edc.decision_continue)))
        decided = edc.decision_valid & enable
        stop = decided & ~draft
        m.d.comb += [
            self.decision.valid.eq(decided),
            self.decision.draft.eq(draft),
        ]
        last_stop = Signal()
        with m.If(decided):
            m.d.sync += last_stop.eq(~draft)
        m.d.comb += [
            regs.edc_status.llr.eq(edc.llr),
            regs.edc_status.pending.eq(edc.pending),
            regs.edc_status.last_continue.eq(~last_stop),
            regs.edc_decisions.count.eq(edc.decisions),
            regs.edc_suppressed.count.eq(edc.suppressed),
            regs.edc_verifications.count.eq(edc.verifications),
            regs.edc_squashes.count.eq(edc.squashes),
            regs.edc_fifo_drops.count.eq(edc.fifo_drops),
        ]

        # ---- TVC: one decision request at a time, only with room in the pre-verify queue -----
        pq = queues.preverify
        tvc_ctrl = regs.tvc_ctrl
        want = Signal()      # a stop decision waits for a TVC request
        deciding = Signal()  # a request is in TVC's pipeline
        issue = Signal()
        m.d.comb += [
            tvc.freq_ratio.eq(regs.tvc_freq_ratio.ratio),
            tvc.preset.nvct.eq(regs.tvc_nvct_preset.ratio),
            tvc.preset.pdct.eq(regs.tvc_pdct_preset.ratio),
            tvc.preset.pvct.eq(regs.tvc_pvct_preset.ratio),
            tvc.preset.load.eq(tvc_ctrl.load_presets.replicate(3)),
            tvc.decide.valid.eq(want & ~deciding & pq.i_stream.ready),
            tvc.decide.payload.kv_len.eq(self.tvc_inputs.kv_len),
            tvc.decide.payload.now.eq(self.tvc_inputs.now),
            tvc.decide.payload.pending.eq(self.tvc_inputs.pending),
            issue.eq(tvc.decide.valid & tvc.decide.ready),
        ]
        with m.If(issue):
            m.d.sync += [want.eq(0), deciding.eq(1)]
        with m.If(stop & ~tvc_ctrl.disable):
            m.d.sync += want.eq(1)
        with m.If(tvc.result.valid):
            m.d.sync += deciding.eq(0)
        max_len = Mux(tvc_ctrl.max_len == 0, 1, tvc_ctrl.max_len)
        length = Signal(len(tvc.result.payload.length))
        m.d.comb += length.eq(Mux(tvc.result.payload.length > max_len, max_len,
                                  tvc.result.payload.length))
        insert = Signal()
        m.d.comb += insert.eq(tvc.result.valid & tvc.result.payload.insert & ~tvc_ctrl.disable)
        # `issue` required pq.i_stream.ready and nothing else pushes into this queue, so it still
        # has room when the result arrives.
        m.d.comb += [
            pq.i_stream.valid.eq(insert),
            pq.i_stream.payload.verify_length.eq(length),
            pq.i_stream.payload.urgent.eq(0),
        ]
        last_length = Signal(4)
        last_insert = Signal()
        with m.If(tvc.result.valid):
            m.d.sync += [last_length.eq(Mux(insert, length, 0)), last_insert.eq(insert)]
        with m.If(soft_reset):   # the request in flight is lost with TVC's pipeline
            m.d.sync += [want.eq(0), deciding.eq(0)]
        prev_errors = Signal.like(tvc.error_count)
        m.d.sync += prev_errors.eq(tvc.error_count)
        m.d.comb += [
            regs.tvc_decisions.count_incr.eq(issue),
            regs.tvc_decisions.count_clr.eq(clear),
            regs.tvc_inserts.count_incr.eq(insert),
            regs.tvc_inserts.count_clr.eq(clear),
            regs.tvc_errors.count.eq(tvc.error_count),
            regs.tvc_status.last_length.eq(last_length),
            regs.tvc_status.deciding.eq(want | deciding),
            regs.tvc_status.busy.eq(tvc.busy),
            regs.tvc_nvct_avg.ratio.eq(tvc.average.nvct),
            regs.tvc_pdct_avg.ratio.eq(tvc.average.pdct),
            regs.tvc_pvct_avg.ratio.eq(tvc.average.pvct),
        ]

        # ---- GTS: pre-verify tasks first, then permitted draft requests -----------------------
        # Drafting is allowed after a continue decision and after each verification result (a
        # new verified base), and stopped by a stop decision.
        draft_allowed = Signal(init=1)
        with m.If(fb_pop):
            m.d.sync += draft_allowed.eq(1)
        with m.If(decided):
            m.d.sync += draft_allowed.eq(draft)
        # A refused request stays offered unchanged until GTS takes it (stream rule), even if
        # the gating changes meanwhile.
        held = Signal()
        held_pre = Signal()
        offer_pre = Signal()
        offer_draft = Signal()
        with m.If(soft_reset):
            pass   # GTS is being reset: it must not take (and so lose) a task in this cycle
        with m.Elif(held):
            m.d.comb += [
                offer_pre.eq(held_pre & pq.o_stream.valid),
                offer_draft.eq(~held_pre & self.draft_request.valid),
            ]
        with m.Else():
            m.d.comb += [
                offer_pre.eq(pq.o_stream.valid & enable),
                offer_draft.eq(~offer_pre & self.draft_request.valid & draft_allowed & enable),
            ]
        m.d.comb += [
            gts.i_task.valid.eq(offer_pre | offer_draft),
            gts.i_task.payload.kind.eq(Mux(offer_pre, TaskKind.PREVERIFY, TaskKind.DRAFT)),
            gts.i_task.payload.length.eq(Mux(offer_pre, pq.o_stream.payload.verify_length,
                                             self.draft_request.payload.length)),
            pq.o_stream.ready.eq(offer_pre & gts.i_task.ready),
            self.draft_request.ready.eq(offer_draft & gts.i_task.ready),
            gts.done.eq(self.task_done),
            gts.cfg_we.eq(1),   # the masks follow their registers one cycle later
            gts.cfg_draft_mask.eq(regs.gts_draft_mask.mask),
            gts.cfg_preverify_mask.eq(regs.gts_preverify_mask.mask),
            self.task.start.eq(gts.o_start),
            self.task.payload.eq(gts.o_task),
            self.rank_en.eq(gts.rank_en),
            regs.gts_status.state.eq(gts.state),
            regs.gts_status.switching.eq(gts.switching),
            regs.gts_status.draft_allowed.eq(draft_allowed),
            regs.gts_status.rank_enable.eq(gts.rank_en),
            regs.gts_switches.count.eq(gts.switch_count),
            regs.gts_busy.count.eq(gts.busy_count),
            regs.gts_stalls.count.eq(gts.stall_count),
        ]
        m.d.sync += [held.eq(gts.i_task.valid & ~gts.i_task.ready), held_pre.eq(offer_pre)]
        with m.If(soft_reset):
            m.d.sync += [held.eq(0), draft_allowed.eq(1)]

        # ---- queue status and counters ------------------------------------------------------
        npu = "npu"
        discarded_prev = Signal.like(dq.discarded)
        m.d[npu] += discarded_prev.eq(dq.discarded)
        events = {
            "draft_q_pushes": (draft_push, "sync"),
            "draft_q_pops": (dq.o_stream.valid & dq.o_stream.ready, npu),
            "draft_q_pushbacks": (self.draft_in.valid & ~dq.i_stream.ready, "sync"),
            "feedback_q_pushes": (fq.i_stream.valid & fq.i_stream.ready, npu),
            "feedback_q_pops": (fb_pop, "sync"),
            "feedback_q_pushbacks": (fq.i_stream.valid & ~fq.i_stream.ready, npu),
            "preverify_q_pushes": (insert, "sync"),
            "preverify_q_pops": (pq.o_stream.valid & pq.o_stream.ready, "sync"),
            "preverify_q_pushbacks": (want & ~deciding & ~pq.i_stream.ready, "sync"),
            "squashes": (dq.squash & dq.squash_ready, npu),
            "squash_discarded": (dq.discarded != discarded_prev, npu),
        }
        for name, (event, domain) in events.items():
            counter = EventCounter(domain=domain, read_domain="sync")
            m.submodules[f"count_{name}"] = counter
            m.d.comb += [
                counter.event.eq(event),
                counter.clear.eq(clear),
                getattr(regs, name).count.eq(counter.count),
            ]
        fills = {"draft_q": dq.w_level, "feedback_q": fq.r_level, "preverify_q": pq.w_level}
        raw = {}
        for (name, fill), depth in zip(fills.items(), self.depths):
            status = getattr(regs, f"{name}_status")
            threshold = getattr(regs, f"{name}_threshold").threshold
            m.d.comb += [
                status.fill.eq(fill),
                status.empty.eq(fill == 0),
                status.full.eq(fill >= depth),
            ]
            raw[name] = Signal(name=f"{name}_over")
            m.d.comb += raw[name].eq((threshold != 0) & (fill >= threshold))

        # ---- interrupts ----------------------------------------------------------------------
        raw["edc_stop"] = last_stop
        raw["tvc_insert"] = last_insert
        raw["tvc_error"] = tvc.error_count != 0
        events = {
            "edc_stop": stop,
            "tvc_insert": insert,
            "tvc_error": tvc.error_count != prev_errors,
        }
        for name in ("draft_q", "feedback_q", "preverify_q"):
            prev = Signal(name=f"{name}_over_prev")
            m.d.sync += prev.eq(raw[name])
            events[name] = raw[name] & ~prev   # the rising edge: one event per crossing
        for name in INTERRUPTS:
            m.d.comb += [
                getattr(regs.int_status, f"{name}_set").eq(events[name]),
                getattr(regs.int_raw, name).eq(raw[name]),
            ]
        m.d.comb += [
            self.irq.eq(Cat(*(getattr(regs.int_status, n) & getattr(regs.int_enable, n)
                              for n in INTERRUPTS)).any()),
            regs.int_count.count_incr.eq(Cat(*(events[n] & getattr(regs.int_enable, n)
                                               for n in INTERRUPTS)).any()),
            regs.int_count.count_clr.eq(clear),
        ]
        return m
