"""Where draft batches and verification outcomes come from: a live golden pair, or a recorded trace.

:class:`LiveSource` drafts with the pair's draft model token by token, the batch length chosen by
a :class:`ahasd.sim.decoding.policies.DraftPolicy` exactly as the golden decoder
(:func:`ahasd.sim.decoding.lookahead.decode`) does, and verifies by speculative sampling
(:func:`ahasd.sim.decoding.speculative.verify_draft`) against the target's distributions. Each
batch's verification draws its uniforms from its own generator (seeded by the run's seed and the
batch's id), so a pre-verification of the batch's first L tokens on the PIM and the NPU's full
verification draw the same numbers and agree token for token.

:class:`TraceSource` replays a recorded trace's verified batches in order (tokens, entropies and
accepted counts as recorded); a batch drafted ahead after batch i is the trace's batch i+1, and a
rejection rewinds to the batch after the rejected one. The recorded policy's lengths are kept
(the trace fixes them), so the policy of the run has no effect.
"""

from dataclasses import dataclass, field

import numpy as np

from ahasd.sim.decoding.ngram import entropy_nats
from ahasd.sim.decoding.policies import DraftStep
from ahasd.sim.decoding.speculative import verify_draft, verify_draft_greedy

__all__ = ["Batch", "LiveSource", "TraceSource"]


@dataclass
class Batch:
    """A drafted batch as the engine tracks it."""
    id: int
    context_len: int                 #: committed + unverified tokens it was drafted after
    tokens: list
    entropy: list
    q_rows: object = None            #: draft distributions (live source)
    trace_index: int = -1            #: position in the trace (trace source)
    drafted_len: int = 0             #: tokens drafted (before any pre-verify truncation)
    preverified: int = 0             #: leading tokens pre-verified and accepted
    resolved: tuple | None = None    #: (accepted, next token) found by a pre-verification
    ready_t: float = 0.0
    token_t: list = field(default_factory=list)


def _sample(rng, dist):
    c = np.cumsum(dist)
    return int(min(np.searchsorted(c, rng.random() * c[-1], side="right"), len(c) - 1))


class LiveSource:
    """Live golden decoding on ``pair`` (see the module docstring)."""

    def __init__(self, pair, policy, *, seed, greedy=False):
        self.pair, self.policy, self.seed, self.greedy = pair, policy, seed, greedy
        self.rng = np.random.default_rng([seed, 11])
        self._p = {}

    def draft(self, batch_id, context):
        """Draft one batch after ``context`` (prompt + committed + unverified tokens)."""
        ctx = list(context)
        pol = self.policy
        tokens, rows, ents = [], [], []
        pol.begin()
        while True:
            q = self.pair.draft.next_dist(ctx)
            x = int(np.argmax(q)) if self.greedy else _sample(self.rng, q)
            h = float(entropy_nats(q))
            tokens.append(x)
            rows.append(q)
            ents.append(h)
            ctx.append(x)
            n = len(tokens)
            stop = pol.stop(DraftStep(position=n, entropy=h, q=float(q[x])))
            if n >= pol.max_len or (stop and n >= pol.min_len):
                break
        return tokens, ents, np.array(rows), -1

    def outcome(self, batch, context, length=None):
        """``(accepted, next_token)`` of verifying the first ``length`` tokens (all by default)."""
        k = len(batch.tokens) if length is None else length
        key = batch.id
        if key not in self._p:
            self._p = {key: self.pair.target.score(context, batch.tokens)}
        p = self._p[key]
        toks = batch.tokens[:k]
        if self.greedy:
            return verify_draft_greedy(toks, p[:k + 1])
        rng = np.random.default_rng([self.seed, 13, batch.id])
        return verify_draft(toks, batch.q_rows[:k], p[:k + 1], rng)

    def observe(self, drafted, accepted):
        self.policy.observe(drafted, accepted)


class TraceSource:
    """Replay of a recorded trace's verified batches (see the module docstring)."""

    def __init__(self, records):
        from ahasd.sim.traces.decoding import verified_batches
        self.batches = verified_batches(records)
        if not self.batches:
            raise ValueError("the trace holds no verified batch to replay")
        self.next_index = 0
        self.prompt = list(records[0]["prompt"])

    def draft(self, batch_id, context):
        b = self.batches[self.next_index % len(self.batches)]
        self.next_index += 1
        return list(b["tokens"]), list(b["entropy"]), None, self.next_index - 1

    def outcome(self, batch, context, length=None):
        b = self.batches[batch.trace_index % len(self.batches)]
        k = len(batch.tokens) if length is None else length
        acc = min(b["accepted"], k)
        nxt = b["next_token"] if b["next_token"] is not None else 0
        return acc, (nxt if acc < len(batch.tokens) or length is None else 0)

    def rewind(self, batch):
        """A rejection of ``batch``: the next draft is the trace's batch after it."""
        self.next_index = batch.trace_index + 1

    def observe(self, drafted, accepted):
        pass


class RecordingSource:
    """A live source that records every answer, so that a later run can replay them."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = []

    def draft(self, batch_id, context):
        tokens, ents, rows, tidx = self.inner.draft(batch_id, context)
        self.calls.append(("draft", batch_id, len(context), list(tokens), list(ents)))
        return tokens, ents, rows, tidx

    def outcome(self, batch, context, length=None):
        r = self.inner.outcome(batch, context, length)
        self.calls.append(("outcome", batch.id, len(context), length, r))
        return r

    def observe(self, drafted, accepted):
        self.inner.observe(drafted, accepted)


class ReplaySource:
    """Replays a :class:`RecordingSource`'s answers; valid only where the engine asks the same
    questions in the same order (synchronous systems, whose decoding timing cannot change), which
    every call checks."""

    def __init__(self, calls):
        self.calls = calls
        self.i = 0

    def _next(self, kind, batch_id, ctx_len):
        c = self.calls[self.i] if self.i < len(self.calls) else None
        if c is None or c[:3] != (kind, batch_id, ctx_len):
            raise RuntimeError(f"replay diverged at call {self.i}: {c and c[:3]} != "
                               f"{(kind, batch_id, ctx_len)}")
        self.i += 1
        return c

    def draft(self, batch_id, context):
        c = self._next("draft", batch_id, len(context))
        return list(c[3]), list(c[4]), None, -1

    def outcome(self, batch, context, length=None):
        return self._next("outcome", batch.id, len(context))[4]

    def observe(self, drafted, accepted):
        pass
