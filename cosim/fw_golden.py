"""Firmware in the loop, the golden side: a scenario from a decode trace and what it must give.

:func:`scenario` turns a speculative-decoding trace (:mod:`ahasd.sim.traces.decoding`) into the
operations of ``fw_loop.cpp``: each drafted batch is a push into the draft queue (mean entropy in
UQ4.12, as EDC sees it), preceded by the PIM's request to GTS for the ranks, with the TVC operands
of that moment and a PIM draft-cost record (PDCT);
each verification is the NPU taking the oldest batch and answering a result (an NVCT record);
after a rejecting one, the NPU squashes the look-ahead (the draft queue's hardware squash drops
every batch still queued, which are the batches the trace squashes next). Optionally a zero-length record is
injected every ``fault_every`` drafts (a TVC record error, for the firmware to react to). A
``service`` (the firmware's control loop) follows every operation and a ``snap`` (all registers
at a quiescent point: every queue empty) at the first such point after every ``snap_every``
operations, and at the end (after the NPU has dropped the batches left unverified).

:class:`Golden` predicts, from the golden models only (``ahasd.sim.blocks``: EDC, TVC, GTS,
queues as FIFOs, and :class:`~ahasd.sim.blocks.csr.CSRModel` for the register file), every
decision, every queue transfer, every task GTS starts, the interrupts each service must find,
and each snapshot. The firmware's own register writes (which the loop reports) are applied to the
register model, so the golden side follows the firmware's configuration and its limit actions.
"""

from collections import deque

from ahasd.hw.regmap import load
from ahasd.sim.blocks.csr import CSRModel
from ahasd.sim.blocks.edc import EDC, entropy_to_fx
from ahasd.sim.blocks.gts import GTS, TaskKind
from ahasd.sim.blocks.tvc import TVC
from ahasd.sim.traces.decoding import batch_entropy
from ahasd.spec.descriptors import DraftDescriptor, FeedbackDescriptor

__all__ = ["scenario", "Golden", "PDCT", "PVCT"]

PDCT, PVCT = 1, 2          # TVC record tables (ahasd.hw.tvc.Table)
_TABLES = ("nvct", "pdct", "pvct")
#: Cycles per unit of the trace's cost model (draft_cost, verify_cost per token / batch).
PIM_CYCLES_PER_COST = 40
NPU_CYCLES_PER_COST = 50


def scenario(records, *, snap_every=25, fault_every=0, config=None):
    """The operations for trace ``records`` (a parsed trace); ``config``: ``{key: value}`` of
    the firmware configuration (``cfg`` lines) before ``init``."""
    head = records[0]
    ops = [("cfg", k, v) for k, v in (config or {}).items()] + [("init",)]
    kv_len = len(head["prompt"])
    t_verify = 0.0
    unverified = deque()   # tokens of the batches in the draft queue, oldest first
    drafts = 0

    since_snap = 0

    def step(*op):
        # A snapshot needs a quiescent point: the draft queue empty too (every batch verified
        # or squashed), so it is taken at the first such point after snap_every operations.
        nonlocal since_snap
        ops.append(op)
        ops.append(("service",))
        since_snap += 1
        if since_snap >= snap_every and not unverified:
            ops.append(("snap",))
            since_snap = 0

    for rec in records[1:]:
        event = rec["event"]
        if event == "draft":
            n = len(rec["tokens"])
            fx = entropy_to_fx(batch_entropy(rec["entropy"]))
            payload = DraftDescriptor(batch_id=rec["batch"] & 0xFFFF, length=min(n, 255),
                                      kv_base=kv_len & 0xFFFF, mean_entropy=fx).pack()
            now = int((rec["t"] - t_verify) * NPU_CYCLES_PER_COST) & 0xFFFF_FFFF
            pending = min(sum(unverified) + n, 0xFFFF)
            unverified.append(n)
            step("request", min(n, 255))   # the PIM asks GTS for the ranks to draft it
            step("draft", payload, min(kv_len, 0xFFFF), now, pending)
            step("record", PDCT, int(head["draft_cost"] * n * PIM_CYCLES_PER_COST), n)
            drafts += 1
            if fault_every and drafts % fault_every == 0:
                step("record", PVCT, 100, 0)
        elif event == "verify":
            kv_len = rec["kv_len"]
            t_verify = rec["t"]
            unverified.popleft()
            result = FeedbackDescriptor(
                accepted_length=min(rec["accepted"], 255), full=int(rec["full"]),
                cycles=int(head["verify_cost"] * NPU_CYCLES_PER_COST),
                kv_length=min(kv_len, 0xFFFF))
            step("verify", result.pack())
            if not rec["full"] and unverified:   # the trace's squash events follow
                unverified.clear()
                step("hsquash")
    if unverified:   # the run is over: the NPU squashes the batches left unverified
        unverified.clear()
        step("hsquash")
    ops.append(("snap",))
    return ops


class Golden:
    """The expected outcome of a scenario for ``Controller(**params)``; feed :meth:`op` each
    operation with the firmware writes the loop reported for it (init and service)."""

    def __init__(self, params):
        self.regmap = load()
        self.csr = CSRModel(self.regmap)
        self.depths = (params.get("draft_depth", 64), params.get("feedback_depth", 32),
                       params.get("preverify_depth", 16))
        self.edc_params = params.get("edc") or {}
        self.tvc_params = params.get("tvc") or {}
        self.decisions, self.draft_out, self.feedback_out, self.tasks = [], [], [], []
        self.pending, self.snaps = [], []
        self.draft_q = deque()
        self.discarded = []   # batches the hardware squash dropped
        self.requests = deque()   # draft requests waiting for drafting to be allowed
        self.withheld = 0         # requests that had to wait
        self.counts = {}
        self.raw = {}
        self.last_stop = self.last_insert = False
        self.last_length = 0
        self.draft_allowed = True

    # ---- register model helpers ---------------------------------------------------------
    def field(self, ident, name):
        f = self.regmap[ident].field(name)
        return (self.csr.peek(ident) & f.mask) >> f.lsb

    def _events(self, *names):
        """Interrupt events in one clock cycle (INT_COUNT counts cycles with an enabled one)."""
        for name in names:
            self.csr.hw_set("INT_STATUS", name, 1)
        if any(self.field("INT_ENABLE", n) for n in names):
            self.csr.hw_incr("INT_COUNT", "count")

    def _count(self, name, n=1):
        self.counts[name] = self.counts.get(name, 0) + n

    def _fill(self, queue, before, after):
        """A fill change: the threshold interrupt fires on the rise to the threshold."""
        threshold = self.field(f"{queue.upper()}_THRESHOLD", "threshold")
        over = bool(threshold) and after >= threshold
        if over and not (threshold and before >= threshold):
            self._events(queue)

    def _record(self, table, cycles, length):
        errors = self.tvc.error_count
        self.tvc.record(table, cycles, length)
        if self.tvc.error_count != errors:
            self._events("tvc_error")

    def _writes(self, writes):
        for address, data in writes:
            self.csr.write(address, data)

    # ---- the operations -----------------------------------------------------------------
    def op(self, op, writes=()):
        name, *args = op
        if name == "init":
            self._writes(writes)
            self.csr.hw_clear("INT_COUNT", "count")   # init clears the counters
            presets = {t: self.field(f"TVC_{t.upper()}_PRESET", "ratio") for t in _TABLES}
            self.edc = EDC(**self.edc_params)
            self.tvc = TVC(freq_ratio=self.field("TVC_FREQ_RATIO", "ratio"), presets=presets,
                           **self.tvc_params)
            self.gts = GTS(ranks=16, draft_mask=self.field("GTS_DRAFT_MASK", "mask"),
                           preverify_mask=self.field("GTS_PREVERIFY_MASK", "mask"))
        elif name == "draft":
            self._draft(*args)
        elif name in ("verify", "squash"):
            self.draft_out.append(self.draft_q.popleft())
            self._count("DRAFT_Q_POPS")
            self._fill("draft_q", len(self.draft_q) + 1, len(self.draft_q))
            if name == "verify":
                self._verify(FeedbackDescriptor.unpack(args[0]), args[0])
        elif name == "request":
            self.requests.append(args[0])
            self.withheld += not self.draft_allowed
            self._run_requests()
        elif name == "hsquash":
            self.counts["SQUASHES"] = self.counts.get("SQUASHES", 0) + 1
            self._count("SQUASH_DISCARDED", len(self.draft_q))
            self.discarded.extend(self.draft_q)
            self.draft_q.clear()
        elif name == "record":
            table, cycles, length = args
            self._record(_TABLES[table], cycles, length)
        elif name == "service":
            self.pending.append(self.csr.peek("INT_STATUS") & self.csr.peek("INT_ENABLE"))
            self._writes(writes)
        elif name == "snap":
            self.snaps.append(self.snapshot())
        elif name not in ("cfg", "probe"):
            raise ValueError(f"unknown scenario operation {name!r}")

    def _run_requests(self):
        """GTS takes the waiting draft requests while drafting is allowed, back to back (a task
        ends in its first cycle: task_done is held high)."""
        if not (self.draft_allowed and self.requests):
            return
        while self.requests:
            length = self.requests.popleft()
            self.tasks.append(int(TaskKind.DRAFT) | length << 1)
            self.gts.step(task=(TaskKind.DRAFT, length), done=True)
        self.gts.step(done=True)

    def _draft(self, payload, kv_len, now, pending):
        fx = DraftDescriptor.unpack(payload).mean_entropy
        cont = self.edc.draft_fx(fx).cont
        mode = self.field("EDC_CTRL", "mode")
        draft = {0: cont, 1: True, 2: False}[mode]
        if len(self.draft_q) >= self.depths[0]:
            raise ValueError("the scenario overfills the draft queue (push-back is timing, "
                             "not modelled here): use a deeper queue")
        self.draft_q.append(payload)
        self._count("DRAFT_Q_PUSHES")
        self.decisions.append(int(draft))
        threshold = self.field("DRAFT_Q_THRESHOLD", "threshold")
        n = len(self.draft_q)
        crossing = bool(threshold) and n >= threshold > n - 1
        # The fill (the queue's write-side level) and the decision come in different cycles.
        if crossing:
            self._events("draft_q")
        if not draft:
            self._events("edc_stop")
        self.last_stop = not draft
        self.draft_allowed = draft
        self._run_requests()
        if draft or self.field("TVC_CTRL", "disable"):
            return
        self.csr.hw_incr("TVC_DECISIONS", "count")
        result = self.tvc.decide(kv_len, now, pending)
        max_len = self.field("TVC_CTRL", "max_len") or 1
        self.last_insert = bool(result.insert)
        self.last_length = min(result.length, max_len) if result.insert else 0
        if not result.insert:
            return
        self.csr.hw_incr("TVC_INSERTS", "count")
        self._events("tvc_insert")
        self._count("PREVERIFY_Q_PUSHES")
        self._fill("preverify_q", 0, 1)
        self._count("PREVERIFY_Q_POPS")   # GTS takes it at once: the ranks are idle
        self.tasks.append(int(TaskKind.PREVERIFY) | self.last_length << 1)
        self.gts.step(task=(TaskKind.PREVERIFY, self.last_length), done=True)
        self.gts.step(done=True)

    def _verify(self, result, payload):
        self._count("FEEDBACK_Q_PUSHES")
        self._fill("feedback_q", 0, 1)
        self._count("FEEDBACK_Q_POPS")
        self.feedback_out.append(payload)
        self.edc.verify(bool(result.full))
        self._record("nvct", result.cycles, result.kv_length)
        self.draft_allowed = True
        self._run_requests()

    def snapshot(self):
        """Every register word (64, holes 0) the firmware must read now."""
        edc, tvc, gts, csr = self.edc, self.tvc, self.gts, self.csr
        status = {
            ("PARAMS", "draft_depth"): self.depths[0], ("PARAMS", "feedback_depth"): self.depths[1],
            ("PARAMS", "preverify_depth"): self.depths[2], ("PARAMS", "ranks"): 16,
            ("EDC_STATUS", "llr"): edc.llr, ("EDC_STATUS", "pending"): len(edc.fifo),
            ("EDC_STATUS", "last_continue"): int(not self.last_stop),
            ("EDC_DECISIONS", "count"): edc.decisions, ("EDC_SUPPRESSED", "count"): edc.suppressed,
            ("EDC_VERIFICATIONS", "count"): edc.verifications,
            ("EDC_SQUASHES", "count"): edc.squashes, ("EDC_FIFO_DROPS", "count"): edc.fifo_drops,
            ("TVC_ERRORS", "count"): tvc.error_count,
            ("TVC_STATUS", "last_length"): self.last_length,
            ("GTS_STATUS", "draft_allowed"): int(self.draft_allowed),
            ("GTS_SWITCHES", "count"): gts.switch_count, ("GTS_BUSY", "count"): gts.busy_count,
            ("GTS_STALLS", "count"): gts.stall_count,
            ("INT_RAW", "edc_stop"): int(self.last_stop),
            ("INT_RAW", "tvc_insert"): int(self.last_insert),
            ("INT_RAW", "tvc_error"): int(tvc.error_count != 0),
        }
        for table in _TABLES:
            status[f"TVC_{table.upper()}_AVG", "ratio"] = tvc.average(table)
        fills = {"draft_q": len(self.draft_q), "feedback_q": 0, "preverify_q": 0}
        for (queue, fill), depth in zip(fills.items(), self.depths):
            q = queue.upper()
            threshold = self.field(f"{q}_THRESHOLD", "threshold")
            status.update({(f"{q}_STATUS", "fill"): fill, (f"{q}_STATUS", "empty"): int(fill == 0),
                           (f"{q}_STATUS", "full"): int(fill >= depth),
                           ("INT_RAW", queue): int(bool(threshold) and fill >= threshold)})
            for counter in ("PUSHES", "POPS", "PUSHBACKS"):
                status[f"{q}_{counter}", "count"] = self.counts.get(f"{q}_{counter}", 0)
        for ident in ("SQUASHES", "SQUASH_DISCARDED"):
            status[ident, "count"] = self.counts.get(ident, 0)
        for (ident, name), value in status.items():
            csr.drive(ident, name, value)
        words = [0] * 64
        for reg in self.regmap.registers:
            words[reg.address // 4] = csr.peek(reg.ident)
        return words
