"""Chain and token-tree verification of one GDN head, and the three ways to commit a path.

A verification round scores ``N`` draft nodes against the committed state ``S0``. Node ``n`` has a
parent ``parents[n]`` (``-1`` = the committed state; parents come before children), so a chain is
the tree ``parents = [-1, 0, 1, ...]``. Node ``n``'s state is the recurrence applied along its own
root path only (the topology mask: never a sibling's update).

Notation: ``G[n] = g[n] + G[parent]`` is the log-decay accumulated from ``S0`` to node ``n``. The
recurrence (:mod:`.recurrence`) unrolls to

    S_n = exp(G_n) S0 + sum_{j in path(n)} exp(G_n - G_j) k_j u_j^T

so every node's ``u`` and output follow from ``S0^T k`` and ``S0^T q`` (one pass over the state
for the whole tree) and the masked ``N x N`` products ``k_n . k_j``, ``q_n . k_j``: a forward
substitution in node order gives the ``u`` (:func:`factor_verify`). The per-token factors
``(k_n, u_n, g_n)`` are captured; accepting the root path ``p_1..p_A`` ending at ``e`` commits

    S_A = exp(G_e) S0 + K diag(w) U^T,   w_j = exp(G_e - G_j)

as one rank-A update (:func:`factor_commit`) instead of ``A`` sequential steps
(:func:`replay_commit`). A deferred commit (:class:`PendingState`) keeps ``(S0, exp(G_e), K, w, U)``
and lets the next verification read ``S0`` once, both to apply the pending update and to compute
``S^T k`` / ``S^T q`` through the low-rank form.
"""

from dataclasses import dataclass

import numpy as np

from .recurrence import gdn_step

__all__ = ["Factors", "PendingState", "check_parents", "check_path", "replay_verify",
           "factor_verify", "replay_commit", "factor_commit", "deferred_commit"]


@dataclass(frozen=True)
class Factors:
    """Per-node factors captured during verification.

    Attributes
    ----------
    parents : tuple of int
    k, u : ndarray (N, d_k), (N, d_v)
        Keys and delta-corrected values.
    g, G : ndarray (N,)
        Log decay of each node and accumulated along its root path.
    """
    parents: tuple
    k: np.ndarray
    u: np.ndarray
    g: np.ndarray
    G: np.ndarray


@dataclass(frozen=True)
class PendingState:
    """A committed state kept as ``P * base + K diag(w) U^T`` (the deferred commit).

    ``K`` is ``(A, d_k)``, ``U`` is ``(A, d_v)``; ``A = 0`` is a plain state.
    """
    base: np.ndarray
    P: float
    K: np.ndarray
    w: np.ndarray
    U: np.ndarray

    @classmethod
    def plain(cls, S):
        S = np.asarray(S, dtype=float)
        d_k, d_v = S.shape
        return cls(S, 1.0, np.zeros((0, d_k)), np.zeros(0), np.zeros((0, d_v)))

    def transpose_apply(self, X):
        """``S^T x`` for every row x of ``X`` (``(n, d_k)`` -> ``(n, d_v)``) without forming S."""
        X = np.atleast_2d(X)
        return self.P * (X @ self.base) + ((X @ self.K.T) * self.w) @ self.U

    def materialise(self):
        """The dense state (what the fused pass of the next verification writes back)."""
        return self.P * self.base + (self.K.T * self.w) @ self.U


def check_parents(parents):
    """``parents`` as a tuple of ints; ``ValueError`` unless each is -1 or an earlier node."""
    out = []
    for n, p in enumerate(parents):
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
            raise ValueError(f"node {n}: parent must be an integer, not {p!r}")
        if not -1 <= p < n:
            raise ValueError(f"node {n}: parent must be -1 or an earlier node (0..{n - 1}), "
                             f"not {int(p)}")
        out.append(int(p))
    return tuple(out)


def check_path(parents, path):
    """``ValueError`` unless ``path`` is a root path of the tree, in order (empty is one)."""
    prev = -1
    for i, n in enumerate(path):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise ValueError(f"accept[{i}] must be a node index, not {n!r}")
        if not 0 <= n < len(parents):
            raise ValueError(f"accept[{i}] = {n} is not a node (0..{len(parents) - 1})")
        if parents[n] != prev:
            want = "the committed state (-1)" if prev == -1 else f"node {prev}"
            raise ValueError(f"accept is not a root path: node {n} (accept[{i}]) has parent "
                             f"{parents[n]}, not {want}")
        prev = int(n)
    return tuple(int(n) for n in path)


def _accumulated(parents, g):
    G = np.zeros(len(parents))
    for n, p in enumerate(parents):
        G[n] = g[n] + (G[p] if p >= 0 else 0.0)
    return G


def _ancestor_mask(parents):
    """``M[n, j]`` = 1 if ``j`` is on ``n``'s root path (``n`` itself included)."""
    N = len(parents)
    M = np.zeros((N, N), dtype=bool)
    for n, p in enumerate(parents):
        if p >= 0:
            M[n] = M[p]
        M[n, n] = True
    return M


def replay_verify(S0, parents, q, k, v, beta, g):
    """Reference: every node's state materialised from its parent's by one recurrence step.

    Returns ``(outputs (N, d_v), states (N, d_k, d_v), Factors)``.
    """
    parents = check_parents(parents)
    S0 = np.asarray(S0, dtype=float)
    states: list[np.ndarray] = []
    outs: list[np.ndarray] = []
    us: list[np.ndarray] = []
    for n, p in enumerate(parents):
        S, o, u = gdn_step(S0 if p < 0 else states[p], q[n], k[n], v[n], beta[n], g[n])
        states.append(S)
        outs.append(o)
        us.append(u)
    d_k, d_v = S0.shape
    factors = Factors(parents, np.asarray(k, float).reshape(-1, d_k),
                      np.array(us).reshape(-1, d_v), np.asarray(g, float),
                      _accumulated(parents, g))
    return np.array(outs).reshape(-1, d_v), states, factors


def factor_verify(state, parents, q, k, v, beta, g):
    """Tree verification through the topology mask, from ``S0^T k`` and ``S0^T q`` only.

    ``state`` is a dense ``S0`` or a :class:`PendingState` (deferred commit: ``S0`` is never
    formed here). Returns ``(outputs (N, d_v), Factors)``.
    """
    parents = check_parents(parents)
    if not isinstance(state, PendingState):
        state = PendingState.plain(state)
    q, k, v = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, k, v))
    beta, g = np.asarray(beta, dtype=float), np.asarray(g, dtype=float)
    N = len(parents)
    G = _accumulated(parents, g)
    M = _ancestor_mask(parents)
    # D[n, j] = exp(G_n - G_j) on n's root path, 0 elsewhere (the mask).
    D = np.where(M, np.exp(np.where(M, G[:, None] - G[None, :], 0.0)), 0.0)
    strict = D * ~np.eye(N, dtype=bool)
    SK = state.transpose_apply(k) if N else np.zeros((0, state.base.shape[1]))
    SQ = state.transpose_apply(q) if N else SK
    KK = strict * (k @ k.T)
    U = np.zeros_like(SK)
    for n in range(N):   # forward substitution: ancestors come before n
        U[n] = beta[n] * (v[n] - np.exp(G[n]) * SK[n] - KK[n, :n] @ U[:n])
    outputs = np.exp(G)[:, None] * SQ + (D * (q @ k.T)) @ U
    return outputs, Factors(parents, k, U, g, G)


def replay_commit(S0, path, q, k, v, beta, g):
    """Reference commit: the accepted path re-run step by step from ``S0``."""
    S = np.asarray(S0, dtype=float)
    for n in path:
        S, _, _ = gdn_step(S, q[n], k[n], v[n], beta[n], g[n])
    return S


def _path_factors(factors, path):
    path = check_path(factors.parents, path)
    if not path:
        return 1.0, factors.k[:0], np.zeros(0), factors.u[:0]
    idx = np.array(path)
    G_end = factors.G[path[-1]]
    return np.exp(G_end), factors.k[idx], np.exp(G_end - factors.G[idx]), factors.u[idx]


def factor_commit(S0, factors, path):
    """``S_A = exp(G_e) S0 + K diag(w) U^T`` for the root path ``path`` (one rank-A update)."""
    P, K, w, U = _path_factors(factors, path)
    return P * np.asarray(S0, dtype=float) + (K.T * w) @ U


def deferred_commit(state, factors, path):
    """The commit of ``path`` kept pending on top of ``state`` (dense or pending).

    A pending ``state`` is materialised first: in the hardware that is the same pass over ``S0``
    that the verification made (read once, update, write back), so no extra state traffic.
    """
    base = state.materialise() if isinstance(state, PendingState) else np.asarray(state, float)
    P, K, w, U = _path_factors(factors, path)
    return PendingState(base, P, K, w, U)
