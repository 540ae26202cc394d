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
"""

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ahasd.sim.decoding.ngram import entropy_nats
from ahasd.sim.decoding.policies import DraftPolicy, DraftStep
from ahasd.sim.decoding.speculative import verify_draft, verify_draft_greedy
from ahasd.spec.params import (check_bool, check_callable, check_instance, check_int,
                              check_positive, check_real)
from ahasd.sim.traces.decoding import MAX_UNVERIFIED, batch_entropy, header

__all__ = ["DecodeResult", "decode"]


@dataclass
class _Batch:
    id: int
    context_len: int             # committed output tokens the batch was drafted after, + pending
    tokens: list
    q_rows: np.ndarray
    entropy: list
    q: list


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
    committed = res.output
    pending = deque()            # drafted, unverified batches, oldest first
    drafting = None              # (batch, t_done)
    verifying = None             # (batch, t_done, kv_len)
    waiting = False              # the draft side waits for the next verification result
    next_id = 0
    t = 0.0

    def speculative_len():
        return len(committed) + sum(len(b.tokens) for b in pending)

    def draft_batch():
        nonlocal next_id
        ctx = prompt + committed + [x for b in pending for x in b.tokens]
        max_len, min_len = policy.max_len, policy.min_len
        tokens, rows, ents, qs = [], [], [], []
        policy.begin()
        while True:
            q = draft.next_dist(ctx)
            x = int(np.argmax(q)) if greedy else _sample(rng, q)
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
        batch = _Batch(next_id, len(ctx) - len(prompt) - len(tokens), tokens, np.array(rows),
                       ents, qs)
        next_id += 1
        res.batches += 1
        return batch

    while len(committed) < n_tokens:
        if verifying is None and pending:
            verifying = (pending[0], t + verify_cost, len(prompt) + len(committed))
        if (drafting is None and not waiting and len(pending) < max_unverified
                and speculative_len() < n_tokens):
            b = draft_batch()
            drafting = (b, t + len(b.tokens) * draft_cost)
        if verifying is not None and (drafting is None or verifying[1] <= drafting[1]):
            b, t, kv_len = verifying
            verifying = None
            assert b.context_len == len(committed) and b is pending[0]
            ctx = prompt + committed
            p = target.score(ctx, b.tokens)
            if greedy:
                n_acc, nxt = verify_draft_greedy(b.tokens, p)
            else:
                n_acc, nxt = verify_draft(b.tokens, b.q_rows, p, rng)
            k = len(b.tokens)
            full = n_acc == k
            pending.popleft()
            later = bool(pending) or drafting is not None
            emitted = None if (full and later) else nxt
            records.append({"event": "verify", "batch": b.id, "t": t, "kv_len": kv_len,
                            "p": [float(p[i, x]) for i, x in enumerate(b.tokens)],
                            "accepted": n_acc, "full": full, "next_token": emitted})
            res.verifications += 1
            res.drafted_tokens += k
            res.accepted_tokens += n_acc
            res.draft_lengths.append(k)
            if edc is not None:
                edc.verify(full)
            policy.observe(k, n_acc)
            committed.extend(b.tokens[:n_acc])
            if emitted is not None:
                committed.append(emitted)
            if not full:
                squashed = list(pending) + ([drafting[0]] if drafting is not None else [])
                for s in squashed:
                    records.append({"event": "squash", "batch": s.id, "t": t,
                                    "drafted": drafting is None or s is not drafting[0]})
                res.squashed += len(squashed)
                pending.clear()
                drafting = None
            waiting = False
            if progress is not None:
                progress(len(committed))
        elif drafting is not None:
            b, t = drafting
            drafting = None
            pending.append(b)
            rec = {"event": "draft", "batch": b.id, "t": t, "tokens": b.tokens,
                   "entropy": b.entropy, "q": b.q, "edc": None}
            if edc is not None:
                d = edc.draft(batch_entropy(b.entropy))
                rec["edc"] = {"cont": bool(d.cont), "index": int(d.index)}
                waiting = not d.cont
                res.edc_suppressed += not d.cont
            records.append(rec)
        else:  # pragma: no cover - the loop invariant makes this unreachable
            raise RuntimeError("decoding engine stalled")
    del committed[n_tokens:]
    res.time = t
    records.append({"event": "end", "t": t, "output": list(committed)})
    return res
