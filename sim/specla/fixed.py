"""Fixed-point rank-A state commit: the bit-exact mirror of the RTL block
:class:`ahasd.hw.state_commit.StateCommit`.

Formats (two's complement unless said; ``Qm.f`` = f fraction bits):

==========================  =========  =====================================================
value                        bits       format, range
==========================  =========  =====================================================
state S                      16         Q3.12, [-8, 8)
key k                        16         Q1.14, [-2, 2) (L2-normalised keys: |k_i| <= 1)
delta-corrected value u      16         Q3.12, [-8, 8)
decay products P, w_t        16 unsig.  Q1.15, [0, 2) (products of exp(g) <= 1)
kw = round(k * w_t)          16         Q1.14, formed when k is loaded, saturated
accumulator                  40         Q12.27: P*S (27 fraction bits) + sum (kw*u) << 1
result                       16         Q3.12: (acc + 2^14) >> 15, saturated to int16
==========================  =========  =====================================================

Rounding is round-half-up (add half, arithmetic shift right). The commit computed is
``S_A = P * S0 + sum_t kw_t u_t^T`` for ``t < rank`` (:func:`ahasd.sim.specla.verify.factor_commit`
with ``K diag(w)`` formed per token). State layout in DRAM: row-major, ``E = burst_bytes / 2``
elements per burst, burst ``i * (d_v / E) + j // E`` holds ``S[i, j]`` in bits ``16 (j % E)``.
"""

import numpy as np

from ahasd.spec.specla import ACC_BITS, FACTOR_KINDS, K_FRAC, S_FRAC, U_FRAC, W_FRAC

__all__ = ["S_FRAC", "K_FRAC", "U_FRAC", "W_FRAC", "quantise", "kw_fixed", "commit_fixed",
           "state_layout", "state_from_bursts", "error_bound", "ACC_BITS", "FACTOR_KINDS",
           "load_sequence"]

_INT16 = (-(1 << 15), (1 << 15) - 1)
_UINT16 = (0, (1 << 16) - 1)


def quantise(x, frac, signed=True):
    """Nearest fixed-point integers of ``x`` with ``frac`` fraction bits (16 bits, saturated)."""
    lo, hi = _INT16 if signed else _UINT16
    return np.clip(np.round(np.asarray(x, dtype=float) * (1 << frac)), lo, hi).astype(np.int64)


def kw_fixed(k, w):
    """``round(k_t[i] * w_t)`` in Q1.14 for ``k`` (A, d_k) Q1.14 and ``w`` (A,) Q1.15, saturated
    to int16 (only reachable with ``w_t > 1``, which a product of decays never is)."""
    k, w = np.asarray(k, dtype=np.int64), np.asarray(w, dtype=np.int64)
    return np.clip((k * w[:, None] + (1 << (W_FRAC - 1))) >> W_FRAC, *_INT16)


def commit_fixed(S, P, k, w, u):
    """The fixed-point commit: ``S`` (d_k, d_v) Q3.12, ``P`` Q1.15, ``k`` (A, d_k) Q1.14, ``w``
    (A,) Q1.15, ``u`` (A, d_v) Q3.12 -> the new state, int16 Q3.12 (saturated)."""
    S = np.asarray(S, dtype=np.int64)
    kw = kw_fixed(k, w)
    acc = int(P) * S + ((kw.T @ np.asarray(u, dtype=np.int64)) << 1)
    shift = W_FRAC   # acc has W_FRAC + S_FRAC (27) fraction bits, the result S_FRAC (12)
    return np.clip((acc + (1 << (shift - 1))) >> shift, *_INT16)


def error_bound(S, P, k, w, u):
    """Elementwise bound of ``|commit_fixed(quantised inputs) / 2^12 - float commit|`` for float
    inputs in range (no saturation): input quantisation, the kw rounding, the output rounding."""
    S, k, u = (np.abs(np.asarray(x, dtype=float)) for x in (S, k, u))
    w = np.asarray(w, dtype=float)
    dS, dP, dk, dw, du = 2.0 ** -(S_FRAC + 1), 2.0 ** -(W_FRAC + 1), 2.0 ** -(K_FRAC + 1), \
        2.0 ** -(W_FRAC + 1), 2.0 ** -(U_FRAC + 1)
    dkw = k * dw + w[:, None] * dk + dk * dw + 2.0 ** -(K_FRAC + 1)   # (A, d_k)
    kw = k * w[:, None]
    terms = kw.T @ (np.zeros_like(u) + du) + dkw.T @ u + dkw.T @ (np.zeros_like(u) + du)
    return P * dS + S * dP + dP * dS + terms + 2.0 ** -(S_FRAC + 1)


def state_layout(S, burst_bytes):
    """Burst words (ints) of int16 state ``S`` (d_k, d_v), row-major, element 0 in the low bits."""
    S = np.asarray(S, dtype=np.int64)
    per = burst_bytes // 2
    if S.shape[1] % per:
        raise ValueError(f"d_v ({S.shape[1]}) must be a multiple of {per} elements per burst")
    as_bytes = (S & 0xFFFF).astype("<u2").reshape(-1, per)
    return [int.from_bytes(row.tobytes(), "little") for row in as_bytes]


def state_from_bursts(words, d_k, d_v, burst_bytes):
    """Inverse of :func:`state_layout`."""
    per = burst_bytes // 2
    out = np.zeros((len(words), per), dtype=np.int64)
    for n, word in enumerate(words):
        for lane in range(per):
            out[n, lane] = (word >> (16 * lane)) & 0xFFFF
    out = np.where(out >= 1 << 15, out - (1 << 16), out)
    return out.reshape(d_k, d_v)


def _word(values):
    return sum((int(v) & 0xFFFF) << (16 * n) for n, v in enumerate(values))


def load_sequence(P, k, w, u, *, lanes):
    """Factor-port writes ``(kind, t, index, word)`` that load a commit on the RTL's wide port
    (16-bit values packed low first): ``P``; all ``w_t``; per key row ``i`` the ``k_t[i]`` of
    every ``t`` (after the ``w``, as the RTL needs); per token ``t`` and burst column ``jb`` the
    ``lanes`` values ``u_t[jb * lanes ...]``."""
    k, u = np.asarray(k), np.asarray(u)
    seq = [(FACTOR_KINDS["P"], 0, 0, _word([P])), (FACTOR_KINDS["W"], 0, 0, _word(w))]
    seq += [(FACTOR_KINDS["K"], 0, i, _word(k[:, i])) for i in range(k.shape[1])] if len(k) \
        else []
    seq += [(FACTOR_KINDS["U"], t, jb, _word(u[t, jb * lanes:(jb + 1) * lanes]))
            for t in range(len(u)) for jb in range(u.shape[1] // lanes)]
    return seq
