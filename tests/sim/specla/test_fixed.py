"""The fixed-point commit mirror: exact integer arithmetic, and its stated error vs float."""

import numpy as np
import pytest

from ahasd.sim.specla.fixed import (
    K_FRAC,
    S_FRAC,
    U_FRAC,
    W_FRAC,
    commit_fixed,
    error_bound,
    quantise,
    state_from_bursts,
    state_layout,
)
from ahasd.sim.specla.verify import factor_commit, factor_verify


def random_path(rng, d_k, d_v, A):
    """A chain of A GDN tokens from a random S0: float S0, factors, and the float commit."""
    S0 = rng.uniform(-1, 1, (d_k, d_v))
    k = rng.normal(size=(A, d_k))
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    q = rng.normal(size=(A, d_k))
    v = rng.uniform(-1, 1, (A, d_v))
    beta, g = rng.uniform(0, 1, A), -rng.exponential(0.3, A)
    _, f = factor_verify(S0, list(range(-1, A - 1)), q, k, v, beta, g)
    P = float(np.exp(f.G[-1])) if A else 1.0
    w = np.exp(f.G[-1] - f.G) if A else np.zeros(0)
    return S0, P, f.k, w, f.u, factor_commit(S0, f, range(A))


@pytest.mark.parametrize("A", [0, 1, 5, 16])
def test_error_within_stated_bound(A):
    rng = np.random.default_rng(A)
    S0, P, k, w, u, want = random_path(rng, 64, 32, A)
    got = commit_fixed(quantise(S0, S_FRAC), quantise(P, W_FRAC, signed=False),
                       quantise(k, K_FRAC), quantise(w, W_FRAC, signed=False),
                       quantise(u, U_FRAC)) / 2 ** S_FRAC
    bound = error_bound(S0, P, k, w, u)
    assert np.all(np.abs(got - want) <= bound)
    # Headline figure stated in the docs: for |S|, |u| <= 1 and A <= 16, |error| < 4e-3.
    assert bound.max() < 4e-3


def test_integer_arithmetic_by_hand():
    S = np.array([[4096, -4096]])          # 1.0, -1.0
    P = 1 << 14                             # 0.5
    k = np.array([[1 << 14]])               # 1.0
    w = np.array([1 << 15])                 # 1.0
    u = np.array([[2048, 3]])               # 0.5, 3/4096
    # 0.5 * 1 + 1 * 0.5 = 1.0; 0.5 * -1 + 3/4096 -> -2048 + 3.
    np.testing.assert_array_equal(commit_fixed(S, P, k, w, u), [[4096, -2045]])
    # Saturation at the int16 range.
    big = commit_fixed(np.array([[32767]]), (1 << 16) - 1, k, w, np.array([[32767]]))
    assert big[0, 0] == 32767


def test_layout_round_trip():
    rng = np.random.default_rng(1)
    S = rng.integers(-32768, 32768, (8, 32))
    words = state_layout(S, 32)
    assert len(words) == 16 and words[0] & 0xFFFF == S[0, 0] & 0xFFFF
    np.testing.assert_array_equal(state_from_bursts(words, 8, 32, 32), S)
    with pytest.raises(ValueError, match=r"d_v \(12\) must be a multiple of 16"):
        state_layout(np.zeros((2, 12), dtype=int), 32)


def test_load_sequence_packing():
    from ahasd.sim.specla.fixed import FACTOR_KINDS, load_sequence
    k = np.array([[1, -1, 2], [3, 4, -5]])      # A = 2, d_k = 3
    u = np.array([[1, 2, 3, 4], [-1, -2, -3, -4]])   # d_v = 4, two lanes
    seq = load_sequence(7, k, [10, 20], u, lanes=2)
    assert seq[0] == (FACTOR_KINDS["P"], 0, 0, 7)
    assert seq[1] == (FACTOR_KINDS["W"], 0, 0, 10 | 20 << 16)
    assert seq[3] == (FACTOR_KINDS["K"], 0, 1, 0xFFFF | 4 << 16)   # k_0[1], k_1[1]
    assert seq[-1] == (FACTOR_KINDS["U"], 1, 1, 0xFFFD | 0xFFFC << 16)
    assert len(seq) == 2 + 3 + 2 * 2
