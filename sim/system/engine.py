"""The event-driven engine: one draft device, one verify device, the queues, EDC, TVC and GTS.

One engine runs every execution model; a :class:`ahasd.sim.system.systems.SystemSpec` says which
devices draft and verify, whether drafting runs ahead of verification (asynchronous, up to
``max_lookahead`` unverified batches) or alternates with it (synchronous), and which of AAU, EDC
and TVC are on. The decoding rules are the golden decoder's
(:mod:`ahasd.sim.decoding.lookahead`): batches are verified strictly in order; a rejection emits
the residual token and squashes every later batch (a batch being drafted stops at that moment);
a full accept emits the bonus token only when no later batch exists; a verification result is
handled before a draft finishing at the same time.

AHASD specifics:

* After each drafted batch the EDC (through :class:`ahasd.sim.system.deciders.Deciders`) says
  whether to keep drafting ahead; if not, the PIM waits for the next verification result.
* While it waits and the NPU verifies, TVC is asked (kv length of the NPU's verification, NPU
  cycles it has run, unverified tokens not yet pre-verified) whether a pre-verification of the
  next unverified batch's first L tokens fits; if so the PIM switches ranks (GTS) and runs the
  target over them. A rejection found there truncates that batch to its accepted prefix plus the
  residual token (valid if every earlier batch is fully accepted, the only case in which the
  batch counts), squashes the batches behind it and lets the PIM draft on at once; the batch then
  commits without an NPU pass when it reaches the head of the queue. TVC tables learn from every
  verification (NVCT), draft (PDCT) and pre-verification (PVCT).
* Queue descriptors cross the AXI interconnect (latency + size / width).

Timing and energy of every pass come from :class:`ahasd.sim.system.systems.Timing`.

Structure: the named state of a run is a :class:`_State` (the committed output, the unverified
batches, and one task record per device activity: :class:`_Drafting`, :class:`_Verifying`,
:class:`_Preverifying`); the loop starts what can start, then dispatches the earliest ending task
to its handler by :class:`Event` (members in the order simultaneous events are handled). What a
verification result commits and squashes is :func:`ahasd.sim.decoding.lookahead.settle`, the
golden decoder's own rule; a pre-verification that finds a rejection settles its batch at once
(squashing the batches behind it) and commits the verdict when the batch reaches the head.
"""

import enum
from collections import deque
from dataclasses import dataclass, field

from ahasd.sim.decoding.lookahead import settle
from ahasd.sim.system.deciders import Deciders
from ahasd.sim.system.sources import Batch, Source
from ahasd.sim.system.systems import SystemSpec, Timing
from ahasd.sim.traces.decoding import batch_entropy

__all__ = ["run_engine", "EngineStats", "Event"]


class Event(enum.Enum):
    """What ends next; members in the order events at the same time are handled."""
    VERIFIED = 0       #: the verify device finished verifying the oldest unverified batch
    PREVERIFIED = 1    #: the PIM finished pre-verifying a batch's first tokens
    DRAFTED = 2        #: the draft device finished drafting a batch


class _PimTask(enum.Enum):
    """What the PIM ranks are set up for (a change is a GTS switch)."""
    DRAFT = "draft"
    PREVERIFY = "preverify"


@dataclass
class EngineStats:
    """Counts, busy times and energies of one run (read by :mod:`ahasd.sim.system.runner`)."""
    busy: dict[str, float] = field(default_factory=dict)        #: seconds busy, by device
    energy_pj: dict[str, float] = field(default_factory=dict)   #: dynamic energy, by device
    timeline: list[tuple[str, str, float, float]] = field(default_factory=list)
    drafted: int = 0                 #: tokens of the verified batches (as drafted)
    accepted: int = 0                #: of those, accepted
    verifications: int = 0           #: batches settled (by the NPU or a pre-verification)
    batches: int = 0                 #: batches started
    squashed: int = 0
    edc_suppressed: int = 0
    preverifies: int = 0
    preverify_rejects: int = 0
    gts_switches: int = 0
    npu_passes: int = 0
    draft_tokens_total: int = 0      #: tokens drafted, squashed ones' started tokens included
    draft_tokens_done: int = 0       #: tokens whose drafting finished
    tvc_decisions: int = 0
    edc_decisions: int = 0
    draft_lengths: list[int] = field(default_factory=list)
    stall: dict[str, float] = field(default_factory=dict)   #: seconds lost to shared ranks
    #: recent spans by (device, kind): a device whose kinds may run at once (partitioned ranks:
    #: drafting and pre-verifying on other units) counts an overlap once
    spans: dict[tuple, deque] = field(default_factory=dict)
    #: busy seconds by (device, kind) as counted in ``busy`` (they add up to it per device)
    busy_kind: dict[tuple, float] = field(default_factory=dict)
    #: of the draft device's busy ``draft`` seconds, those of batches later squashed
    squashed_draft_s: float = 0.0
    #: the verify device's idle seconds by cause: ``redraft`` (after a rejection, by the NPU or
    #: a pre-verification), ``edc`` (the draft device had stopped on an EDC decision), ``other``
    wait: dict[str, float] = field(default_factory=dict)
    #: ``(device, what, time)`` of each accept, reject and squash (kept with the timeline)
    marks: list[tuple[str, str, float]] = field(default_factory=list)

    def charge(self, dev, kind, t0, t1, pj, keep_timeline):
        """``dev`` was busy with ``kind`` from ``t0`` to ``t1`` and spent ``pj``. Busy time is
        the union: the part of the span that overlaps recent spans of another kind on ``dev``
        (tasks of one kind never overlap) is not counted again. Return the seconds counted."""
        overlap = sum(max(0.0, min(t1, b) - max(t0, a))
                      for (d, k), recent in self.spans.items() if d == dev and k != kind
                      for a, b in recent)
        self.spans.setdefault((dev, kind), deque(maxlen=16)).append((t0, t1))
        counted = (t1 - t0) - overlap
        self.busy[dev] = self.busy.get(dev, 0.0) + counted
        self.busy_kind[(dev, kind)] = self.busy_kind.get((dev, kind), 0.0) + counted
        self.energy_pj[dev] = self.energy_pj.get(dev, 0.0) + pj
        if keep_timeline:
            self.timeline.append((dev, kind, t0, t1))
        return counted

    def mark(self, dev, what, t, keep_timeline):
        """Note an ``accept``, ``reject`` or ``squash`` on ``dev`` at ``t`` (with the timeline)."""
        if keep_timeline:
            self.marks.append((dev, what, t))


@dataclass
class _Drafting:
    """The draft device drafting ``batch`` (started at ``batch.ready_t``)."""
    batch: Batch
    t_done: float
    per_token: list[tuple[float, float]]     #: (end time, pJ) of each token
    speed: float = 1.0               #: share of its alone speed that memory sharing leaves it
    mark: float = 0.0                #: time up to which its stall is counted


@dataclass
class _Verifying:
    """The verify device verifying ``batch`` at KV length ``kv_len``."""
    batch: Batch
    t_start: float
    t_done: float
    kv_len: int
    pj: float
    speed: float = 1.0
    mark: float = 0.0


@dataclass
class _Preverifying:
    """The PIM running the target over the first ``length`` tokens of ``batch``."""
    batch: Batch
    length: int
    t_start: float
    t_done: float
    pj: float
    speed: float = 1.0
    mark: float = 0.0


@dataclass
class _State:
    """Everything that changes during a run, apart from the statistics."""
    committed: list[int] = field(default_factory=list)
    pending: deque[Batch] = field(default_factory=deque)    #: unverified batches, oldest first
    drafting: _Drafting | None = None
    verifying: _Verifying | None = None
    preverifying: _Preverifying | None = None
    waiting: bool = False            #: EDC stopped drafting until the next verification result
    pim_task: _PimTask = _PimTask.DRAFT
    next_id: int = 0
    t: float = 0.0
    #: busy ``draft`` seconds counted for each drafted batch still pending, by batch id
    draft_s: dict[int, float] = field(default_factory=dict)
    idle_t: float = 0.0              #: when the verify device last became idle
    idle_cause: str = "other"        #: why (a key of :attr:`EngineStats.wait`)


def run_engine(spec, timing, source, prompt, n_tokens, deciders=None, *, max_lookahead=4,
               keep_timeline=False):
    """Run one decoding of ``n_tokens`` tokens; return ``(time_s, committed, stats)``.

    Parameters
    ----------
    spec : SystemSpec
    timing : Timing
    source : Source
        Draft batches and verification outcomes (:mod:`ahasd.sim.system.sources`).
    prompt : list of int
    n_tokens : int
    deciders : Deciders or None
        EDC and TVC; None runs a system with EDC or TVC without them.
    max_lookahead : int
        Most unverified batches of an asynchronous system (a synchronous one has one).
    keep_timeline : bool
        Record every device activity in ``stats.timeline``.

    Returns
    -------
    (float, list of int, EngineStats)
    """
    engine = _Engine(spec, timing, source, list(prompt), n_tokens, deciders,
                     max_lookahead=max_lookahead, keep_timeline=keep_timeline)
    return engine.run()


class _Engine:
    """One run: the configuration, the :class:`_State`, the statistics and the handlers."""

    def __init__(self, spec: SystemSpec, timing: Timing, source: Source, prompt: list[int],
                 n_tokens: int, deciders: Deciders | None, *, max_lookahead: int,
                 keep_timeline: bool):
        self.spec, self.timing, self.source = spec, timing, source
        self.prompt, self.n_tokens, self.keep_timeline = prompt, n_tokens, keep_timeline
        self.limit = max_lookahead if spec.asynchronous else 1
        self.edc = deciders if spec.edc else None      # the EDC and TVC in use, if any
        self.tvc = deciders if spec.tvc else None
        self.same_dev = spec.draft_dev == spec.verify_dev
        lay = getattr(timing, "layout", None)
        #: drafting and pre-verification on other units (partitioned ranks): they may overlap,
        #: and no GTS switch separates them
        self.disjoint = lay is not None and not lay.shared
        self.st = EngineStats()
        self.s = _State()
        self.handlers = {Event.VERIFIED: self._on_verified,
                         Event.PREVERIFIED: self._on_preverified,
                         Event.DRAFTED: self._on_drafted}

    def run(self):
        """Until ``n_tokens`` are committed: start what can start, then handle the next event."""
        s = self.s
        while len(s.committed) < self.n_tokens:
            if self._start_verify():
                continue
            self._start_pim()
            self._share_memory()
            nxt = self._next_event()
            if nxt is None:          # nothing to wait for: the EDC stop lapses
                s.waiting = False
                continue
            s.t, event = nxt
            self.handlers[event]()
        del s.committed[self.n_tokens:]
        return s.t, s.committed, self.st

    # -- starting tasks --------------------------------------------------------------------

    def _start_verify(self):
        """The verify device takes the oldest batch; one settled by a pre-verification commits
        without a pass instead (return True: the loop starts over)."""
        s = self.s
        if s.verifying is not None or not s.pending or (self.same_dev and s.drafting is not None):
            return False
        head = s.pending[0]
        if head.resolved is not None:
            s.pending.popleft()
            s.draft_s.pop(head.id, None)
            self._count_verification(head.drafted_len, head.resolved.accepted, False)
            s.committed.extend(head.resolved.commit)
            s.idle_cause = "redraft"     # a pre-verification found the rejection
            return True
        kv = len(self.prompt) + len(s.committed)
        wait = self.st.wait
        wait[s.idle_cause] = wait.get(s.idle_cause, 0.0) + (s.t - s.idle_t)
        dt, pj = self.timing.verify(len(head.tokens), kv)
        s.verifying = _Verifying(head, s.t, s.t + dt, kv, pj, mark=s.t)
        return False

    def _start_pim(self):
        """The draft device drafts, or pre-verifies while an EDC stop makes it wait (on the
        same units one task at a time; on partitioned ranks a draft may start while a
        pre-verification runs on the target's units)."""
        s = self.s
        if self.same_dev and s.verifying is not None:
            return
        draft_free = s.drafting is None and (s.preverifying is None or self.disjoint)
        verify_free = s.preverifying is None and (s.drafting is None or self.disjoint)
        if (draft_free and not s.waiting and len(s.pending) < self.limit
                and self._speculative_len() < self.n_tokens):
            self._start_draft()
        elif (verify_free and s.waiting and self.tvc is not None
              and s.verifying is not None):
            self._start_preverify(self.tvc, s.verifying)

    def _speculative_len(self):
        return len(self.s.committed) + sum(len(b.tokens) for b in self.s.pending)

    def _start_draft(self):
        """Draft the next batch on top of the committed and unverified tokens."""
        s, timing = self.s, self.timing
        ctx = self.prompt + s.committed + [x for b in s.pending for x in b.tokens]
        tokens, ents, rows, tidx = self.source.draft(s.next_id, ctx)
        b = Batch(s.next_id, len(ctx) - len(self.prompt), tokens, ents, rows, tidx, len(tokens))
        s.next_id += 1
        self.st.batches += 1
        t_cur = s.t
        if s.pim_task != _PimTask.DRAFT and self.spec.gts and not self.disjoint:
            t_cur += timing.gts_switch_s
            self.st.gts_switches += 1
            s.pim_task = _PimTask.DRAFT
        per: list[tuple[float, float]] = []
        for i in range(len(tokens)):
            dt, pj = timing.draft_token(len(ctx) + i)
            t_cur += dt
            per.append((t_cur, pj))
        t_done = t_cur + timing.draft_overhead_s(len(tokens), self.edc is not None)
        b.ready_t = s.t
        s.drafting = _Drafting(b, t_done, per, mark=s.t)

    def _start_preverify(self, tvc: Deciders, verifying: _Verifying):
        """Ask TVC how many tokens of the next unverified batch to pre-verify, and start that."""
        s, timing = self.s, self.timing
        later = list(s.pending)[1:]
        cand = next((b for b in later if b.resolved is None and b.preverified < len(b.tokens)),
                    None)
        if cand is None:
            return
        avail = sum(len(b.tokens) - b.preverified for b in later if b.resolved is None)
        self.st.tvc_decisions += 1
        now = int((s.t - verifying.t_start) * timing.npu_hz)
        length = min(tvc.tvc_decide(verifying.kv_len, now, avail), len(cand.tokens))
        t_start = s.t + timing.tvc_decide_s
        if length <= cand.preverified:
            return
        if s.pim_task != _PimTask.PREVERIFY and not self.disjoint:
            t_start += timing.gts_switch_s
            self.st.gts_switches += 1
            s.pim_task = _PimTask.PREVERIFY
        dt, pj = timing.preverify(length, len(self.prompt) + cand.context_len)
        s.preverifying = _Preverifying(cand, length, t_start, t_start + dt, pj, mark=t_start)

    # -- memory sharing --------------------------------------------------------------------

    def _share_memory(self):
        """Contention (:mod:`ahasd.sim.system.memory`): while the NPU verifies and the PIM
        computes on the same ranks, each runs at its share of the ranks' read slots; the rest
        of each running task is stretched (or, when the other ends, shrunk back) to that speed."""
        s, lay = self.s, self.timing.layout
        if lay is None or not lay.contention:
            return
        shared = {id(task): s.verifying is not None and lay.overlaps(model)
                  for task, model in ((s.drafting, "draft"), (s.preverifying, "target"))
                  if task is not None}
        npu_shared = any(shared.values())
        for task, dev, speed in ((s.verifying, self.spec.verify_dev, lay.npu_factor),
                                 (s.drafting, self.spec.draft_dev, lay.pim_factor),
                                 (s.preverifying, self.spec.draft_dev, lay.pim_factor)):
            if task is None:
                continue
            self._count_stall(task, dev)
            speed = speed if shared.get(id(task), npu_shared) else 1.0
            if speed != task.speed:
                k = task.speed / speed
                task.t_done = _stretch(task.t_done, s.t, k)
                if isinstance(task, _Drafting):
                    task.per_token = [(_stretch(te, s.t, k), pj) for te, pj in task.per_token]
                task.speed = speed

    def _count_stall(self, task, dev):
        """Charge ``task``'s time lost to sharing since its mark (``(1 - speed)`` of it)."""
        now = self.s.t
        start = max(task.mark, getattr(task, "t_start", task.mark))
        if now > start and task.speed < 1.0:
            self.st.stall[dev] = self.st.stall.get(dev, 0.0) + (now - start) * (1 - task.speed)
        task.mark = max(task.mark, now)

    # -- events ----------------------------------------------------------------------------

    def _next_event(self):
        """``(time, Event)`` of the earliest ending task (ties in :class:`Event` order), or
        None when no task runs."""
        s = self.s
        best = None
        for event, task in ((Event.VERIFIED, s.verifying), (Event.PREVERIFIED, s.preverifying),
                            (Event.DRAFTED, s.drafting)):
            if task is not None and (best is None or task.t_done < best[0]):
                best = (task.t_done, event)
        if best is None and not s.waiting:
            raise RuntimeError("system engine stalled")  # pragma: no cover
        return best

    def _count_verification(self, drafted_len, accepted, full):
        """Statistics, EDC and drafting policy of one settled batch."""
        st = self.st
        st.verifications += 1
        st.drafted += drafted_len
        st.accepted += accepted
        st.draft_lengths.append(drafted_len)
        if self.edc is not None:
            self.edc.edc_verify(full)
        self.source.observe(drafted_len, accepted)

    def _on_verified(self):
        """The NPU's result for the oldest batch: settle it; a rejection squashes every later
        batch (and a running pre-verification); drafting resumes."""
        s, st = self.s, self.st
        v = self._close("verifying", self.spec.verify_dev, "verify")
        b, t = v.batch, s.t
        st.npu_passes += 1
        n_acc, nxt = self.source.outcome(b, self.prompt + s.committed)
        s.pending.popleft()
        if self.tvc is not None:
            self.tvc.tvc_record("nvct", int((t - v.t_start) * self.timing.npu_hz), v.kv_len)
        verdict = settle(b.tokens, n_acc, nxt, later=bool(s.pending) or s.drafting is not None)
        self._count_verification(len(b.tokens), n_acc, verdict.full)
        s.committed.extend(verdict.commit)
        s.draft_s.pop(b.id, None)
        st.mark(self.spec.verify_dev, "accept" if verdict.full else "reject", t,
                self.keep_timeline)
        s.idle_t = t
        s.idle_cause = "redraft" if verdict.squash else "edc" if s.waiting else "other"
        if verdict.squash:
            self._squash_all()
            self._rewind(b)
            if s.preverifying is not None:
                self._close("preverifying", self.spec.draft_dev, "preverify")
        s.waiting = False

    def _close(self, running, dev, kind):
        """End the task in ``running`` (``"verifying"`` or ``"preverifying"``) now: clear it
        and charge its time and energy since it started to ``dev`` as ``kind``."""
        s = self.s
        task = getattr(s, running)
        assert task is not None
        self._count_stall(task, dev)
        setattr(s, running, None)
        self.st.charge(dev, kind, task.t_start, s.t, task.pj, self.keep_timeline)
        return task

    def _on_preverified(self):
        """A pre-verification's result: a rejection settles the batch now (it commits at the
        head without an NPU pass), squashes the batches behind it and lets the PIM draft on."""
        s, st = self.s, self.st
        p = self._close("preverifying", self.spec.draft_dev, "preverify")
        c, t = p.batch, s.t
        st.preverifies += 1
        if self.tvc is not None:
            self.tvc.tvc_record("pvct", int((t - p.t_start) * self.timing.pim_hz), p.length)
        n_acc, nxt = self.source.outcome(c, self.prompt + s.committed + _before(s.pending, c),
                                         p.length)
        # later=True: a pre-verification never commits a bonus token (the NPU verifies the
        # whole batch when nothing was rejected)
        verdict = settle(c.tokens[:p.length], n_acc, nxt, later=True)
        if not verdict.squash:
            c.preverified = p.length
            return
        st.preverify_rejects += 1
        st.mark(self.spec.draft_dev, "reject", t, self.keep_timeline)
        behind = list(s.pending)[list(s.pending).index(c) + 1:]
        for gone in behind:
            s.pending.pop()
            st.squashed_draft_s += s.draft_s.pop(gone.id, 0.0)
        st.squashed += len(behind)
        if behind:
            st.mark(self.spec.draft_dev, "squash", t, self.keep_timeline)
        c.tokens = c.tokens[:n_acc]
        c.resolved = verdict
        self._rewind(c)
        s.waiting = False

    def _on_drafted(self):
        """A batch is drafted: queue it, and ask the EDC whether to keep drafting ahead."""
        s, st = self.s, self.st
        d = s.drafting
        assert d is not None
        self._count_stall(d, self.spec.draft_dev)
        s.drafting = None
        b, per = d.batch, d.per_token
        end = per[-1][0] if per else s.t
        pj = sum(p for _, p in per)
        s.draft_s[b.id] = st.charge(self.spec.draft_dev, "draft", b.ready_t, end, pj,
                                    self.keep_timeline)
        st.draft_tokens_total += len(b.tokens)
        st.draft_tokens_done += len(b.tokens)
        if self.tvc is not None:
            self.tvc.tvc_record("pdct", int((end - b.ready_t) * self.timing.pim_hz),
                                len(b.tokens))
        s.pending.append(b)
        if self.edc is not None:
            st.edc_decisions += 1
            cont = self.edc.edc_draft(batch_entropy(b.entropy))
            s.waiting = not cont
            st.edc_suppressed += not cont

    def _squash_all(self):
        """Discard every unverified batch and the one being drafted (its tokens drafted so far,
        and the one in progress, are charged)."""
        s, st = self.s, self.st
        victims = len(s.pending)
        d = s.drafting
        if d is not None:
            self._count_stall(d, self.spec.draft_dev)
            spent = [pj for (te, pj) in d.per_token if te <= s.t]
            part = d.per_token[len(spent)] if len(spent) < len(d.per_token) else None
            # the token in progress is charged in full (it had started)
            pj = sum(spent) + (part[1] if part else 0.0)
            start = d.batch.ready_t
            st.squashed_draft_s += st.charge(self.spec.draft_dev, "draft", start,
                                             max(start, s.t), pj, self.keep_timeline)
            st.draft_tokens_total += len(spent) + (1 if part else 0)
            st.draft_tokens_done += len(spent)
            victims += 1
            s.drafting = None
        st.squashed += victims
        st.squashed_draft_s += sum(s.draft_s.pop(b.id, 0.0) for b in s.pending)
        if victims:
            st.mark(self.spec.draft_dev, "squash", s.t, self.keep_timeline)
        s.pending.clear()

    def _rewind(self, batch):
        rewind = getattr(self.source, "rewind", None)
        if rewind is not None:
            rewind(batch)


def _stretch(t_end, now, k):
    """A planned time ``t_end`` after ``now`` with the time still to go scaled by ``k``."""
    return now + (t_end - now) * k if t_end > now else t_end


def _before(pending, batch):
    """Tokens of the unverified batches ahead of ``batch``."""
    out = []
    for b in pending:
        if b is batch:
            break
        out.extend(b.tokens)
    return out
