"""Golden EDC model: hand-worked cases of ARCHITECTURE 4.1, both variants, parameter checks."""

import math

import pytest

from ahasd.sim.blocks.edc import (EDC, Decision, EDCParams, bucket_of, bucket_thresholds, entropy_to_fx,
                           score_events)


def test_entropy_fixed_point_conversion():
    assert entropy_to_fx(0.0) == 0
    assert entropy_to_fx(1.0) == 4096
    assert entropy_to_fx(1.0 / 8192) == 1          # round half up
    assert entropy_to_fx(-2.0) == 0
    assert entropy_to_fx(16.0) == 65535
    assert entropy_to_fx(math.inf) == 65535
    with pytest.raises(ValueError, match="entropy must be a number, not NaN"):
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
    assert edc.llr == 2 and edc.leht == [0] * 8 and edc.leht_ptr == 0
    assert edc.pht[2] == 1                          # index of (all-zero history, LLR 2)


def test_score_counts_accuracy_over_verified_batches():
    edc = EDC()
    events = [("draft", 3.0), ("draft", 3.0), ("verify", True), ("verify", False),
              ("draft", 3.0), ("draft", 3.0), ("verify", False)]
    decisions, score = score_events(edc, events)
    assert len(decisions) == 4 and score.drafts == 4 and score.verifies == 3
    assert score.scored == 3 and score.squashed == 1
    assert score.correct == sum(d.cont == full for d, full in
                                zip([decisions[0], decisions[1], decisions[2]],
                                    [True, False, False]))


@pytest.mark.parametrize("kwargs, message", [
    ({"variant": "bimodal"}, "variant must be one of committed, anchor, not 'bimodal'"),
    ({"history_depth": 6}, "history_depth must be a power of two >= 2, not 6"),
    ({"history_depth": 1}, "history_depth must be an integer in 2..64, not 1"),
    ({"bucket_bits": 5}, "bucket_bits must be an integer in 1..4, not 5"),
    ({"llr_bits": 0}, "llr_bits must be an integer in 1..8, not 0"),
    ({"counter_bits": "2"}, "counter_bits must be an integer in 1..8, not '2'"),
    ({"counter_reset": -1}, "counter_reset must be an integer in 0..3, not -1"),
    ({"fifo_depth_log2": 0}, "fifo_depth_log2 must be an integer in 1..8, not 0"),
    ({"h_max_nats": 0}, r"h_max_nats must be a number in \(0, 16\) nats \(UQ4.12\), not 0"),
])
def test_parameters_are_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EDC(**kwargs)
