"""Tree verification and the three commits of one GDN head agree with sequential replay."""

import numpy as np
import pytest

from ahasd.sim.specla.recurrence import gdn_sequence, gdn_step
from ahasd.sim.specla.verify import (
    PendingState,
    check_parents,
    check_path,
    deferred_commit,
    factor_commit,
    factor_verify,
    replay_commit,
    replay_verify,
)

TOL = 1e-12


def close(a, b):
    """Normwise: ||a - b|| <= 1e-12 ||b||."""
    return np.linalg.norm(np.asarray(a) - np.asarray(b)) <= TOL * np.linalg.norm(b)


def random_tree(rng, n, chain=False):
    return [-1] + [i - 1 if chain else int(rng.integers(-1, i)) for i in range(1, n)]


def random_nodes(rng, n, d_k, d_v):
    k = rng.normal(size=(n, d_k))
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    q = rng.normal(size=(n, d_k))
    return (q, k, rng.normal(size=(n, d_v)), rng.uniform(0, 1, n),
            -rng.exponential(0.5, n))


def root_path(parents, node):
    path = []
    while node >= 0:
        path.append(node)
        node = parents[node]
    return path[::-1]


def test_step_is_the_reference_recurrence():
    """Elementwise, in the order of fla's naive_recurrent_gated_delta_rule."""
    rng = np.random.default_rng(0)
    S = rng.normal(size=(3, 4))
    q, k, v, beta, g = random_nodes(rng, 1, 3, 4)
    S1, o, u = gdn_step(S, q[0], k[0], v[0], beta[0], g[0])
    h = S * np.exp(g[0])
    want_u = np.array([beta[0] * (v[0][j] - sum(h[i, j] * k[0][i] for i in range(3)))
                       for j in range(4)])
    want_S = np.array([[h[i, j] + k[0][i] * want_u[j] for j in range(4)] for i in range(3)])
    np.testing.assert_allclose(u, want_u, rtol=1e-14)
    np.testing.assert_allclose(S1, want_S, rtol=1e-14)
    np.testing.assert_allclose(o, [sum(want_S[i, j] * q[0][i] for i in range(3))
                                   for j in range(4)], rtol=1e-13)


@pytest.mark.parametrize("chain", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_factor_verify_and_commits_equal_replay(seed, chain):
    rng = np.random.default_rng(seed)
    d_k, d_v = [(8, 16), (16, 8), (32, 32), (5, 3)][seed % 4]
    n = int(rng.integers(1, 24))
    parents = random_tree(rng, n, chain)
    S0 = rng.normal(size=(d_k, d_v))
    nodes = random_nodes(rng, n, d_k, d_v)
    ref_out, ref_states, _ = replay_verify(S0, parents, *nodes)
    out, factors = factor_verify(S0, parents, *nodes)
    for i in range(n):
        assert close(out[i], ref_out[i]), i
    for end in [None] + list(range(n)):
        path = [] if end is None else root_path(parents, end)
        ref = replay_commit(S0, path, *nodes)
        if path:
            assert close(ref, ref_states[end])
        assert close(factor_commit(S0, factors, path), ref)
        assert close(deferred_commit(S0, factors, path).materialise(), ref)


@pytest.mark.parametrize("seed", range(6))
def test_deferred_rounds_equal_replay(seed):
    """Several rounds: each verification runs on the pending state of the previous commit."""
    rng = np.random.default_rng(100 + seed)
    d_k, d_v = 16, 12
    S_ref = rng.normal(size=(d_k, d_v))
    pending = PendingState.plain(S_ref)
    S_fac = S_ref.copy()
    for _ in range(6):
        n = int(rng.integers(1, 12))
        parents = random_tree(rng, n, chain=bool(rng.integers(2)))
        nodes = random_nodes(rng, n, d_k, d_v)
        ref_out, _, _ = replay_verify(S_ref, parents, *nodes)
        out_def, f_def = factor_verify(pending, parents, *nodes)
        out_fac, f_fac = factor_verify(S_fac, parents, *nodes)
        assert all(close(out_def[i], ref_out[i]) for i in range(n))
        assert all(close(out_fac[i], ref_out[i]) for i in range(n))
        path = root_path(parents, int(rng.integers(n))) if rng.random() < 0.9 else []
        S_ref = replay_commit(S_ref, path, *nodes)
        pending = deferred_commit(pending, f_def, path)
        S_fac = factor_commit(S_fac, f_fac, path)
        assert close(pending.materialise(), S_ref)
        assert close(S_fac, S_ref)


def test_chain_matches_sequence():
    rng = np.random.default_rng(3)
    S0 = rng.normal(size=(6, 7))
    nodes = random_nodes(rng, 9, 6, 7)
    S_T, outs, us = gdn_sequence(S0, *nodes)
    out, factors = factor_verify(S0, list(range(-1, 8)), *nodes)
    assert close(out, outs) and close(factors.u, us)
    assert close(factor_commit(S0, factors, range(9)), S_T)


def test_bad_trees_and_paths():
    with pytest.raises(ValueError, match=r"node 2: parent must be -1 or an earlier node "
                                         r"\(0..1\), not 2"):
        check_parents([-1, 0, 2])
    with pytest.raises(ValueError, match="node 1: parent must be an integer, not 0.5"):
        check_parents([-1, 0.5])
    parents = (-1, 0, 0, 1)
    with pytest.raises(ValueError, match=r"accept is not a root path: node 3 \(accept\[2\]\) "
                                         r"has parent 1, not node 2"):
        check_path(parents, [0, 2, 3])
    with pytest.raises(ValueError, match=r"node 1 \(accept\[0\]\) has parent 0, not the "
                                         r"committed state"):
        check_path(parents, [1])
    with pytest.raises(ValueError, match=r"accept\[0\] = 4 is not a node \(0..3\)"):
        check_path(parents, [4])


def test_topology_mask_hides_siblings():
    """Changing one branch's tokens leaves every node off that branch unchanged, bit for bit."""
    rng = np.random.default_rng(11)
    parents = [-1, 0, 0, 1, 2, 3, 4]     # two branches under node 0: 1-3-5 and 2-4-6
    q, k, v, beta, g = random_nodes(rng, 7, 6, 5)
    out, _ = factor_verify(np.ones((6, 5)), parents, q, k, v, beta, g)
    v2, k2 = v.copy(), k.copy()
    v2[[2, 4, 6]] += 10.0
    k2[4] = k[3]
    out2, _ = factor_verify(np.ones((6, 5)), parents, q, k2, v2, beta, g)
    np.testing.assert_array_equal(out2[[0, 1, 3, 5]], out[[0, 1, 3, 5]])
    assert not np.allclose(out2[[2, 4, 6]], out[[2, 4, 6]])
