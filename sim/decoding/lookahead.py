"""The speculative-decoding engine: asynchronous draft and verify with look-ahead drafting.

Model of the asynchrony (simple, in abstract time units):

* The **draft side** drafts one batch at a time, ``draft_cost`` per token; the batch length is
  chosen token by token by a :class:`ahasd.sim.decoding.policies.DraftPolicy`. A batch is drafted on top of
  every token drafted so far that is not rejected: the committed output plus all *unverified*
  batches (look-ahead drafting).
* The **target side** verifies the unverified batches strictly in order, one pass of
  ``verify_cost`` per batch, and starts as soon as it is idle and a batch is waiting.
* **Look-ahead gating.** After each drafted batch the draft side either keeps drafting or waits for
  the next verification result: with ``edc`` off it keeps drafting; with an EDC
  (:class:`ahasd.sim.blocks.edc.EDC`, called once per drafted batch with the batch's mean draft entropy)
  it keeps drafting iff the decision says continue. In every case at most ``max_unverified``
  batches may be unverified (drafted, not yet verified); ``max_unverified = 1`` is classic
  synchronous speculative decoding (draft, wait, verify, draft, ...).
* **Verification** uses exact speculative sampling (:func:`ahasd.sim.decoding.speculative.verify_draft`) or
  its greedy form. A batch's context at verification is always the committed output, because
  every batch before it was fully accepted. On a **rejection** the residual token is emitted and
  every later batch (unverified, or being drafted) is **squashed**: its tokens are discarded and
  never counted. On a **full accept** the target's bonus token is emitted only when no later batch
  exists; otherwise the next batch's first token is checked at that position by the next
  verification (the bonus sample is discarded, which leaves the output distribution exact).
* No batch is drafted once the committed and unverified tokens reach ``n_tokens``; the last
  batch may run past ``n_tokens`` and the output is cut to ``n_tokens`` (batch lengths are the
  policy's own, never cut by the budget).
* Events at the same time: a verification result is handled before a finished draft.

The emitted tokens are therefore a valid speculative-decoding output: greedy decoding reproduces
the target's greedy output exactly, and sampled decoding samples the target's distribution.
The run is recorded as a trace (:mod:`ahasd.sim.traces.decoding`).

The look-ahead commit rule (what one verification result commits and squashes, and that the draft
side drafts again after it) is :func:`settle`, shared with the system simulator's engine
(:mod:`ahasd.sim.system.engine`).
"""

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ahasd.sim.decoding.ngram import entropy_nats
from ahasd.sim.decoding.policies import DraftPolicy, DraftStep
from ahasd.sim.decoding.speculative import verify_draft, verify_draft_greedy
from ahasd.sim.traces.decoding import MAX_UNVERIFIED, batch_entropy, header
from ahasd.spec.params import check_bool, check_callable, check_instance, check_int, check_positive, check_real

__all__ = ["DecodeResult", "Verdict", "decode", "settle"]


@dataclass(frozen=True)
class Verdict:
    """What one verification result does to the look-ahead state (see :func:`settle`)."""
    accepted: int                #: leading tokens accepted
    commit: list                 #: tokens appended to the committed output, in order
    full: bool                   #: every token verified was accepted
    emitted: int | None          #: the residual or bonus token among ``commit``, or None
    squash: bool                 #: every later batch (unverified or being drafted) is discarded


def settle(tokens, accepted, next_token, *, later):
    """The look-ahead commit rule: what verifying ``tokens`` commits, squashes and re-drafts.

    ``accepted`` leading tokens were accepted and ``next_token`` is the target's token after
    them (the residual after a rejection, the bonus after a full accept); ``later`` says whether
    a later batch exists (unverified, or being drafted) once this one has left the queue.

    * The accepted prefix is committed.
    * A **rejection** (``accepted < len(tokens)``) commits the residual token and squashes every
      later batch: they were drafted on top of the rejected tokens.
    * A **full accept** commits the bonus token only when no later batch exists; otherwise the
      next batch's first token is checked at that position by the next verification.
    * The draft side drafts again after every verification result (an EDC stop lasts until the
      next result), on top of the committed output and the batches that were not squashed.

    Returns
    -------
    Verdict
    """
    full = accepted == len(tokens)
    emitted = None if (full and later) else next_token
    commit = list(tokens[:accepted]) + ([] if emitted is None else [emitted])
    return Verdict(accepted=accepted, commit=commit, full=full, emitted=emitted, squash=not full)


@dataclass
class _Batch:
    id: int
    context_len: int             # committed output tokens the batch was drafted after, + pending
    tokens: list
    q_rows: np.ndarray
    entropy: list
    q: list


@dataclass
class _Drafting:
    """The batch being drafted and when it is done (drafted in full when it starts)."""
    batch: _Batch
    t_done: float


@dataclass
class _Verifying:
    """The batch the target side is verifying, when it is done and the KV length it runs at."""
    batch: _Batch
    t_done: float
    kv_len: int


@dataclass
class DecodeResult:
    """What a decoding run produced (times in the engine's abstract units)."""
    prompt: list
    output: list                 #: emitted tokens after the prompt (exactly ``n_tokens``)
    records: list                #: the trace: header line then events (dicts)
    time: float                  #: time when the last needed token was emitted
    batches: int = 0             #: batches started (incl. ones squashed while being drafted)
    verifications: int = 0
    squashed: int = 0
    drafted_tokens: int = 0      #: tokens in verified batches
    accepted_tokens: int = 0     #: of those, accepted
    edc_suppressed: int = 0
    draft_lengths: list = field(default_factory=list)

    @property
    def acceptance_rate(self):
        return self.accepted_tokens / self.drafted_tokens if self.drafted_tokens else 0.0

    @property
    def tokens_per_verification(self):
        """Emitted tokens per target pass (accepted + residual/bonus tokens)."""
        return len(self.output) / self.verifications if self.verifications else 0.0


def _sample(rng, dist):
    c = np.cumsum(dist)
    return int(min(np.searchsorted(c, rng.random() * c[-1], side="right"), len(c) - 1))


def decode(draft, target, prompt, *, n_tokens, policy, rng=None, greedy=False, edc=None,
           max_unverified=4, draft_cost=1.0, verify_cost=5.0, meta=None, progress=None):
    """Run speculative decoding of ``n_tokens`` tokens after ``prompt``; return a DecodeResult.

    Parameters
    ----------
    draft, target : LanguageModel
    prompt : sequence of int
    n_tokens : int
    policy : DraftPolicy
    rng : numpy.random.Generator, required unless ``greedy``
    greedy : bool
    edc : None or an object with ``draft(entropy) -> decision`` and ``verify(full)``
    max_unverified : int in 1..MAX_UNVERIFIED (the trace format's limit)
    draft_cost, verify_cost : finite number > 0
    meta : dict, extra header fields for the trace
    progress : None or a callable, called with the number of committed tokens after each
        verification
    """
    check_positive("n_tokens", n_tokens, integer=True)
    check_int("max_unverified", max_unverified, 1, MAX_UNVERIFIED)
    for name, v in (("draft_cost", draft_cost), ("verify_cost", verify_cost)):
        check_real(name, v, 0.0, low_open=True)
    greedy = check_bool("greedy", greedy)
    check_instance("meta", meta, dict, optional=True)
    check_callable("progress", progress, optional=True)
    check_instance("policy", policy, DraftPolicy)
    if not greedy:
        check_instance("rng", rng, np.random.Generator,
                       what="numpy.random.Generator unless greedy")
    if draft.vocab_size != target.vocab_size:
        raise ValueError(f"draft and target vocabularies differ: {draft.vocab_size} != "
                         f"{target.vocab_size}")
    prompt = [int(t) for t in prompt]
    records = [header(vocab_size=target.vocab_size, policy=policy.name,
                      policy_params=policy.params(), greedy=greedy, tokens=n_tokens,
                      prompt=prompt, draft_cost=draft_cost, verify_cost=verify_cost,
                      max_unverified=max_unverified, **(meta or {}))]
    res = DecodeResult(prompt=prompt, output=[], records=records, time=0.0)
    _Decoder(draft, target, res, n_tokens=n_tokens, policy=policy, rng=rng, greedy=greedy,
             edc=edc, max_unverified=max_unverified, draft_cost=draft_cost,
             verify_cost=verify_cost, progress=progress).run()
    return res


class _Decoder:
    """The event loop of :func:`decode` over named state; one handler per event."""

    def __init__(self, draft, target, res, *, n_tokens, policy, rng, greedy, edc,
                 max_unverified, draft_cost, verify_cost, progress):
        self.draft, self.target, self.res = draft, target, res
        self.n_tokens, self.policy, self.rng, self.greedy, self.edc = (n_tokens, policy, rng,
                                                                        greedy, edc)
        self.max_unverified, self.draft_cost, self.verify_cost = (max_unverified, draft_cost,
                                                                  verify_cost)
        self.progress = progress
        self.prompt: list[int] = res.prompt
        self.committed: list[int] = res.output
        self.records: list[dict[str, Any]] = res.records
        self.pending: deque[_Batch] = deque()      # drafted, unverified batches, oldest first
        self.drafting: _Drafting | None = None
        self.verifying: _Verifying | None = None
        self.waiting = False     # the draft side waits for the next verification result
        self.next_id = 0
        self.t = 0.0

    def run(self):
        """Start what can start, then handle the next event (a verification result first when
        both end at the same time), until ``n_tokens`` are committed."""
        while len(self.committed) < self.n_tokens:
            if self.verifying is None and self.pending:
                self.verifying = _Verifying(self.pending[0], self.t + self.verify_cost,
                                            len(self.prompt) + len(self.committed))
            if (self.drafting is None and not self.waiting
                    and len(self.pending) < self.max_unverified
                    and self._speculative_len() < self.n_tokens):
                b = self._draft_batch()
                self.drafting = _Drafting(b, self.t + len(b.tokens) * self.draft_cost)
            if self.verifying is not None and (self.drafting is None
                                               or self.verifying.t_done <= self.drafting.t_done):
                self._on_verified(self.verifying)
            elif self.drafting is not None:
                self._on_drafted(self.drafting)
            else:  # pragma: no cover - the loop invariant makes this unreachable
                raise RuntimeError("decoding engine stalled")
        del self.committed[self.n_tokens:]
        self.res.time = self.t
        self.records.append({"event": "end", "t": self.t, "output": list(self.committed)})

    def _speculative_len(self):
        return len(self.committed) + sum(len(b.tokens) for b in self.pending)

    def _draft_batch(self):
        """Draft one batch on top of the committed output and every unverified batch."""
        ctx = self.prompt + self.committed + [x for b in self.pending for x in b.tokens]
        policy = self.policy
        max_len, min_len = policy.max_len, policy.min_len
        tokens, rows, ents, qs = [], [], [], []
        policy.begin()
        while True:
            q = self.draft.next_dist(ctx)
            x = int(np.argmax(q)) if self.greedy else _sample(self.rng, q)
            h = float(entropy_nats(q))
            tokens.append(x)
            rows.append(q)
            ents.append(h)
            qs.append(float(q[x]))
            ctx.append(x)
            n = len(tokens)
            # The policy sees every token (SpecDec++ multiplies over the whole batch); the
            # engine enforces the bounds.
            stop = policy.stop(DraftStep(position=n, entropy=h, q=float(q[x])))
            if n >= max_len or (stop and n >= min_len):
                break
        batch = _Batch(self.next_id, len(ctx) - len(self.prompt) - len(tokens), tokens,
                       np.array(rows), ents, qs)
        self.next_id += 1
        self.res.batches += 1
        return batch

    def _verify(self, b):
        """``(target rows, accepted, next token)`` of verifying ``b`` after the committed output."""
        p = self.target.score(self.prompt + self.committed, b.tokens)
        if self.greedy:
            n_acc, nxt = verify_draft_greedy(b.tokens, p)
        else:
            n_acc, nxt = verify_draft(b.tokens, b.q_rows, p, self.rng)
        return p, n_acc, nxt

    def _on_verified(self, v):
        """A verification result: record it, apply :func:`settle`, squash what it squashes."""
        b = v.batch
        self.t = v.t_done
        self.verifying = None
        assert b.context_len == len(self.committed) and b is self.pending[0]
        p, n_acc, nxt = self._verify(b)
        self.pending.popleft()
        verdict = settle(b.tokens, n_acc, nxt,
                         later=bool(self.pending) or self.drafting is not None)
        self.records.append({"event": "verify", "batch": b.id, "t": self.t, "kv_len": v.kv_len,
                             "p": [float(p[i, x]) for i, x in enumerate(b.tokens)],
                             "accepted": n_acc, "full": verdict.full,
                             "next_token": verdict.emitted})
        res, k = self.res, len(b.tokens)
        res.verifications += 1
        res.drafted_tokens += k
        res.accepted_tokens += n_acc
        res.draft_lengths.append(k)
        if self.edc is not None:
            self.edc.verify(verdict.full)
        self.policy.observe(k, n_acc)
        self.committed.extend(verdict.commit)
        if verdict.squash:
            self._squash()
        self.waiting = False
        if self.progress is not None:
            self.progress(len(self.committed))

    def _squash(self):
        """Discard every unverified batch and the one being drafted."""
        drafting = self.drafting.batch if self.drafting is not None else None
        squashed = list(self.pending) + ([drafting] if drafting is not None else [])
        for s in squashed:
            self.records.append({"event": "squash", "batch": s.id, "t": self.t,
                                 "drafted": s is not drafting})
        self.res.squashed += len(squashed)
        self.pending.clear()
        self.drafting = None

    def _on_drafted(self, d):
        """A batch is drafted: queue it and ask the EDC whether to keep drafting ahead."""
        b = d.batch
        self.t = d.t_done
        self.drafting = None
        self.pending.append(b)
        rec = {"event": "draft", "batch": b.id, "t": self.t, "tokens": b.tokens,
               "entropy": b.entropy, "q": b.q, "edc": None}
        if self.edc is not None:
            dec = self.edc.draft(batch_entropy(b.entropy))
            rec["edc"] = {"cont": bool(dec.cont), "index": int(dec.index)}
            self.waiting = not dec.cont
            self.res.edc_suppressed += not dec.cont
        self.records.append(rec)
