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

:class:`AcceptanceSource` is a synthetic decoding whose per-token acceptance is a parameter ``a``
(``ahasd claims`` sweeps it): no language model, drafted tokens accepted with a set probability,
and per-token entropies that rise with a token's chance of rejection, so the policies, the EDC
and TVC see a signal they can use (see the class).
"""

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ahasd.sim.decoding.lookahead import Verdict
from ahasd.sim.decoding.ngram import NGramModel, entropy_nats
from ahasd.sim.decoding.policies import DraftStep
from ahasd.sim.decoding.speculative import accept_prob, residual
from ahasd.spec.params import check_positive, check_unit

__all__ = ["Batch", "Source", "LiveSource", "TraceSource", "RecordingSource", "ReplaySource",
           "AcceptanceSource", "DistCache", "DISTS", "prefix_rate"]


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
    resolved: Verdict | None = None  #: settled by a pre-verification that found a rejection
    ready_t: float = 0.0
    token_t: list = field(default_factory=list)


class Source(Protocol):
    """What the engine asks a source (a source may also have ``rewind(batch)``, called after a
    rejection of ``batch``: :class:`TraceSource`)."""

    def draft(self, batch_id: int, context: list[int]) -> tuple[list, list, object, int]:
        """``(tokens, entropies, draft rows or None, trace index)`` of one batch after
        ``context``."""
        ...

    def outcome(self, batch: Batch, context: list[int],
                length: int | None = None) -> tuple[int, int]:
        """``(accepted, next_token)`` of verifying the batch's first ``length`` tokens."""
        ...

    def observe(self, drafted: int, accepted: int) -> None:
        """A batch of ``drafted`` tokens was settled with ``accepted`` of them accepted."""
        ...


def _sample(rng, dist):
    return _sample_cdf(rng, np.cumsum(dist))


def _sample_cdf(rng, c):
    # The golden decoder's inverse-CDF draw (ahasd.sim.decoding.speculative._sample) on the
    # cumulative sum ``c`` of the distribution.
    return int(min(np.searchsorted(c, rng.random() * c[-1], side="right"), len(c) - 1))


class _Row:
    """One next-token distribution, its cumulative sum (rows sampled from) and its entropy."""
    __slots__ = ("p", "cdf", "_entropy")

    def __init__(self, p):
        self.p, self.cdf, self._entropy = p, None, None

    @property
    def entropy(self):
        if self._entropy is None:
            self._entropy = float(entropy_nats(self.p))
        return self._entropy

    @property
    def nbytes(self):
        return self.p.nbytes + (self.cdf.nbytes if self.cdf is not None else 0)


class DistCache:
    """Next-token distributions of n-gram models shared by every run of this process.

    An n-gram model's distribution depends on the last ``order - 1`` tokens of the context only
    (:meth:`ahasd.sim.decoding.ngram.NGramModel.next_dist`), and is computed by the same
    deterministic arithmetic each time, so a cached row is bit for bit what a new call returns:
    runs that revisit a context (every cell starts from the same prompt, and cells of one policy
    share long stretches of text) reuse it. Least recently used rows are dropped beyond
    ``max_bytes`` (a row is 32 KB with the default 4096-token vocabulary, twice that with the
    cumulative sum a draft row is sampled from). Any other language model is called every time.
    """

    def __init__(self, max_bytes=256 << 20):
        self.max_bytes = max_bytes
        self._rows: OrderedDict[tuple, _Row] = OrderedDict()
        self.bytes = self.hits = self.misses = 0

    def clear(self):
        self._rows.clear()
        self.bytes = self.hits = self.misses = 0

    def row(self, model, context, *, cdf=False):
        """The row after ``context``; with ``cdf`` its cumulative sum is there too."""
        if not isinstance(model, NGramModel):
            row = _Row(model.next_dist(context))
            if cdf:
                row.cdf = np.cumsum(row.p)
            return row
        n = model.order - 1
        key = (model, tuple(context[-n:]) if n else ())
        r = self._rows.get(key)
        if r is not None:
            self.hits += 1
            self._rows.move_to_end(key)
        else:
            self.misses += 1
            r = self._rows[key] = _Row(model.next_dist(context))
            self.bytes += r.p.nbytes
        if cdf and r.cdf is None:
            r.cdf = np.cumsum(r.p)
            self.bytes += r.cdf.nbytes
        while self.bytes > self.max_bytes and len(self._rows) > 1:
            _, old = self._rows.popitem(last=False)
            self.bytes -= old.nbytes
        return r

    def row_after(self, model, context, extra):
        """:meth:`row` after ``context + extra``, without copying all of a long context."""
        if isinstance(model, NGramModel):
            n = model.order - 1
            context = context[-n:] if n else []
        return self.row(model, list(context) + list(extra))


#: The process's cache (each worker process has its own).
DISTS = DistCache()


class LiveSource:
    """Live golden decoding on ``pair`` (see the module docstring)."""

    def __init__(self, pair, policy, *, seed, greedy=False):
        self.pair, self.policy, self.seed, self.greedy = pair, policy, seed, greedy
        self.rng = np.random.default_rng([seed, 11])
        self._p = {}
        self._cache = DISTS

    def draft(self, batch_id, context):
        """Draft one batch after ``context`` (prompt + committed + unverified tokens)."""
        ctx = list(context)
        pol = self.policy
        tokens, rows, ents = [], [], []
        pol.begin()
        while True:
            row = self._cache.row(self.pair.draft, ctx, cdf=not self.greedy)
            q = row.p
            x = int(np.argmax(q)) if self.greedy else _sample_cdf(self.rng, row.cdf)
            h = row.entropy
            tokens.append(x)
            rows.append(q)
            ents.append(h)
            ctx.append(x)
            n = len(tokens)
            stop = pol.stop(DraftStep(position=n, entropy=h, q=float(q[x])))
            if n >= pol.max_len or (stop and n >= pol.min_len):
                break
        return tokens, ents, rows, -1

    def _target_row(self, batch, context, i):
        """The target's distribution after ``context + batch.tokens[:i]`` (computed when first
        needed: a verification that rejects at position i never looks beyond row i)."""
        if self._p.get("id") != batch.id:
            self._p = {"id": batch.id}
        if i not in self._p:
            self._p[i] = self._cache.row_after(self.pair.target, context, batch.tokens[:i]).p
        return self._p[i]

    def outcome(self, batch, context, length=None):
        """``(accepted, next_token)`` of verifying the first ``length`` tokens (all by default).

        The same decisions and draws as :func:`ahasd.sim.decoding.speculative.verify_draft`
        (and ``verify_draft_greedy``) on the whole ``(k+1, V)`` target array, in the same order,
        with the target rows computed only as far as the verification reads them (tested
        against those functions).
        """
        k = len(batch.tokens) if length is None else length
        toks = batch.tokens[:k]
        if self.greedy:
            for i, x in enumerate(toks):
                best = int(np.argmax(self._target_row(batch, context, i)))
                if x != best:
                    return i, best
            return k, int(np.argmax(self._target_row(batch, context, k)))
        rng = np.random.default_rng([self.seed, 13, batch.id])
        for i, x in enumerate(toks):
            p, q = self._target_row(batch, context, i), batch.q_rows[i]
            if rng.random() >= accept_prob(p, q, x):
                return i, _sample(rng, residual(p, q))
        return k, _sample(rng, self._target_row(batch, context, k))

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


def prefix_rate(a, k):
    """The per-token probability ``p`` (given the tokens before it were accepted) at which a
    batch of ``k`` drafted tokens, accepted as a prefix, accepts ``a * k`` tokens on average:
    the root of ``p + p**2 + ... + p**k = a * k`` in [0, 1] (``a`` in [0, 1]; ``k = 1``: ``a``)."""
    check_unit("a", a)
    check_positive("k", k, integer=True)
    target = a * k
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if sum(mid ** j for j in range(1, k + 1)) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


class AcceptanceSource:
    """A synthetic decoding whose acceptance (accepted over drafted tokens, the simulator's
    ``acceptance_rate``) is ``a``.

    Model. Each drafted token ``i`` carries a latent ``u_i ~ U(0, 1)``; its draft entropy is
    ``H_LOW + (H_HIGH - H_LOW) x clip(u_i + NOISE x z_i, 0, 1)`` nats (``z_i`` standard normal)
    and the drafted token's draft probability ``q_i = exp(-H_i)``. A verification accepts the
    batch's longest prefix of tokens with ``u_i < p``, as speculative sampling does (the first
    rejected token ends the batch), and emits a next token. So a token's rejection is the more
    likely the higher its entropy: the entropy is a noisy signal of the outcome, as a real draft
    model's is (the golden n-gram pair: median entropy 2.05 nats for accepted and 3.54 for
    rejected tokens), which the policies' stop rules, the EDC (batch mean entropy) and TVC use.

    Calibration. ``p`` is set per batch from its length ``k`` at draft time:
    :func:`prefix_rate` of ``a_eff`` and ``k``, so a batch accepts ``a_eff x k`` tokens on average
    if its length did not depend on its latents. It does (a policy stops after a high-entropy
    token, which is likely rejected), so ``a_eff`` corrects the run's running error:
    ``a_eff = clip(a + (a x drafted - accepted) / GAIN_TOKENS, A_MIN, A_MAX)`` over the batches
    settled so far (:meth:`observe`), a proportional correction that keeps the run's measured
    acceptance at ``a`` (tested: within :data:`TOLERANCE` at 1024 tokens). Pre-verification and
    verification of a batch read the same latents and agree token for token.

    Tokens are random ids below ``vocab`` (nothing reads their values); the draws come from
    generators seeded by ``seed`` alone, so a run is reproducible.
    """

    H_LOW, H_HIGH, NOISE = 0.25, 5.0, 0.2
    GAIN_TOKENS = 32.0
    A_MIN, A_MAX = 0.01, 0.995
    #: measured acceptance of a run of 1024 tokens against ``a`` (tests/sim/system)
    TOLERANCE = 0.02

    def __init__(self, a, policy, *, seed, vocab=4096):
        check_unit("acceptance", a)
        self.a, self.policy, self.seed, self.vocab = float(a), policy, seed, vocab
        self.rng = np.random.default_rng([seed, 17])
        self.drafted = self.accepted = 0
        self._latent: dict[int, tuple[np.ndarray, float]] = {}

    def rate(self):
        """``a_eff`` for the next batch (see the class)."""
        err = self.a * self.drafted - self.accepted
        return min(self.A_MAX, max(self.A_MIN, self.a + err / self.GAIN_TOKENS))

    def draft(self, batch_id, context):
        pol, rng = self.policy, self.rng
        us, ents, tokens = [], [], []
        pol.begin()
        while True:
            u = float(rng.random())
            h = self.H_LOW + (self.H_HIGH - self.H_LOW) * min(
                1.0, max(0.0, u + self.NOISE * float(rng.standard_normal())))
            us.append(u)
            ents.append(h)
            tokens.append(int(rng.integers(self.vocab)))
            n = len(tokens)
            stop = pol.stop(DraftStep(position=n, entropy=h, q=math.exp(-h)))
            if n >= pol.max_len or (stop and n >= pol.min_len):
                break
        self._latent[batch_id] = (np.array(us), prefix_rate(self.rate(), len(tokens)))
        return tokens, ents, None, -1

    def outcome(self, batch, context, length=None):
        us, p = self._latent[batch.id] if length is not None else self._latent.pop(batch.id)
        k = len(batch.tokens) if length is None else length
        rejected = np.flatnonzero(us[:k] >= p)
        n = int(rejected[0]) if rejected.size else k
        nxt = int(np.random.default_rng([self.seed, 19, batch.id]).integers(self.vocab))
        return n, nxt

    def observe(self, drafted, accepted):
        self.drafted += drafted
        self.accepted += accepted
        self.policy.observe(drafted, accepted)
