"""Random GTS stimulus for the RTL-vs-golden tests, generated with the golden model in the loop
so that the producer obeys the stream rule (a refused request is held, unchanged, until taken)."""

import random

from ahasd.sim.blocks.gts import GTS, TaskKind


def random_masks(rng, ranks):
    draft = rng.randrange(1, 1 << ranks)
    preverify = rng.randrange(1, 1 << ranks)
    return draft, preverify


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
            pending = (int(kind), rng.randrange(1, 256))
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
