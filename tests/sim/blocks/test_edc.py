"""Golden EDC model: hand-worked cases of docs/architecture.md 4.1, both variants, parameter checks."""

import math

import pytest

from ahasd.sim.blocks.edc import EDC, Decision, bucket_of, bucket_thresholds, entropy_to_fx, score_events


def test_entropy_fixed_point_conversion():
    assert entropy_to_fx(0.0) == 0
    assert entropy_to_fx(1.0) == 4096
    assert entropy_to_fx(1.0 / 8192) == 1          # round half up
    assert entropy_to_fx(-2.0) == 0
    assert entropy_to_fx(16.0) == 65535
    assert entropy_to_fx(math.inf) == 65535
    with pytest.raises(ValueError, match="entropy_nats must be a number, not nan"):
        entropy_to_fx(math.nan)


def test_default_thresholds_and_buckets():
    t = bucket_thresholds(10.0, 3)
    assert t == [5120 * k for k in range(1, 8)]
    assert [bucket_of(x, t) for x in (0, 5119, 5120, 12288, 35840, 65535)] == [0, 0, 1, 2, 7, 7]


def test_committed_draft_index_layout():
    edc = EDC()
    # H = 3.0 nats -> 12288 -> bucket 2; history [2,0,..]: both averages 0, LLR 1.
    assert edc.draft(3.0) == Decision(True, 1)
    for _ in range(3):
        edc.draft(9.5)                              # bucket 7
    # newer half [7,7,7,2] -> avg (23 >> 2) = 5; older half all 0; LLR 4.
    assert edc.draft_fx(0) .index == (0 << 6) | (((0 + 7 + 7 + 7) >> 2) << 3) | 5
    assert edc.leht == [0, 7, 7, 7, 2, 0, 0, 0]
    assert edc.llr == 5 and len(edc.fifo) == 5


def test_committed_verify_trains_the_drafted_index_and_squashes_on_reject():
    edc = EDC()
    first = edc.draft(3.0)
    second = edc.draft(3.0)
    edc.verify(True)                                # first batch fully accepted
    assert edc.pht[first.index] == 3 and edc.lceht[0] == 2 and edc.llr == 1
    edc.verify(False)                               # second rejected
    assert edc.pht[second.index] == 1
    assert edc.leht == edc.lceht and edc.llr == 0 and not edc.fifo
    assert (edc.verifications, edc.squashes) == (2, 1)
    # Counters saturate.
    indices = set()
    for _ in range(5):
        indices.add(edc.draft(3.0).index)
        edc.verify(False)
    assert len(indices) == 1 and edc.pht[indices.pop()] == 0   # saturated at 0
    assert not edc.draft(3.0).cont and edc.suppressed >= 1


def test_fifo_overflow_drops_the_oldest():
    edc = EDC(fifo_depth_log2=1)
    edc.draft(1.0)
    edc.draft(5.0)
    edc.draft(9.0)
    assert edc.fifo_drops == 1 and len(edc.fifo) == 2
    assert [b for _, b in edc.fifo] == [bucket_of(entropy_to_fx(5.0), edc._thresholds),
                                       bucket_of(entropy_to_fx(9.0), edc._thresholds)]


def test_step_orders_verify_before_draft():
    edc = EDC()
    edc.draft(3.0)
    decision = edc.step(draft_fx=entropy_to_fx(3.0), verify=False)
    assert edc.squashes == 1 and edc.llr == 1 and len(edc.fifo) == 1
    assert decision.index & 0b111 == 1


def test_anchor_variant_follows_the_public_simulator():
    edc = EDC(variant="anchor")
    assert edc._anchor_bucket(10.0) == 7            # 1.0 * 7.99 -> 7
    assert edc._anchor_bucket(5.0) == 3             # 0.5 * 7.99 = 3.995 -> 3
    assert edc._anchor_bucket(-1.0) == 0
    edc.draft(5.0)
    edc.draft(10.0)
    assert edc.leht[:2] == [3, 7] and edc.leht_ptr == 2   # written at a rotating pointer
    # Index averages physical slots 0-3 (low) and 4-7 (high): (3+7)>>2 = 2, LLR 2.
    assert edc.draft(0.0).index == (2 << 3) | 3
    edc.verify(False)                               # LLR-1, LCEHT -> LEHT, train new state
    # The rollback copies the table only: the write pointer stays at slot 3.
    assert edc.llr == 2 and edc.leht == [0] * 8 and edc.leht_ptr == 3
    assert edc.pht[2] == 1                          # index of (all-zero history, LLR 2)


def test_anchor_write_pointer_survives_a_rollback():
    """Four drafts of 9.0 nats, a rejecting verify, a fifth draft of 9.0 nats.

    Worked by hand from the authors' class (MAdrid1011/AHASD, ONNXim/src/async_queue/EDC.h),
    defaults D = 8, 3-bit buckets and LLR, 2-bit PHT counters reset to 2 (WEAKLY_TAKEN):

    * bucket of 9.0: float32(9.0) / 10.0f = 0.9f (0.89999998), times 7.99f = 7.191 in float32,
      truncated: 7.
    * draft k (k = 1..4) writes 7 into slot k-1 and moves the pointer to k; LLR = k. The low half
      (slots 0-3) sums to 7k, avg_low = 7k / 4 = 1, 3, 5, 7; the high half (slots 4-7) is 0.
      Index = avg_high << 6 | avg_low << 3 | LLR = 9, 26, 43, 60; PHT = 2 >= 2: continue.
    * verify(rejected): LLR 4 -> 3; LEHT <- LCEHT (all zero; LCEHT was never written); the
      pointer is not restored and stays 4. Train the index of the new state, 0 << 6 | 0 << 3 | 3
      = 3: PHT[3] 2 -> 1.
    * draft 5 writes 7 into slot 4 (the high half) and moves the pointer to 5; LLR = 4.
      avg_low = 0 / 4 = 0, avg_high = 7 / 4 = 1: index = 1 << 6 | 0 << 3 | 4 = 68; PHT[68] = 2:
      continue.

    A model that saved and restored the pointer with the tables (this project's anchor before
    issue 8) would write slot 0 instead and decide at 0 << 6 | 1 << 3 | 4 = 12.
    """
    edc = EDC(variant="anchor")
    assert edc._anchor_bucket(9.0) == 7
    assert [edc.draft(9.0) for _ in range(4)] == [Decision(True, i) for i in (9, 26, 43, 60)]
    assert edc.leht == [7, 7, 7, 7, 0, 0, 0, 0] and edc.leht_ptr == 4 and edc.llr == 4
    edc.verify(False)
    assert edc.leht == [0] * 8 and edc.lceht == [0] * 8
    assert edc.leht_ptr == 4 and edc.llr == 3 and edc.state_index() == 3
    assert edc.pht[3] == 1 and edc.pht.count(2) == len(edc.pht) - 1
    assert edc.draft(9.0) == Decision(True, 68)
    assert edc.leht == [0, 0, 0, 0, 7, 0, 0, 0] and edc.leht_ptr == 5 and edc.llr == 4


def test_anchor_commit_copies_the_table_and_keeps_the_pointer():
    """A full accept copies LEHT into LCEHT; a later rollback restores those contents, while the
    pointer keeps advancing from where the drafts left it.

    Drafts of 10.0 (bucket 7: 1.0f * 7.99f = 7.99, truncated) and 2.5 (0.25f * 7.99f = 1.9975:
    bucket 1) fill slots 0 and 1, pointer 2, LLR 2. verify(accepted): LLR 1, LCEHT = [7, 1, 0..],
    train index {0, (7 + 1) / 4 = 2, 1} = 17: PHT[17] 2 -> 3. A draft of 0.0 writes bucket 0 into
    slot 2 (pointer 3, LLR 2), then verify(rejected): LLR 1, LEHT = [7, 1, 0..] again, pointer
    still 3, train index 17 again: 3 -> 2. The next draft of 10.0 lands in slot 3: low half
    7 + 1 + 0 + 7 = 15, avg 3; LLR 2: index 3 << 3 | 2 = 26.
    """
    edc = EDC(variant="anchor")
    assert edc._anchor_bucket(2.5) == 1
    edc.draft(10.0)
    edc.draft(2.5)
    edc.verify(True)
    assert edc.lceht == [7, 1, 0, 0, 0, 0, 0, 0] and edc.leht_ptr == 2 and edc.llr == 1
    assert edc.pht[17] == 3
    edc.draft(0.0)
    edc.verify(False)
    assert edc.leht == [7, 1, 0, 0, 0, 0, 0, 0] and edc.leht_ptr == 3 and edc.llr == 1
    assert edc.pht[17] == 2
    assert edc.draft(10.0).index == 26 and edc.leht_ptr == 4


def test_anchor_bucket_is_float32_and_clamped():
    """EDC.h computes the bucket in float32; float64 would differ just below a bucket boundary.

    x = 8.760951042175293 is a float32 value (just below 10 * 7 / 7.99). In float32:
    7.99f = 4189061 / 2**19 = 7.98999977; x / 10.0f = 0.876095104 rounds to 14698437 / 2**24 =
    0.876095116; the product 6.99999978 lies between the float32 neighbours 6.99999952 (7 - 2**-21)
    and 7.0 and is nearer 7.0, so the product rounds to 7.0: bucket 7. In float64 the product is
    0.8760951042 * 7.99 = 6.99999988: bucket 6.
    """
    edc = EDC(variant="anchor")
    assert edc._anchor_bucket(8.760951042175293) == 7
    assert int(8.760951042175293 / 10 * 7.99) == 6       # what float64 arithmetic would give
    assert edc._anchor_bucket(1e300) == 7 and edc._anchor_bucket(math.inf) == 7
    assert edc._anchor_bucket(-1e300) == 0
    with pytest.raises(ValueError, match="entropy_nats must be a finite number >= 0, not nan"):
        edc.draft(math.nan)


def _reference_score(decisions_and_events):
    """EDCScore fields counted from the whole list at once: each verify scores the oldest
    unverified draft (continue is right iff the batch was fully accepted); a rejection squashes
    every later unverified draft."""
    counts = dict(drafts=0, verifies=0, continues=0, scored=0, correct=0, squashed=0)
    pending = []
    for op, value, cont in decisions_and_events:
        if op == "draft":
            counts["drafts"] += 1
            counts["continues"] += int(cont)
            pending.append(cont)
        else:
            counts["verifies"] += 1
            if pending:
                counts["scored"] += 1
                counts["correct"] += int(pending[0] == value)
                counts["squashed"] += 0 if value else len(pending) - 1
                pending = pending[1:] if value else []
    return counts


@pytest.mark.parametrize("variant", ["committed", "anchor"])
def test_streaming_scorer_and_score_events_count_as_the_definition(variant):
    """``run_events`` scores one event at a time in bounded memory (``ahasd edc replay``);
    it and ``score_events`` must give the counts of the definition, across the scorer's
    internal compaction (a long run of pending drafts)."""
    from ahasd.sim.blocks.edc import EDCScorer, run_events
    from ahasd.sim.traces.edc_events import random_events
    events = list(random_events(30_000, seed=8))
    events += [("draft", 2.0)] * 9000 + [("verify", True)] * 9000 + [("verify", False)]
    decisions, score = score_events(EDC(variant=variant), events)
    scorer = EDCScorer()
    assert list(run_events(EDC(variant=variant), iter(events), scorer)) == decisions
    it = iter(decisions)
    expected = _reference_score((op, value, next(it).cont if op == "draft" else None)
                                for op, value in events)
    for got in (score, scorer.score):
        assert {k: getattr(got, k) for k in expected} == expected
    assert expected["squashed"] > 0 and 0 < expected["correct"] < expected["scored"]
    with pytest.raises(ValueError, match="unknown EDC event 'commit'"):
        score_events(EDC(variant=variant), [("commit", True)])
