"""Golden model of EDC, the entropy-history-aware drafting control (docs/architecture.md 4.1).

Two variants share one interface:

``committed`` (default, what the RTL :class:`ahasd.hw.edc.EDC` implements, bit for bit)
    LEHT (speculative history) and LCEHT (committed history) are shift registers of entropy
    buckets, ``H0`` newest. ``draft`` shifts the batch's bucket into LEHT, increments LLR
    (saturating), forms the PHT index ``{avg(older half), avg(newer half), LLR}``, remembers
    ``(index, bucket)`` in a FIFO and decides *continue* iff ``PHT[index] >= 2**(counter_bits-1)``.
    ``verify`` pops the oldest batch and trains ``PHT[index]`` with the outcome; a full accept
    commits the bucket into LCEHT and decrements LLR, a rejection squashes the look-ahead batches:
    LEHT <- LCEHT, LLR <- 0, FIFO flushed.

``anchor``
    Bit for bit the C++ ``EDC`` class of the authors' public simulator (repository
    ``MAdrid1011/AHASD``, file ``ONNXim/src/async_queue/EDC.h``), for comparing prediction quality.
    LEHT is a circular buffer with ONE write pointer: a draft writes its bucket at the pointer and
    advances it; neither a commit nor a rollback touches it. The index averages physical slots
    ``0..D/2-1`` (low half) and ``D/2..D-1`` (high half), ``{avg_high, avg_low, LLR}``. The entropy
    is taken as a float32, clamped to ``[0, H_max]`` in float32, and the bucket is
    ``int(f32(f32(H / H_max) * f32(2**bucket_bits - 0.01)))`` (``7.99f`` for 3 bits). ``verify``
    decrements LLR (floor 0), copies the LEHT table into LCEHT on a full accept or the LCEHT table
    into LEHT on a rejection (tables only, the pointer stays), then trains the PHT entry indexed by
    the state *after* those changes (the anchor has no FIFO of pending indices and trains even when
    nothing is pending). The authors' class fixes 3-bit buckets and 2-bit counters reset to 2; other
    ``bucket_bits`` / ``counter_bits`` extend it in the obvious way.

Same-cycle ordering (RTL and golden model agree): when a verify and a draft arrive in the same
cycle, the verify is applied first (it concerns an older batch), then the draft sees the updated
history, LLR, FIFO and PHT. :meth:`EDC.step` models one such cycle.

Entropy input is the batch mean entropy in nats as UQ4.12, ``H_fx = clamp(round(H * 4096), 0,
65535)`` with round-half-up (:func:`entropy_to_fx`); bucket thresholds are ``t_k = round(k * H_max *
4096 / 2**bucket_bits)``, ``k = 1 .. 2**bucket_bits - 1`` (:func:`bucket_thresholds`); the bucket is
the number of thresholds ``<= H_fx``.
"""

from collections import deque
from dataclasses import dataclass

import numpy as np

from ahasd.spec.edc import (
    ENTROPY_BITS,
    ENTROPY_FRAC_BITS,
    ENTROPY_MAX,
    VARIANTS,
    EDCParams,
    bucket_thresholds,
    entropy_to_fx,
)
from ahasd.spec.params import check_bool, check_choice, check_int, check_real

__all__ = ["VARIANTS", "ENTROPY_FRAC_BITS", "ENTROPY_BITS", "Decision", "EDCParams", "EDC",
           "entropy_to_fx", "bucket_thresholds", "bucket_of", "EDCScore", "EDCScorer", "run_events",
           "score_events", "anchor_reach"]


def bucket_of(h_fx, thresholds):
    """Number of thresholds ``<= h_fx`` (what the RTL's comparators and adder compute)."""
    return sum(1 for t in thresholds if h_fx >= t)


@dataclass(frozen=True, slots=True)
class Decision:
    """EDC's answer to one drafted batch: keep drafting ahead (``cont``), and the PHT index used."""
    cont: bool
    index: int


class EDC:
    """Golden EDC model (see the module docstring for both variants and the ordering rule).

    Parameters
    ----------
    variant : {"committed", "anchor"}
    **params
        Hardware parameters of :class:`EDCParams` (keyword-only).

    Attributes
    ----------
    decisions, suppressed, verifications, squashes, fifo_drops : int
        Statistics counters (``suppressed`` = decisions that said stop; ``verifications`` = verify
        events that found a pending batch; ``squashes`` = those that were rejections;
        ``fifo_drops`` = pending batches forgotten because the FIFO was full).
    """

    def __init__(self, variant="committed", **params):
        self.variant = check_choice("variant", variant, VARIANTS)
        self.params = p = EDCParams(**params)
        self._thresholds = p.thresholds
        self.pht = [p.counter_reset] * p.pht_entries
        self.leht = [0] * p.history_depth     # committed: index 0 = H0 (newest); anchor: slots
        self.lceht = [0] * p.history_depth
        # anchor only: the one LEHT write pointer, which verify leaves alone (as the authors'
        # EDC.h does: its commit and rollback copy the tables, not the pointer).
        self.leht_ptr = 0
        self.llr = 0
        self.fifo: deque[tuple[int, int]] = deque()   # committed only: (index, bucket), oldest left
        self.decisions = self.suppressed = self.verifications = 0
        self.squashes = self.fifo_drops = 0

    # -- helpers -----------------------------------------------------------------------------
    def _index(self, history):
        p = self.params
        half = p.history_depth // 2
        avg_low = sum(history[:half]) >> p.half_shift
        avg_high = sum(history[half:]) >> p.half_shift
        return (avg_high << (p.bucket_bits + p.llr_bits)) | (avg_low << p.llr_bits) | self.llr

    def state_index(self):
        """PHT index of the current LEHT and LLR (for the anchor: the entry a verify trains)."""
        return self._index(self.leht)

    def _anchor_bucket(self, entropy_nats):
        # EDC.h's entropy_to_bucket: the argument is a C++ float, clamped to [0, H_max] in
        # float32, then (H / H_max) * 7.99f in float32 arithmetic, truncated towards zero.
        # Clamping the double against the float32 bounds first gives the same float32 (rounding
        # is monotonic and both bounds are float32 values) without numpy's overflow warning.
        p = self.params
        h_max = np.float32(p.h_max_nats)
        h = np.float32(min(max(float(entropy_nats), 0.0), float(h_max)))
        ratio = np.float32(h / h_max)
        return int(np.float32(ratio * np.float32((1 << p.bucket_bits) - 0.01)))

    def _decide(self, index):
        cont = self.pht[index] >= self.params.continue_threshold
        self.decisions += 1
        self.suppressed += not cont
        return Decision(cont, index)

    def _train(self, index, full):
        if full:
            self.pht[index] = min(self.pht[index] + 1, self.params.counter_max)
        else:
            self.pht[index] = max(self.pht[index] - 1, 0)

    # -- events ------------------------------------------------------------------------------
    def draft(self, entropy_nats):
        """A drafted batch with mean entropy ``entropy_nats`` (a finite number >= 0; above the
        UQ4.12 range it saturates): return its :class:`Decision`."""
        entropy_nats = check_real("entropy_nats", entropy_nats, 0.0)
        if self.variant == "committed":
            return self.draft_fx(entropy_to_fx(entropy_nats))
        p = self.params
        self.leht[self.leht_ptr] = self._anchor_bucket(entropy_nats)
        self.leht_ptr = (self.leht_ptr + 1) % p.history_depth
        self.llr = min(self.llr + 1, p.llr_max)
        return self._decide(self._index(self.leht))

    def draft_fx(self, entropy_fx):
        """A drafted batch with UQ4.12 mean entropy ``entropy_fx`` (the RTL's input)."""
        entropy_fx = check_int("entropy_fx", entropy_fx, 0, ENTROPY_MAX)
        if self.variant != "committed":
            return self.draft(entropy_fx / (1 << ENTROPY_FRAC_BITS))
        p = self.params
        bucket = bucket_of(entropy_fx, self._thresholds)
        self.leht = [bucket] + self.leht[:-1]
        self.llr = min(self.llr + 1, p.llr_max)
        index = self._index(self.leht)
        if len(self.fifo) == p.fifo_depth:
            self.fifo.popleft()
            self.fifo_drops += 1
        self.fifo.append((index, bucket))
        return self._decide(index)

    def verify(self, full):
        """The oldest unverified batch was verified; ``full`` = every drafted token accepted."""
        full = check_bool("full", full)
        if self.variant == "anchor":
            self.llr = max(self.llr - 1, 0)
            if full:
                self.lceht = list(self.leht)
            else:
                self.leht = list(self.lceht)
            self.verifications += 1
            self.squashes += not full
            self._train(self._index(self.leht), full)
            return
        if not self.fifo:
            return
        index, bucket = self.fifo.popleft()
        self.verifications += 1
        self._train(index, full)
        if full:
            self.lceht = [bucket] + self.lceht[:-1]
            self.llr = max(self.llr - 1, 0)
        else:
            self.squashes += 1
            self.leht = list(self.lceht)
            self.llr = 0
            self.fifo.clear()

    def step(self, draft_fx=None, verify=None):
        """One clock cycle of the RTL: an optional verify (``True``/``False``) then an optional
        draft (UQ4.12 entropy). Returns the draft's :class:`Decision` or ``None``."""
        if verify is not None:
            self.verify(verify)
        if draft_fx is not None:
            return self.draft_fx(draft_fx)
        return None


@dataclass
class EDCScore:
    """Prediction quality of EDC over an event sequence.

    A decision is *scored* when the batch it was made for is verified: *continue* is correct for
    a fully accepted batch and *stop* for a rejected one. Batches squashed by an earlier rejection
    are counted in ``squashed`` and not scored.
    """
    drafts: int = 0
    verifies: int = 0
    continues: int = 0
    scored: int = 0
    correct: int = 0
    squashed: int = 0

    @property
    def continue_rate(self):
        return self.continues / self.drafts if self.drafts else 0.0

    @property
    def suppression_rate(self):
        return 1.0 - self.continue_rate if self.drafts else 0.0

    @property
    def accuracy(self):
        return self.correct / self.scored if self.scored else 0.0

    def as_dict(self):
        return {"drafts": self.drafts, "verifies": self.verifies, "continue_rate":
                self.continue_rate, "suppression_rate": self.suppression_rate,
                "accuracy": self.accuracy, "scored": self.scored, "squashed": self.squashed}


class EDCScorer:
    """The scoring of :func:`score_events`, fed one decision or verify at a time (a stream of any
    length: it holds one byte per unverified draft).

    :meth:`draft` takes each draft's :class:`Decision` (from the golden model or the RTL),
    :meth:`verify` each verify's outcome; :attr:`score` is the :class:`EDCScore` so far.
    """

    def __init__(self):
        self.score = EDCScore()
        self._pending = bytearray()       # cont of each unverified decision, oldest at _head
        self._head = 0

    def draft(self, decision):
        s = self.score
        s.drafts += 1
        s.continues += decision.cont
        self._pending.append(decision.cont)

    def verify(self, full):
        s = self.score
        s.verifies += 1
        if self._head < len(self._pending):
            cont = bool(self._pending[self._head])
            self._head += 1
            s.scored += 1
            s.correct += cont == bool(full)
            if not full:
                s.squashed += len(self._pending) - self._head
                self._pending.clear()
                self._head = 0
            elif self._head > 4096 and 2 * self._head > len(self._pending):
                del self._pending[:self._head]
                self._head = 0


def run_events(edc, events, scorer):
    """Run ``events`` (``("draft", entropy_nats)`` / ``("verify", full)``) through ``edc``,
    scoring them in ``scorer`` (an :class:`EDCScorer`); yield the :class:`Decision` of each draft
    as it is made (a generator: memory does not grow with the events)."""
    for op, value in events:
        if op == "draft":
            decision = edc.draft(value)
            scorer.draft(decision)
            yield decision
        elif op == "verify":
            edc.verify(value)
            scorer.verify(value)
        else:
            raise ValueError(f"unknown EDC event {op!r}")


def score_events(edc, events):
    """Run ``events`` (``("draft", entropy_nats)`` / ``("verify", full)``) through ``edc``.

    Returns ``(decisions, score)``: the list of :class:`Decision` (one per draft) and an
    :class:`EDCScore` (:func:`run_events` with a fresh :class:`EDCScorer`).
    """
    scorer = EDCScorer()
    decisions = list(run_events(edc, events, scorer))
    return decisions, scorer.score


def anchor_reach(events):
    """Replay ``events`` through the anchor EDC and count what its PHT sees.

    Returns ``(drafts, at_llr_max, trained_reads)``: drafts, drafts made with LLR at its maximum,
    and drafts whose PHT entry some earlier verify had trained (the anchor's verify trains the
    entry of the state after its LLR decrement and table copy, not the entry the draft read).
    """
    edc, trained = EDC(variant="anchor"), set()
    drafts = at_max = trained_reads = 0
    for op, value in events:
        if op == "draft":
            index = edc.draft(value).index
            drafts += 1
            at_max += edc.llr == edc.params.llr_max
            trained_reads += index in trained
        else:
            edc.verify(value)
            trained.add(edc.state_index())
    return drafts, at_max, trained_reads
