"""EDC stimulus: cycle streams for the EDC tests, [(draft UQ4.12 entropy or None, verify full
or None)], and event streams for benchmarks and long traces (:func:`random_events`).

Shared by the Amaranth-simulator tests and the cocotb scoreboard. The entropy follows the batch
mean entropies seen in speculative decoding (mostly 1-6 nats, docs/architecture.md 5), with full accepts
more likely at low entropy so that the PHT has something to learn; the cycle streams also put
entropies on the arithmetic boundaries (0, the top code, beyond H_max, and each bucket threshold
exactly and one code below it).
"""

import math
import random

from ahasd.sim.blocks.edc import EDCParams, entropy_to_fx

__all__ = ["random_cycles", "run_lengths_cycles", "random_events"]


def _entropy(rng, thresholds):
    kind = rng.random()
    if kind < 0.05:  # extremes: 0, the top code, and beyond H_max
        return rng.choice([0, 65535, entropy_to_fx(10.0), entropy_to_fx(15.99)])
    if kind < 0.15:  # a bucket threshold exactly (the comparison's equality case) or one below
        return rng.choice(thresholds) - rng.choice((0, 0, 1))
    return entropy_to_fx(rng.lognormvariate(math.log(3.0), 0.5))


def _thresholds(thresholds):
    return list(EDCParams().thresholds if thresholds is None else thresholds)


def random_cycles(rng, n, thresholds=None):
    """``n`` cycles of independent random events (drafts, verifies, both, idle).

    ``thresholds``: the bucket thresholds (UQ4.12) of the EDC under test (default: those of
    :class:`EDCParams`); a tenth of the drafts lie on one of them or one code below.
    """
    thresholds = _thresholds(thresholds)
    cycles = []
    for _ in range(n):
        h = _entropy(rng, thresholds) if rng.random() < 0.55 else None
        full = None
        if rng.random() < 0.45:
            p_full = 0.8 if (h if h is not None else 12000) < 12000 else 0.35
            full = rng.random() < p_full
        cycles.append((h, full))
    return cycles


def run_lengths_cycles(rng, n, thresholds=None):
    """``n`` cycles in phases: long runs of full accepts (look-ahead grows), long runs of
    rejections (every verify squashes), bursts of back-to-back drafts and idle gaps
    (``thresholds`` as for :func:`random_cycles`)."""
    thresholds = _thresholds(thresholds)
    cycles: list[tuple[int | None, bool | None]] = []   # (entropy code, verify full)
    while len(cycles) < n:
        phase = rng.choice(["accept", "reject", "burst", "idle"])
        length = rng.randint(20, 200)
        for _ in range(length):
            if phase == "accept":
                cycles.append((_entropy(rng, thresholds) if rng.random() < 0.6 else None,
                               True if rng.random() < 0.5 else None))
            elif phase == "reject":
                cycles.append((_entropy(rng, thresholds) if rng.random() < 0.6 else None,
                               False if rng.random() < 0.5 else None))
            elif phase == "burst":
                cycles.append((_entropy(rng, thresholds), None))
            else:
                cycles.append((None, None))
    return cycles[:n]


def random_events(n, seed=0):
    """``n`` EDC events, lazily: drafts ``("draft", nats)`` with log-normal mean entropies
    (median 3 nats) and verifies ``("verify", full)`` whose outcome is likelier at low entropy."""
    rng = random.Random(seed)
    last_h = 3.0
    for _ in range(n):
        if rng.random() < 0.55:
            last_h = rng.lognormvariate(math.log(3.0), 0.5)
            yield ("draft", last_h)
        else:
            yield ("verify", rng.random() < (0.8 if last_h < 3.0 else 0.35))
