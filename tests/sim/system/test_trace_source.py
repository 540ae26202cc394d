"""ahasd.sim.system.sources.TraceSource: a recorded trace's verified batches replayed, the
accepted length cut to a shorter verification."""

from types import SimpleNamespace

from ahasd.sim.system.sources import TraceSource
from ahasd.sim.traces import decoding
from ahasd.tb.trace_examples import tiny_trace


def full_trace():
    head = decoding.header(vocab_size=10, policy="fixed", policy_params={}, greedy=True,
                           tokens=3, prompt=[1, 2], draft_cost=1.0, verify_cost=5.0,
                           max_unverified=2)
    return [head,
            {"event": "draft", "batch": 0, "t": 3.0, "tokens": [3, 4, 5],
             "entropy": [0.1, 0.2, 0.3], "q": [0.9, 0.9, 0.9], "edc": None},
            {"event": "verify", "batch": 0, "t": 8.0, "kv_len": 2, "p": [1.0, 1.0, 1.0],
             "accepted": 3, "full": True, "next_token": None},
            {"event": "end", "t": 8.0, "output": [3, 4, 5]}]


def batch(tokens, index):
    return SimpleNamespace(tokens=tokens, trace_index=index)


def test_a_shorter_verification_accepts_at_most_its_length():
    decoding.validate(full_trace())
    src = TraceSource(full_trace())
    assert src.draft(0, [1, 2])[0] == [3, 4, 5]
    assert src.outcome(batch([3, 4, 5], 0), [1, 2]) == (3, 0)
    assert src.outcome(batch([3, 4, 5], 0), [1, 2], length=2) == (2, 0)
    assert src.outcome(batch([3, 4, 5], 0), [1, 2], length=3) == (3, 0)


def test_a_rejection_replays_its_residual_and_rewinds():
    src = TraceSource(tiny_trace())
    tokens, _, _, index = src.draft(0, [1, 2])
    assert (tokens, index) == ([3, 4], 0)
    assert src.outcome(batch(tokens, index), [1, 2]) == (1, 6)
    assert src.outcome(batch(tokens, index), [1, 2], length=1) == (1, 6)
    src.rewind(batch(tokens, index))
    assert src.draft(1, [1, 2, 3, 6])[0] == [7]
