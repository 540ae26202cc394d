"""Exact speculative sampling: unit cases, input checks, and the output distribution (chi-square)."""

import numpy as np
import pytest

from ahasd.sim.decoding.speculative import accept_prob, residual, verify_draft, verify_draft_greedy
from ahasd.tb.stats import chi_square, chi_square_critical


def test_greedy_accepts_the_argmax_prefix():
    p = np.eye(5)[[1, 2, 3, 4]] * 0.9 + 0.02
    assert verify_draft_greedy([1, 2, 3], p) == (3, 4)
    assert verify_draft_greedy([1, 0, 3], p) == (1, 2)
    assert verify_draft_greedy([], p[:1]) == (0, 1)


def test_sampled_accepts_identical_distributions_always():
    rng = np.random.default_rng(0)
    q = np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])
    p = np.vstack([q, [[0.0, 0.0, 1.0]]])
    for _ in range(50):
        assert verify_draft([1, 0], q, p, rng) == (2, 2)


def test_a_token_the_target_never_emits_is_always_rejected():
    rng = np.random.default_rng(1)
    q = np.array([[0.5, 0.5, 0.0]])
    p = np.array([[0.0, 0.4, 0.6], [1 / 3] * 3])
    for _ in range(50):
        n, nxt = verify_draft([0], q, p, rng)
        # p - q = [-0.5, -0.1, 0.6]: the residual norm(max(0, p - q)) holds token 2 only.
        assert (n, nxt) == (0, 2)


def test_residual_and_accept_prob():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.6, 0.2])
    np.testing.assert_allclose(residual(p, q), [1.0, 0.0, 0.0])
    assert accept_prob(p, q, 1) == pytest.approx(0.5) and accept_prob(p, q, 0) == 1.0
    np.testing.assert_array_equal(residual(p, p), p)


@pytest.mark.parametrize("args, message", [
    (([0, 1], np.full((2, 3), 1 / 3), np.full((2, 3), 1 / 3)), r"target_probs must have shape"),
    (([0, 1], np.full((3, 3), 1 / 3), np.full((3, 3), 1 / 3)), r"draft_probs must have shape"),
    (([0, 3], np.full((2, 3), 1 / 3), np.full((3, 3), 1 / 3)), r"draft_tokens must be ids"),
    (([0], np.array([[0.0, 0.5, 0.5]]), np.full((2, 3), 1 / 3)), "positive draft probability"),
])
def test_input_errors(args, message):
    with pytest.raises(ValueError, match=message):
        verify_draft(*args, np.random.default_rng(0))


def test_rng_must_be_a_generator():
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator, not int"):
        verify_draft([0], np.full((1, 2), 0.5), np.full((2, 2), 0.5), 7)


def first_token_counts(p, q, n, seed, k=1):
    """Emit the first output token of one verification, ``n`` times; count the tokens."""
    rng = np.random.default_rng(seed)
    V = len(p)
    counts = np.zeros(V, dtype=np.int64)
    draws = rng.choice(V, size=(n, k), p=q)
    qs = np.tile(q, (k, 1))
    ps = np.tile(p, (k + 1, 1))
    for x in draws:
        n_acc, nxt = verify_draft(x, qs, ps, rng)
        counts[x[0] if n_acc >= 1 else nxt] += 1
    return counts


P = np.array([0.35, 0.25, 0.2, 0.1, 0.06, 0.04])
Q = np.array([0.1, 0.3, 0.05, 0.3, 0.05, 0.2])


def test_output_distribution_equals_target():
    """Chi-square of 20 000 emitted tokens against p, at alpha = 1e-3 with a fixed seed.

    A broken residual rule (e.g. resampling from p or from norm(q - p)) biases the output
    towards the draft and fails this test by a wide margin."""
    counts = first_token_counts(P, Q, 20000, seed=12345)
    assert chi_square(counts, P) < chi_square_critical(len(P) - 1, 1e-3)
    # The test has power: the same counts are far from the draft distribution.
    assert chi_square(counts, Q) > 10 * chi_square_critical(len(P) - 1, 1e-3)


@pytest.mark.regress
def test_output_distribution_equals_target_long():
    counts = first_token_counts(P, Q, 400000, seed=7, k=3)
    assert chi_square(counts, P) < chi_square_critical(len(P) - 1, 1e-3)
