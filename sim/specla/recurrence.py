"""The gated delta rule for one head, as flash-linear-attention's reference recurrence.

Source (read, not copied): fla-org/flash-linear-attention, ``fla/ops/gated_delta_rule/naive.py``,
``naive_recurrent_gated_delta_rule``. Per token, with state ``S`` of shape ``(d_k, d_v)``::

    S <- exp(g) * S
    u  = beta * (v - S^T k)        # the delta-corrected value (computed on the decayed state)
    S <- S + k u^T
    o  = S^T q

fla scales ``q`` by ``1 / sqrt(d_k)`` before the loop; here ``q`` is used as given and the caller
(:mod:`.model`) scales it, so that ``ahasd specla verify`` can take q exactly as written.
"""

import numpy as np

__all__ = ["gdn_step", "gdn_sequence"]


def gdn_step(S, q, k, v, beta, g):
    """One token of the recurrence; returns ``(S_new, o, u)`` (``S`` is not modified)."""
    S = np.exp(g) * S
    u = beta * (v - S.T @ k)
    S = S + np.outer(k, u)
    return S, S.T @ q, u


def gdn_sequence(S, q, k, v, beta, g):
    """Tokens ``0..T-1`` in order (rows of ``q, k, v``; entries of ``beta, g``).

    Returns ``(S_T, outputs (T, d_v), u (T, d_v))``.
    """
    outs, us = [], []
    for t in range(len(beta)):
        S, o, u = gdn_step(S, q[t], k[t], v[t], beta[t], g[t])
        outs.append(o)
        us.append(u)
    d_v = S.shape[1]
    return S, np.array(outs).reshape(-1, d_v), np.array(us).reshape(-1, d_v)
