"""ahasd.sim.traces.decoding.stats on the hand-written tiny trace, every figure counted by hand
from its records (three drafts of 2, 1 and 1 tokens, two verifications, two squashes)."""

import pytest

from ahasd.sim.traces.decoding import stats
from ahasd.tb.trace_examples import tiny_trace


def test_stats_of_the_tiny_trace():
    s = stats(tiny_trace())
    assert (s["policy"], s["output_tokens"], s["batches_drafted"], s["verifications"],
            s["squashed"], s["time"]) == ("fixed", 3, 3, 2, 2, 12.0)
    # Verified batches 0 (2 tokens, 1 accepted) and 3 (1 token, 1 accepted, full).
    assert s["acceptance_rate"] == pytest.approx(2 / 3)
    assert s["accepted_per_verification"] == 1.0
    assert s["tokens_per_verification"] == 1.5
    assert s["full_accept_rate"] == 0.5
    assert s["mean_draft_length"] == pytest.approx(4 / 3)
    assert s["mean_entropy"] == pytest.approx((1.5 + 0.2 + 2.0 + 0.0) / 4)
    assert s["entropy_histogram"] == {"edges": [float(e) for e in range(11)],
                                      "counts": [2, 1, 1, 0, 0, 0, 0, 0, 0, 0]}


def test_histogram_clips_to_its_range():
    s = stats(tiny_trace(), bins=2, h_max=1.0)
    assert s["entropy_histogram"] == {"edges": [0.0, 0.5, 1.0], "counts": [2, 2]}
