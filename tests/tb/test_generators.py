"""ahasd.tb.generators: the pause generators of the stream drivers, reproducible from a seed and
exact in their patterns."""

import itertools
import random

from ahasd.tb.generators import cycle_pattern, never, pauses, replay


def take(gen, n):
    return list(itertools.islice(gen, n))


def test_random_pauses_follow_their_seed():
    a, b = take(pauses(0.5, 7), 200), take(pauses(0.5, 7), 200)
    assert a == b and take(pauses(0.5, 8), 200) != a
    # A seed and a Random seeded alike give the same pauses: the draws of random.Random(7).
    expected = [r < 0.5 for r in (lambda g: [g.random() for _ in range(200)])(random.Random(7))]
    assert a == expected == take(pauses(0.5, random.Random(7)), 200)
    assert 60 < sum(a) < 140


def test_probability_bounds_and_a_callable():
    assert not any(take(pauses(0.0, 1), 500)) and all(take(pauses(1.0, 1), 500))
    share = iter([1.0] * 10 + [0.0] * 10)
    assert take(pauses(lambda: next(share), 3), 20) == [True] * 10 + [False] * 10


def test_patterns():
    assert take(never(), 5) == [False] * 5
    assert take(cycle_pattern([0, 0, 1]), 7) == [False, False, True] * 2 + [False]
    assert take(replay([1, 0, 1]), 6) == [True, False, True, False, False, False]
