"""cocotb testbench of the controller top (:class:`ahasd.hw.controller.Controller`).

:class:`ControllerTB` is the AXI4-Lite TB base (:class:`ahasd.tb.axil.AxiLiteTB`, both clocks
and resets) plus one stream driver per stream port (:mod:`ahasd.tb.cocotb_streams`) and the
golden models that scoreboard them: the draft queue (:class:`SquashQueueModel`), the feedback
queue and the draft requests waiting for their task (:class:`QueueModel`). Registers are read
and written by name through the base's ``driver`` (:mod:`ahasd.firmware.driver`). Random traffic
(``traffic``, ``squashing``, the probabilities ``p_valid`` / ``p_ready`` / ``p_done``) and
directed items (``send`` on a source) go through the same drivers.

Each clock runs its drivers in a fixed order (:func:`ahasd.tb.cocotb_streams.run_in_order`):
on the PIM clock a squash that reaches the producer is applied to the model before the same
cycle's push, which is the order of :class:`SquashQueueModel`.
"""

import collections

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from ahasd.hw import descriptors as layouts
from ahasd.hw.controller import DECISION, DRAFT_REQUEST
from ahasd.hw.gts import Task, TaskKind
from ahasd.hw.tvc import record_layout
from ahasd.sim.blocks.queues import QueueModel, SquashQueueModel
from ahasd.sim.blocks.tvc import TVCParams
from ahasd.spec.clocks import NPU_PERIOD_PS, PIM_PERIOD_PS
from ahasd.spec.descriptors import DraftDescriptor, FeedbackDescriptor, PreverifyDescriptor
from ahasd.tb.axil import AxiLiteTB
from ahasd.tb.cocotb_domains import Domain
from ahasd.tb.cocotb_streams import Step, StreamSink, StreamSource, run_in_order
from ahasd.tb.generators import pauses

__all__ = ["ControllerTB", "PIM_PERIOD_PS", "NPU_PERIOD_PS"]

TIMEOUT_NS = 5000
#: Verification results the NPU model holds back at most (see ``ControllerTB._verify``).
MAX_OUTSTANDING = 8
#: Tables of TVC records, by their code.
TABLES = ("nvct", "pdct", "pvct")


class ControllerTB(AxiLiteTB):
    """Clocks, resets, bus, stream drivers and queue scoreboards of the controller top."""

    def __init__(self, dut):
        super().__init__(dut, domains=(Domain("clk", "rst", PIM_PERIOD_PS),
                                       Domain("npu_clk", "npu_rst", NPU_PERIOD_PS)),
                         timeout_ns=TIMEOUT_NS, seed=7)
        self.depths = (self.p["draft_depth"], self.p["feedback_depth"],
                       self.p["preverify_depth"])
        self.traffic = False        # the sources offer random descriptors and requests
        self.squashing = False      # the NPU may squash
        self.auto_feedback = True   # the NPU answers some popped drafts with a random result
        self.p_valid, self.p_ready, self.p_done = 0.5, 0.6, 0.3
        self.done_pulses = 0        # directed tests: cycles of task_done to drive
        self.draft_q = SquashQueueModel()
        self.feedback_q = QueueModel()
        self.requests = QueueModel()   # draft requests taken, waiting for their task start
        self.events = collections.Counter()
        self.preverify, self.decisions, self.tasks, self.feedback_seen = [], [], [], []
        self.batch = 0
        self._squash = False
        self._build_drivers()

    def _build_drivers(self):
        d, rng = self.dut, self.rng

        def idle():   # random gaps only in random traffic; directed items go out at once
            return pauses(lambda: 1 - self.p_valid if self.traffic else 0.0, rng)

        def busy():
            return pauses(lambda: 1 - self.p_ready, rng)

        opts = {"start": False}
        self.draft_in = StreamSource(d, "draft_in", d.clk, layouts.DraftDescriptor,
                                     fill=self._random_draft, on_accept=self._drafted, **opts)
        self.draft_in.set_idle_generator(idle())
        self.record = StreamSource(d, "record", d.clk, record_layout(TVCParams()), **opts)
        self.draft_request = StreamSource(d, "draft_request", d.clk, DRAFT_REQUEST,
                                          fill=self._random_request,
                                          on_accept=lambda r: self.requests.push(r["length"]),
                                          **opts)
        self.draft_request.set_idle_generator(idle())
        self.feedback_out = StreamSink(d, "feedback_out", d.clk, layouts.FeedbackDescriptor,
                                       cls=FeedbackDescriptor, on_item=self._result, **opts)
        self.feedback_out.set_backpressure_generator(busy())
        self.task = StreamSink(d, "task", d.clk, Task, on_item=self._task_started, **opts)
        self.decision = StreamSink(d, "decision", d.clk, DECISION, keep=False,
                                   on_item=lambda x: self.decisions.append(int(x.draft)), **opts)
        self.draft_out = StreamSink(d, "draft_out", d.npu_clk, layouts.DraftDescriptor,
                                    cls=DraftDescriptor, on_item=self._verify, **opts)
        self.draft_out.set_backpressure_generator(busy())
        self.feedback_in = StreamSource(d, "feedback_in", d.npu_clk,
                                        layouts.FeedbackDescriptor,
                                        on_accept=self.feedback_q.push, **opts)
        self.feedback_in.set_idle_generator(pauses(lambda: 1 - self.p_valid, rng))
        self.pim_parts = [Step(sample=self._w_squash), self.draft_in, self.feedback_out,
                          self.draft_request, self.task, self.record, self.decision,
                          Step(drive=self._drive_done)]
        self.npu_parts = [self.draft_out, Step(sample=self._squashed, drive=self._drive_squash),
                          self.feedback_in]

    # ---- what the drivers do -------------------------------------------------------------
    def _random_draft(self):
        if not self.traffic:
            return None
        self.batch += 1
        return DraftDescriptor(batch_id=self.batch & 0xFFFF, length=self.rng.randrange(1, 9),
                               kv_base=self.rng.getrandbits(16),
                               mean_entropy=self.rng.getrandbits(16))

    def _random_request(self):
        return {"length": self.rng.randrange(1, 256)} if self.traffic else None

    def _drafted(self, item):
        self.draft_q.push(item)

    def _w_squash(self):
        if int(self.dut.draft_squash.value):
            self.draft_q.w_squash()

    def _result(self, item):
        self.feedback_q.pop(item)
        self.feedback_seen.append(item)

    def _task_started(self, task):
        self.tasks.append((int(task.kind.value), int(task.length)))
        if task.kind == TaskKind.PREVERIFY:
            self.preverify.append(PreverifyDescriptor(verify_length=int(task.length), urgent=0))
        else:
            self.requests.pop(int(task.length))

    def _drive_done(self):
        self.dut.task_done.value = self.rng.random() < self.p_done or self.done_pulses > 0
        self.done_pulses = max(0, self.done_pulses - 1)

    def _verify(self, item):
        self.draft_q.pop(item)
        # A result for about one batch in six: each result is also a TVC record, and TVC takes
        # one record per ~26 cycles (sequential divider). Like a real NPU, at most
        # MAX_OUTSTANDING results wait to be pushed; more would pile up faster than TVC takes
        # them under heavy traffic, and the queues could not drain in bounded time.
        if (self.auto_feedback and self.traffic and len(self.feedback_in.queue) < MAX_OUTSTANDING
                and self.rng.random() < 0.15):
            rng = self.rng
            self.feedback_in.send(FeedbackDescriptor(
                accepted_length=rng.randrange(9), full=rng.getrandbits(1),
                cycles=rng.getrandbits(20), kv_length=rng.randrange(1, 4096)))

    def _squashed(self):
        if self._squash and int(self.dut.squash_ready.value):
            self.draft_q.squash()
            self.events["squashes"] += 1
            self._squash = False

    def _drive_squash(self):
        if not self._squash and self.squashing and self.rng.random() < 0.01:
            self._squash = True
        self.dut.squash.value = self._squash

    # ---- test steps -----------------------------------------------------------------------
    async def reset(self):
        d = self.dut
        for name in ("task_done", "squash", "tvc_inputs__kv_len", "tvc_inputs__now",
                     "tvc_inputs__pending"):
            getattr(d, name).value = 0
        await super().reset()
        cocotb.start_soon(run_in_order(d.clk, self.pim_parts))
        cocotb.start_soon(run_in_order(d.npu_clk, self.npu_parts))

    def counts(self):
        """Queue events seen so far, by the name of their counter register."""
        return {
            "draft_q_pushes": self.draft_in.accepted, "draft_q_pops": len(self.draft_out.items),
            "draft_q_pushbacks": self.draft_in.stalls,
            "feedback_q_pushes": self.feedback_in.accepted,
            "feedback_q_pops": len(self.feedback_out.items),
            "feedback_q_pushbacks": self.feedback_in.stalls,
            "preverify_q_pops": len(self.preverify), "squashes": self.events["squashes"],
        }

    def tvc_inputs(self, kv_len, now, pending):
        self.dut.tvc_inputs__kv_len.value = kv_len
        self.dut.tvc_inputs__now.value = now
        self.dut.tvc_inputs__pending.value = pending

    def send_record(self, table, cycles, length):
        """Queue a PIM record for TVC (``table`` a code 0..2)."""
        self.record.send({"table": table, "cycles": cycles, "length": length})
        return TABLES[table], cycles, length

    async def draft(self, entropy):
        """Push one draft with ``entropy`` (UQ4.12) and return the controller's decision."""
        self.batch += 1
        before = len(self.decisions)
        self.draft_in.send(DraftDescriptor(batch_id=self.batch & 0xFFFF, length=4, kv_base=0,
                                           mean_entropy=entropy))
        for _ in range(200):
            await RisingEdge(self.dut.clk)
            if len(self.decisions) > before:
                return self.decisions[-1]
        raise AssertionError("no decision")

    async def quiesce(self):
        """Stop the sources and drain every queue to the consumers."""
        self.traffic = self.squashing = False
        self.p_ready = self.p_done = 1.0
        # A draft request is a request, not data: withdraw one not yet taken (drafting may be
        # withheld by a stop decision for as long as no verification result comes).
        await RisingEdge(self.dut.clk)
        await ReadOnly()
        if not int(self.dut.draft_request__ready.value):
            await RisingEdge(self.dut.clk)
            self.draft_request.withdraw()
        for _ in range(2000):
            await self.cycles(10)
            if (not (self.draft_in.busy or self.feedback_in.busy or self.record.busy)
                    and not int(self.dut.draft_out__valid.value)
                    and not int(self.dut.feedback_out__valid.value)
                    and len(self.requests) == 0
                    and await self.driver.field("DRAFT_Q_STATUS", "empty")
                    and await self.driver.field("FEEDBACK_Q_STATUS", "empty")
                    and await self.driver.field("PREVERIFY_Q_STATUS", "empty")
                    and not await self.driver.field("TVC_STATUS", "deciding")):
                await self.cycles(20)
                return
        state = {name: await self.driver.read(name) for name in
                 ("DRAFT_Q_STATUS", "FEEDBACK_Q_STATUS", "PREVERIFY_Q_STATUS", "TVC_STATUS")}
        raise AssertionError(f"the queues did not drain: {state}, sources busy: draft "
                             f"{self.draft_in.busy}, feedback {self.feedback_in.busy}, record "
                             f"{self.record.busy}")
