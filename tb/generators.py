"""Idle and backpressure generators shared by the stream drivers of both tiers.

A generator yields one bool per clock cycle: ``True`` means "pause in this cycle" (a source
presents nothing new; a sink holds ``ready`` low). The drivers take them through
``set_idle_generator`` / ``set_backpressure_generator``, the pattern of verilog-axis's
testbenches (cocotbext-axis ``set_pause_generator``).
"""

import itertools
import random

__all__ = ["never", "pauses", "cycle_pattern", "replay"]


def never():
    """No pauses: a source offers every cycle, a sink is always ready."""
    return itertools.repeat(False)


def pauses(probability, rng=None):
    """Random pauses, each cycle independently with ``probability``.

    ``probability`` may be a callable read every cycle, so a test can change the traffic mix
    while the driver runs. ``rng`` is a :class:`random.Random` (or a seed).
    """
    if not isinstance(rng, random.Random):
        rng = random.Random(rng)
    read = probability if callable(probability) else (lambda: probability)
    while True:
        yield rng.random() < read()


def cycle_pattern(bits):
    """Repeat a fixed pause pattern (for example ``[0, 0, 1]``: every third cycle paused)."""
    return itertools.cycle(bool(b) for b in bits)


def replay(bits):
    """Pause exactly in the cycles where ``bits`` is true, then never: a recorded trace's own
    gaps (for example the idle cycles of one port in a cycle-by-cycle stimulus)."""
    return itertools.chain((bool(b) for b in bits), never())
