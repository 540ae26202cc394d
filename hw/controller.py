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

from types import SimpleNamespace

from amaranth import Module, ResetInserter
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw import controller_flow as flow
from ahasd.hw import controller_status as status
from ahasd.hw.axil import AXILiteSignature
from ahasd.hw.compat import silence_unused
from ahasd.hw.construction import rejecting_construction
from ahasd.hw.csr import AXI_PREFIX, CSR
from ahasd.hw.descriptors import DraftDescriptor, FeedbackDescriptor
from ahasd.hw.edc import EDC
from ahasd.hw.gts import GTS, Task
from ahasd.hw.queues import Queues
from ahasd.hw.regmap import load, narrow_counters
from ahasd.hw.tvc import TVC
from ahasd.spec.edc import EDCParams
from ahasd.spec.params import COUNTER_BITS, check_instance, check_int
from ahasd.spec.tvc import TVCParams

__all__ = ["Controller", "EDC_MODES", "INTERRUPTS", "RANKS", "DECISION", "DRAFT_REQUEST"]

#: EDC_CTRL.mode values by name: the enumeration of the field in hw/regs.rdl.
EDC_MODES = load()["EDC_CTRL"].field("mode").values

#: PIM ranks under the GTS: the width of the rank-mask registers in hw/regs.rdl.
RANKS = load()["GTS_DRAFT_MASK"].field("mask").width

INTERRUPTS = status.INTERRUPTS

#: Payload of the ``decision`` stream: ``draft`` = keep drafting ahead.
DECISION = data.StructLayout({"draft": 1})
#: Payload of the ``draft_request`` stream: the tokens to draft.
DRAFT_REQUEST = data.StructLayout({"length": Task["length"].shape})


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
    counter_bits : int
        Width of every event counter (default :data:`ahasd.spec.params.COUNTER_BITS`, the
        width of the counter registers). A narrower value builds a test instance whose register
        map has its counter fields narrowed (:func:`ahasd.hw.regmap.narrow_counters`) and whose
        counters saturate or wrap at that width; TVC's record-error counter then defaults to it.

    Ports
    -----
    s_axil : In(:class:`ahasd.hw.axil.AXILiteSignature`), ports ``s_axil_*``, ``sync``
        AXI4-Lite slave (:class:`ahasd.hw.csr.CSR`).
    irq : Out(1), ``sync``
        OR of ``INT_STATUS & INT_ENABLE``.
    draft_in : In(stream of DraftDescriptor), ``sync``
        Drafted batches from the PIM (push-back while the draft queue is full).
    draft_squash : Out(1), ``sync``
        The draft queue's ``w_squash`` pulse: a squash reached the PIM.
    decision : Out(stream.Signature({draft}, always_ready=True)), ``sync``
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
    task : Out(stream.Signature(ahasd.hw.gts.Task, always_ready=True)), ``sync``
        ``valid`` pulses when GTS starts a task (``payload``: kind DRAFT / PREVERIFY, length).
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
                 edc=None, tvc=None, counter_bits=COUNTER_BITS):
        parts = []
        try:
            with rejecting_construction(self):
                for name, value in (("edc", edc), ("tvc", tvc)):
                    check_instance(name, value, dict, optional=True, what="dict of parameters")
                check_int("counter_bits", counter_bits, 1, COUNTER_BITS)
                regmap = load() if counter_bits == COUNTER_BITS else \
                    narrow_counters(load(), counter_bits)
                errors_width = regmap["TVC_ERRORS"].field("count").width
                tvc = {"counter_bits": min(TVCParams().counter_bits, errors_width),
                       **(tvc or {})}
                # Validate every parameter before building anything: a part built before an
                # error would warn that it was never elaborated (and so would its own parts).
                self._check_fit(EDCParams(**(edc or {})), TVCParams(**tvc), errors_width)
                parts.append(CSR(regmap=regmap, addr_width=addr_width))
                parts.append(Queues(draft_depth=draft_depth, feedback_depth=feedback_depth,
                                    preverify_depth=preverify_depth, npu_domain="npu",
                                    pim_domain="sync"))
                parts.append(EDC(**(edc or {}), stats_bits=counter_bits))
                parts.append(TVC(**tvc, second_record=True))
                parts.append(GTS(ranks=RANKS, stats_bits=counter_bits))
        except Exception:
            for part in parts:   # built before the error; they will never be elaborated
                silence_unused(part)
            raise
        self._csr, self._queues, self._edc, self._tvc, self._gts = parts
        self.depths = (draft_depth, feedback_depth, preverify_depth)
        self.counter_bits = counter_bits
        tp = self._tvc.params
        super().__init__({
            AXI_PREFIX: In(AXILiteSignature(addr_width)),
            "irq": Out(1),
            "draft_in": In(stream.Signature(DraftDescriptor)),
            "draft_squash": Out(1),
            "decision": Out(stream.Signature(DECISION, always_ready=True)),
            "feedback_out": Out(stream.Signature(FeedbackDescriptor)),
            "record": In(stream.Signature(self._tvc.record_layout)),
            "tvc_inputs": In(wiring.Signature({"kv_len": Out(tp.length_bits),
                                               "now": Out(tp.cycles_bits),
                                               "pending": Out(tp.length_bits)})),
            "draft_request": In(stream.Signature(DRAFT_REQUEST)),
            "task": Out(stream.Signature(Task, always_ready=True)),
            "task_done": In(1),
            "rank_en": Out(RANKS),
            "draft_out": Out(stream.Signature(DraftDescriptor)),
            "squash": In(1),
            "squash_ready": Out(1),
            "feedback_in": In(stream.Signature(FeedbackDescriptor)),
        })

    @staticmethod
    def _check_fit(edc, tvc, errors_width=COUNTER_BITS):
        """Block parameters must fit the descriptor fields and the register fields."""
        limits = [
            ("tvc", "cycles_bits", tvc.cycles_bits, 32, 32, "the feedback descriptor's cycles"),
            ("tvc", "length_bits", tvc.length_bits, 16, 16,
             "the feedback descriptor's kv_length"),
            ("tvc", "ratio_bits", tvc.ratio_bits, 9, 32, "the 32-bit preset registers"),
            ("tvc", "max_preverify_len", tvc.max_preverify_len, 1, 15,
             "the 4-bit pre-verify length"),
            ("tvc", "counter_bits", tvc.counter_bits, 1, errors_width,
             f"the {errors_width}-bit TVC_ERRORS register"),
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
        regs = self._csr.regs
        soft_reset = regs.ctrl.soft_reset
        m.submodules.csr = self._csr
        m.submodules.queues = self._queues
        m.submodules.edc = ResetInserter(soft_reset)(self._edc)
        m.submodules.tvc = ResetInserter(soft_reset)(self._tvc)
        m.submodules.gts = ResetInserter(soft_reset)(self._gts)
        s = SimpleNamespace()   # the signals the parts share (see ahasd.hw.controller_flow)
        flow.bus(m, self, regs, RANKS)
        flow.queues(m, self, s)
        flow.edc_decisions(m, self, regs, s, EDC_MODES)
        flow.tvc_requests(m, self, regs, s)
        flow.gts_tasks(m, self, regs, s)
        status.queue_counters(m, self, regs, s)
        status.interrupts(m, self, regs, s)
        return m
