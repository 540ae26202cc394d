"""Random GTS stimulus for the RTL-vs-golden tests, generated with the golden model in the loop
so that the producer obeys the stream rule (a refused request is held, unchanged, until taken)."""

import random

from ahasd.sim.blocks.gts import GTS, LENGTH_BITS, TaskKind


def _mask(rng, ranks):
    top = (1 << ranks) - 1
    if rng.random() < 0.3:   # the extremes: one rank (lowest, highest), all ranks, all but one
        return rng.choice((1, 1 << (ranks - 1), top, top >> 1 or 1))
    return rng.randrange(1, top + 1)


def random_masks(rng, ranks):
    """A ``(draft, preverify)`` mask pair, often at the width's extremes (and sometimes the
    same mask for both)."""
    draft = _mask(rng, ranks)
    preverify = draft if rng.random() < 0.1 else _mask(rng, ranks)
    return draft, preverify


def _length(rng):
    """A task length: often the field's extremes 1 and 2**LENGTH_BITS - 1."""
    if rng.random() < 0.2:
        return rng.choice((1, (1 << LENGTH_BITS) - 1))
    return rng.randrange(1, 1 << LENGTH_BITS)


def gts_stimulus(seed, cycles, *, ranks=16, **params):
    """Return ``(inputs, expected, requested, started, golden)``.

    ``inputs``: per cycle ``(task or None, done, cfg or None)``; ``expected``: the golden
    :class:`~ahasd.sim.blocks.gts.GTSCycle` of each cycle; ``requested`` / ``started``: the tasks in
    the order offered / started (they must be equal: nothing lost, duplicated or reordered).
    """
    rng = random.Random(seed)
    golden = GTS(ranks=ranks, **params)
    inputs, expected, requested, started = [], [], [], []
    pending = None
    p_request, p_done, p_preverify = 0.5, 0.3, 0.3
    for cycle in range(cycles):
        if cycle % 2000 == 0:   # traffic phases: sparse/dense requests, short/long tasks
            p_request = rng.choice([0.05, 0.5, 1.0])
            p_done = rng.choice([0.05, 0.3, 1.0])
            p_preverify = rng.choice([0.0, 0.1, 0.5, 0.9])
        if pending is None and rng.random() < p_request:
            kind = TaskKind.PREVERIFY if rng.random() < p_preverify else TaskKind.DRAFT
            pending = (int(kind), _length(rng))
            requested.append(pending)
        done = rng.random() < p_done
        cfg = random_masks(rng, ranks) if rng.random() < 0.002 else None
        out = golden.step(pending, done, cfg)
        inputs.append((pending, done, cfg))
        expected.append(out)
        if out.o_valid:
            started.append((out.o_kind, out.o_length))
        if pending is not None and out.ready:
            pending = None
    return inputs, expected, requested, started, golden
