"""Speculative sampling, exactly as Leviathan et al. (2023) and Chen et al. (2023), and its greedy form.

Given ``k`` draft tokens ``x_1..x_k`` drawn from the draft distributions ``q_1..q_k`` and the
target distributions ``p_1..p_{k+1}`` at the same positions, :func:`verify_draft` accepts ``x_i``
with probability ``min(1, p_i(x_i) / q_i(x_i))`` in order; at the first rejection it stops and
draws the next token from the residual ``norm(max(0, p_i - q_i))``; when all ``k`` are accepted it
draws a bonus token from ``p_{k+1}``. The emitted tokens are then distributed exactly as tokens
sampled from the target one at a time.

:func:`verify_draft_greedy` is the greedy (temperature-0) form: accept while the draft token is the
target's argmax, and emit the target's argmax at the first mismatch (or after all ``k``).
Ties in argmax are broken towards the lowest id, in both the draft and the target.
"""

import numpy as np

from ahasd.spec.params import ParameterTypeError, check_instance

__all__ = ["verify_draft", "verify_draft_greedy", "residual", "accept_prob"]


def _check(draft_tokens, target_probs, draft_probs=None):
    raw = np.asarray(draft_tokens)
    if raw.size and raw.dtype.kind not in "iu":      # 1.5 or True is not a token id
        raise ParameterTypeError(f"draft_tokens must be integer token ids, not {raw.dtype} "
                                 f"values")
    tokens = raw.astype(np.int64).reshape(-1)
    p = np.asarray(target_probs, dtype=np.float64)
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("target_probs must be finite probabilities >= 0")
    k = tokens.size
    if p.ndim != 2 or p.shape[0] != k + 1:
        raise ValueError(f"target_probs must have shape (k+1, V) = ({k + 1}, V), not {p.shape}")
    V = p.shape[1]
    if k and (tokens.min() < 0 or tokens.max() >= V):
        raise ValueError(f"draft_tokens must be ids in 0..{V - 1}, not {tokens.tolist()}")
    if draft_probs is None:
        return tokens, p, None
    q = np.asarray(draft_probs, dtype=np.float64)
    if not np.all(np.isfinite(q)) or np.any(q < 0):
        raise ValueError("draft_probs must be finite probabilities >= 0")
    if q.shape != (k, V):
        raise ValueError(f"draft_probs must have shape (k, V) = ({k}, {V}), not {q.shape}")
    if k and np.any(q[np.arange(k), tokens] <= 0):
        raise ValueError("every draft token must have positive draft probability q_i(x_i)")
    return tokens, p, q


def accept_prob(p, q, token):
    """``min(1, p(token) / q(token))``: the probability that a drafted token is accepted."""
    return min(1.0, float(p[token]) / float(q[token]))


def residual(p, q):
    """``norm(max(0, p - q))``, the distribution a rejected position is resampled from.

    When ``p == q`` the residual is empty, but then no rejection can happen; ``p`` is returned so
    the function is total.
    """
    r = np.maximum(np.asarray(p, dtype=np.float64) - q, 0.0)
    s = r.sum()
    return r / s if s > 0 else np.asarray(p, dtype=np.float64)


def _sample(rng, dist):
    # Inverse-CDF sampling with one uniform: cheaper than rng.choice and exact up to float64.
    c = np.cumsum(dist)
    return int(min(np.searchsorted(c, rng.random() * c[-1], side="right"), len(c) - 1))


def verify_draft(draft_tokens, draft_probs, target_probs, rng):
    """Verify ``k`` draft tokens by speculative sampling.

    Parameters
    ----------
    draft_tokens : sequence of int, length k
    draft_probs : array (k, V)
        ``q_i``, the draft distribution each draft token was sampled from.
    target_probs : array (k+1, V)
        ``p_i`` at the same positions, plus the one after the last draft token.
    rng : numpy.random.Generator

    Returns
    -------
    (n_accepted, next_token)
        The number of draft tokens accepted (a prefix) and the token emitted after them (the
        residual sample after a rejection, or the bonus token after a full accept).
    """
    check_instance("rng", rng, np.random.Generator, what="numpy.random.Generator")
    tokens, p, q = _check(draft_tokens, target_probs, draft_probs)
    for i, x in enumerate(tokens):
        if rng.random() >= accept_prob(p[i], q[i], x):
            return i, _sample(rng, residual(p[i], q[i]))
    return len(tokens), _sample(rng, p[len(tokens)])


def verify_draft_greedy(draft_tokens, target_probs):
    """Greedy verification: ``(n_accepted, next_token)`` with the target's argmax as the truth."""
    tokens, p, _ = _check(draft_tokens, target_probs)
    best = np.argmax(p, axis=1)
    for i, x in enumerate(tokens):
        if x != best[i]:
            return i, int(best[i])
    return len(tokens), int(best[len(tokens)])
