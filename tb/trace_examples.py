"""Small decoding traces written by hand, for tests that need a valid trace without a model."""

from ahasd.sim.traces import decoding

__all__ = ["TINY_HEADER", "tiny_trace"]

#: The header of :func:`tiny_trace`: 3 output tokens after a 2-token prompt, at most 2 unverified
#: batches, greedy, fixed policy.
TINY_HEADER = decoding.header(vocab_size=10, policy="fixed", policy_params={}, greedy=True,
                              tokens=3, prompt=[1, 2], draft_cost=1.0, verify_cost=5.0,
                              max_unverified=2)


def tiny_trace():
    """A rejection: batch 0 verified with 1 of 2 tokens and residual 6, batch 1 (drafted) and 2
    (being drafted) squashed, batch 3 fully accepted with bonus 8; output cut to 3. A new list
    of new records on every call."""
    return [dict(TINY_HEADER),
            {"event": "draft", "batch": 0, "t": 2.0, "tokens": [3, 4], "entropy": [1.5, 0.2],
             "q": [0.5, 0.9], "edc": None},
            {"event": "draft", "batch": 1, "t": 3.0, "tokens": [5], "entropy": [2.0],
             "q": [0.25], "edc": {"cont": True, "index": 7}},
            {"event": "verify", "batch": 0, "t": 7.0, "kv_len": 2, "p": [0.5, 0.1],
             "accepted": 1, "full": False, "next_token": 6},
            {"event": "squash", "batch": 1, "t": 7.0, "drafted": True},
            {"event": "squash", "batch": 2, "t": 7.0, "drafted": False},
            {"event": "draft", "batch": 3, "t": 8.0, "tokens": [7], "entropy": [0.0],
             "q": [1.0], "edc": None},
            {"event": "verify", "batch": 3, "t": 12.0, "kv_len": 4, "p": [1.0],
             "accepted": 1, "full": True, "next_token": 8},
            {"event": "end", "t": 12.0, "output": [3, 6, 7]}]
