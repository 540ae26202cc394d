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
"""

from collections import deque

from ahasd.sim.system.sources import Batch
from ahasd.sim.traces.decoding import batch_entropy

__all__ = ["run_engine"]


class _Stats:
    def __init__(self):
        self.busy = {}
        self.energy_pj = {}
        self.timeline = []
        self.drafted = self.accepted = self.verifications = self.batches = 0
        self.squashed = self.edc_suppressed = self.preverifies = self.preverify_rejects = 0
        self.gts_switches = self.npu_passes = self.draft_tokens_total = 0
        self.draft_tokens_done = self.tvc_decisions = self.edc_decisions = 0
        self.draft_lengths = []

    def charge(self, dev, kind, t0, t1, pj, keep_timeline):
        self.busy[dev] = self.busy.get(dev, 0.0) + (t1 - t0)
        self.energy_pj[dev] = self.energy_pj.get(dev, 0.0) + pj
        if keep_timeline:
            self.timeline.append((dev, kind, t0, t1))


def run_engine(spec, timing, source, prompt, n_tokens, deciders=None, *, max_lookahead=4,
               keep_timeline=False):
    """Run one decoding of ``n_tokens`` tokens; return ``(time_s, committed, stats)``."""
    st = _Stats()
    committed = []
    pending = deque()
    drafting = None          # (batch, t_done, per-token (t_end, pj))
    verifying = None         # (batch, t_start, t_done, kv_len, pj)
    preverify = None         # (batch, length, t_done)
    waiting = False
    pim_task = "draft"
    next_id = 0
    t = 0.0
    asynchronous = spec.asynchronous
    limit = max_lookahead if asynchronous else 1
    use_edc = spec.edc and deciders is not None
    use_tvc = spec.tvc and deciders is not None
    same_dev = spec.draft_dev == spec.verify_dev

    def spec_len():
        return len(committed) + sum(len(b.tokens) for b in pending)

    def start_draft():
        nonlocal next_id, pim_task
        ctx = prompt + committed + [x for b in pending for x in b.tokens]
        tokens, ents, rows, tidx = source.draft(next_id, ctx)
        b = Batch(next_id, len(ctx) - len(prompt), tokens, ents, rows, tidx, len(tokens))
        next_id += 1
        st.batches += 1
        t_cur = t
        if pim_task != "draft" and spec.gts:
            t_cur += timing.gts_switch_s
            st.gts_switches += 1
            pim_task = "draft"
        per = []
        for i in range(len(tokens)):
            dt, pj = timing.draft_token(len(ctx) + i)
            t_cur += dt
            per.append((t_cur, pj))
        t_done = t_cur + timing.draft_overhead_s(len(tokens), use_edc)
        return b, t_done, per

    def squash_all(t_now):
        nonlocal drafting
        victims = list(pending)
        if drafting is not None:
            b, _, per = drafting
            spent = [pj for (te, pj) in per if te <= t_now]
            part = per[len(spent)] if len(spent) < len(per) else None
            # the token in progress is charged in full (it had started)
            pj = sum(spent) + (part[1] if part else 0.0)
            start = b.ready_t
            st.charge(spec.draft_dev, "draft", start, max(start, t_now), pj, keep_timeline)
            st.draft_tokens_total += len(spent) + (1 if part else 0)
            st.draft_tokens_done += len(spent)
            victims.append(b)
            drafting = None
        st.squashed += len(victims)
        pending.clear()

    def npu_now_cycles():
        return int((t - verifying[1]) * timing.npu_hz)

    while len(committed) < n_tokens:
        # 1. the verify device takes the oldest batch
        if verifying is None and pending and not (same_dev and drafting is not None):
            head = pending[0]
            if head.resolved is not None:
                n_acc, nxt = head.resolved
                pending.popleft()
                st.verifications += 1
                st.drafted += head.drafted_len
                st.accepted += n_acc
                st.draft_lengths.append(head.drafted_len)
                if use_edc:
                    deciders.edc_verify(False)
                source.observe(head.drafted_len, n_acc)
                committed.extend(head.tokens[:n_acc])
                committed.append(nxt)
                continue
            kv = len(prompt) + len(committed)
            dt, pj = timing.verify(len(head.tokens), kv)
            verifying = (head, t, t + dt, kv, pj)
        # 2. the draft device drafts, or pre-verifies when EDC stopped it
        pim_idle = drafting is None and preverify is None and not (same_dev and verifying)
        if pim_idle and not waiting and len(pending) < limit and spec_len() < n_tokens:
            b, t_done, per = start_draft()
            b.ready_t = t
            drafting = (b, t_done, per)
        elif pim_idle and waiting and use_tvc and verifying is not None:
            cand = next((b for b in list(pending)[1:] if b.resolved is None
                         and b.preverified < len(b.tokens)), None)
            if cand is not None:
                avail = sum(len(b.tokens) - b.preverified for b in list(pending)[1:]
                            if b.resolved is None)
                st.tvc_decisions += 1
                length = deciders.tvc_decide(verifying[3], npu_now_cycles(), avail)
                length = min(length, len(cand.tokens))
                t_start = t + timing.tvc_decide_s
                if length > cand.preverified:
                    if pim_task != "preverify":
                        t_start += timing.gts_switch_s
                        st.gts_switches += 1
                        pim_task = "preverify"
                    kvp = len(prompt) + cand.context_len
                    dt, pj = timing.preverify(length, kvp)
                    preverify = (cand, length, t_start, t_start + dt, pj)
        # 3. the next event
        ends = []
        if verifying is not None:
            ends.append((verifying[2], 0))
        if preverify is not None:
            ends.append((preverify[3], 1))
        if drafting is not None:
            ends.append((drafting[1], 2))
        if not ends:
            if waiting:          # nothing to wait for: the EDC stop lapses
                waiting = False
                continue
            raise RuntimeError("system engine stalled")  # pragma: no cover
        t, kind = min(ends)
        if kind == 0:
            b, t0, _, kv, pj = verifying
            verifying = None
            st.charge(spec.verify_dev, "verify", t0, t, pj, keep_timeline)
            st.npu_passes += 1
            n_acc, nxt = source.outcome(b, prompt + committed)
            k = len(b.tokens)
            full = n_acc == k
            pending.popleft()
            if use_tvc:
                deciders.tvc_record("nvct", int((t - t0) * timing.npu_hz), kv)
            st.verifications += 1
            st.drafted += k
            st.accepted += n_acc
            st.draft_lengths.append(k)
            if use_edc:
                deciders.edc_verify(full)
            source.observe(k, n_acc)
            committed.extend(b.tokens[:n_acc])
            later = bool(pending) or drafting is not None
            if not (full and later):
                committed.append(nxt)
            if not full:
                squash_all(t)
                if hasattr(source, "rewind"):
                    source.rewind(b)
                if preverify is not None:
                    c, length, t0p, _, pjp = preverify
                    st.charge(spec.draft_dev, "preverify", t0p, t, pjp, keep_timeline)
                    preverify = None
            waiting = False
        elif kind == 1:
            c, length, t0p, _, pjp = preverify
            preverify = None
            st.charge(spec.draft_dev, "preverify", t0p, t, pjp, keep_timeline)
            st.preverifies += 1
            if use_tvc:
                deciders.tvc_record("pvct", int((t - t0p) * timing.pim_hz), length)
            n_acc, nxt = source.outcome(c, prompt + committed + _before(pending, c), length)
            if n_acc < length:
                st.preverify_rejects += 1
                idx = list(pending).index(c)
                behind = list(pending)[idx + 1:]
                for _ in behind:
                    pending.pop()
                st.squashed += len(behind)
                c.tokens = c.tokens[:n_acc]
                c.resolved = (n_acc, nxt)
                if hasattr(source, "rewind"):
                    source.rewind(c)
                waiting = False
            else:
                c.preverified = length
        else:
            b, _, per = drafting
            drafting = None
            pj = sum(p for _, p in per)
            st.charge(spec.draft_dev, "draft", b.ready_t, per[-1][0] if per else t, pj,
                      keep_timeline)
            st.draft_tokens_total += len(b.tokens)
            st.draft_tokens_done += len(b.tokens)
            if use_tvc:
                deciders.tvc_record("pdct", int(((per[-1][0] if per else t) - b.ready_t)
                                                * timing.pim_hz), len(b.tokens))
            pending.append(b)
            if use_edc:
                st.edc_decisions += 1
                cont = deciders.edc_draft(batch_entropy(b.entropy))
                waiting = not cont
                st.edc_suppressed += not cont
    del committed[n_tokens:]
    return t, committed, st


def _before(pending, batch):
    """Tokens of the unverified batches ahead of ``batch``."""
    out = []
    for b in pending:
        if b is batch:
            break
        out.extend(b.tokens)
    return out
