"""Generators of long traces as JSON lines, produced lazily (for memory and speed measurements:
``ahasd bench`` and the bounded-memory tests). Every trace they write is valid."""

import random

from ahasd.sim.traces.decoding import header
from ahasd.sim.traces.lines import dumps

__all__ = ["edc_event_lines", "tvc_lines", "decoding_lines", "write_lines"]


def edc_event_lines(events, seed=0):
    """``events`` EDC event lines of :func:`ahasd.sim.traces.edc_events.random_events`."""
    from ahasd.sim.traces.edc_events import random_events
    for op, value in random_events(events, seed):
        if op == "draft":
            yield '{"op":"draft","entropy":%r}\n' % value
        else:
            yield '{"op":"verify","full":%s}\n' % ("true" if value else "false")


def tvc_lines(decisions, seed=0, params=None, chunk=1000):
    """About ``decisions`` decides of :func:`ahasd.sim.traces.tvc.realistic_trace`, generated
    ``chunk`` decides at a time."""
    from ahasd.sim.traces.tvc import realistic_trace
    made = 0
    while made < decisions:
        n = min(chunk, decisions - made)
        for item in realistic_trace(n, seed=seed * 1_000_003 + made, params=params):
            yield dumps(item) + "\n"
        made += n


def _decoding_events(batches, seed, vocab, max_len, lookahead):
    """The events of :func:`decoding_lines` (without header and end): dicts, then the output
    tokens emitted by each verify through ``emit``."""
    rng = random.Random(seed)
    t, next_id, verified, committed = 0.0, 0, 0, 0
    pending: list[tuple[int, list[int]]] = []    # (batch id, tokens) of unverified batches
    while verified < batches:
        while len(pending) < lookahead:
            k = rng.randint(1, max_len)
            t += k
            tokens = [rng.randrange(vocab) for _ in range(k)]
            pending.append((next_id, tokens))
            yield {"event": "draft", "batch": next_id, "t": t, "tokens": tokens,
                   "entropy": [rng.lognormvariate(1.0, 0.6) for _ in range(k)],
                   "q": [rng.random() for _ in range(k)], "edc": None}, None
            next_id += 1
        batch, tokens = pending.pop(0)
        k = len(tokens)
        accepted = k if rng.random() < 0.5 else rng.randint(0, k - 1)
        full = accepted == k
        nxt = None if full else rng.randrange(vocab)
        t += 5.0
        emitted = tokens[:accepted] + ([nxt] if nxt is not None else [])
        yield ({"event": "verify", "batch": batch, "t": t, "kv_len": 3 + committed,
                "p": [rng.random() for _ in range(k)], "accepted": accepted, "full": full,
                "next_token": nxt}, emitted)
        verified += 1
        committed += len(emitted)
        if not full:
            for squashed, _ in pending:
                yield {"event": "squash", "batch": squashed, "t": t, "drafted": True}, None
            pending = []


def decoding_lines(batches, seed=0, vocab=4096, max_len=8, lookahead=4):
    """A synthetic decoding trace of ``batches`` verified batches, look-ahead drafting up to
    ``lookahead`` batches (squashed on a rejection), probabilities at full float precision as
    the engine writes them. Generated twice from the seed (the header states the output length
    first), so memory stays small."""
    tokens = sum(len(out) for _, out in _decoding_events(batches, seed, vocab, max_len,
                                                          lookahead) if out)
    yield dumps(header(vocab_size=vocab, policy="fixed", policy_params={"k": max_len},
                       greedy=False, tokens=tokens, prompt=[1, 2, 3], draft_cost=1.0,
                       verify_cost=5.0, max_unverified=lookahead)) + "\n"
    output, t = [], 0.0
    for event, out in _decoding_events(batches, seed, vocab, max_len, lookahead):
        t = event["t"]
        if out:
            output += out
        yield dumps(event) + "\n"
    yield dumps({"event": "end", "t": t, "output": output}) + "\n"


def write_lines(path, lines):
    """Write an iterable of lines to ``path``; return the number of bytes."""
    size = 0
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line)
            size += len(line)
    return size
