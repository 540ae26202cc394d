"""Golden models of the attention algorithm unit (AAU): bit-exact mirrors of :mod:`ahasd.hw.aau`.

All three operators work on one vector of ``LANES`` = 16 signed Q8.8 inputs (int16) and use only
integer arithmetic, exactly as the RTL does. Float references and the stated error bounds (tested
in ``tests/sim/blocks/test_aau.py``, over random and extreme vectors):

* :func:`softmax_fx` -> UQ1.15 (0..32768). Max subtraction, ``e = 2**(d*log2 e)`` from a 256-entry
  table (2**-f, 16 fraction bits) and a shift, one reciprocal ``R = 2**35 // sum`` (restoring
  divider) and 16 products ``(e*R + 2**19) >> 20``. Bound vs float softmax of the same inputs:
  ``|out/2**15 - p| <= SOFTMAX_BOUND`` = 2e-3.
* :func:`gelu_fx` -> Q8.8. Tanh form ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``; the cube
  on ``x`` clamped to +-8 (beyond, tanh = +-1 in 16 bits), tanh from a 256-entry table on [0, 8)
  with linear interpolation (odd symmetry). Bound: ``|out/256 - gelu(x)| <= GELU_BOUND`` = 4e-3.
* :func:`layernorm_fx` -> Q3.12 (|y| <= sqrt(15) for 16 lanes). ``d = 16 x - sum x`` (exact),
  ``V = sum d**2`` (= var in Q.28, exact), ``s = isqrt((V + eps) << 16)`` (bit-serial),
  ``R = 2**46 // s``, ``y = (d*R + 2**23) >> 24``. ``eps`` is a parameter (default 1e-5, stored
  as ``floor(eps * 2**28 + 1/2)``, UQ4.28). Bound: ``|out/4096 - layernorm(x)| <= LAYERNORM_BOUND`` = 1e-3.
"""

import math

import numpy as np

from ahasd.spec.aau import (
    EPS_MAX,
    EPS_MIN,
    EXP2_Q16,
    GELU_BOUND,
    GELU_C0,
    GELU_C1,
    LANES,
    LAYERNORM_BOUND,
    LN_RECIP_SHIFT,
    LN_SQRT_SHIFT,
    LOG2E_Q15,
    SOFTMAX_BOUND,
    SOFTMAX_RECIP_SHIFT,
    TANH_LUT,
    TANH_STEP_BITS,
    U_FRAC,
    check_eps,
    eps_fx,
)
from ahasd.spec.params import check_ints

__all__ = ["LANES", "softmax_fx", "gelu_fx", "layernorm_fx", "softmax_float", "gelu_float",
           "layernorm_float", "eps_fx", "check_eps", "EPS_MIN", "EPS_MAX", "SOFTMAX_BOUND",
           "GELU_BOUND", "LAYERNORM_BOUND", "EXP2_Q16", "TANH_LUT"]

def _check(x):
    v = check_ints("x", x, -32768, 32767, note="Q8.8 int16 lanes")
    if len(v) != LANES:
        raise ValueError(f"x must have {LANES} lanes, not {len(v)}")
    return v


def _exp2_neg(nd):
    """2**(-nd / 256) in Q16 (nd >= 0), table + shift."""
    ip, fp = nd >> 8, nd & 255
    return EXP2_Q16[fp] >> ip if ip <= 16 else 0


def softmax_fx(x):
    """Softmax of 16 Q8.8 lanes as UQ1.15."""
    v = _check(x)
    big = max(v)
    e = [_exp2_neg(-(((a - big) * LOG2E_Q15) >> 15)) for a in v]
    r = (1 << SOFTMAX_RECIP_SHIFT) // sum(e)
    return [(a * r + (1 << 19)) >> 20 for a in e]


def _tanh_q16(u):
    """tanh(u / 2**U_FRAC) in Q16 from the table (odd symmetry, saturating beyond 8)."""
    a = min(abs(u), (256 << (U_FRAC - TANH_STEP_BITS)))
    idx, f = a >> (U_FRAC - TANH_STEP_BITS), a & ((1 << (U_FRAC - TANH_STEP_BITS)) - 1)
    if idx >= 256:
        t = TANH_LUT[256]
    else:
        lo, hi = TANH_LUT[idx], TANH_LUT[idx + 1]
        t = lo + (((hi - lo) * f) >> (U_FRAC - TANH_STEP_BITS))
    return -t if u < 0 else t


def gelu_fx(x):
    """GELU (tanh form) of 16 Q8.8 lanes as Q8.8."""
    out = []
    for a in _check(x):
        xc = min(max(a, -2048), 2047)
        x3 = xc * xc * xc                                   # Q.24
        inner = (xc << 16) + ((GELU_C1 * x3) >> 16)         # Q.24
        u = (inner * GELU_C0) >> (24 + 16 - U_FRAC)         # Q.10
        t = _tanh_q16(u)
        out.append((a * (65536 + t) + (1 << 16)) >> 17)
    return out


def _isqrt(n):
    return math.isqrt(n)


def layernorm_fx(x, eps=1e-5):
    """LayerNorm (no affine) of 16 Q8.8 lanes as Q3.12."""
    v = _check(x)
    check_eps(eps)
    total = sum(v)
    d = [LANES * a - total for a in v]
    big_v = sum(a * a for a in d)
    s = _isqrt((big_v + eps_fx(eps)) << LN_SQRT_SHIFT)
    r = (1 << LN_RECIP_SHIFT) // s
    return [(a * r + (1 << 23)) >> 24 for a in d]


def softmax_float(x):
    z = np.asarray(x, dtype=np.float64) / 256
    e = np.exp(z - z.max())
    return e / e.sum()


def gelu_float(x):
    z = np.asarray(x, dtype=np.float64) / 256
    return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))


def layernorm_float(x, eps=1e-5):
    z = np.asarray(x, dtype=np.float64) / 256
    return (z - z.mean()) / np.sqrt(z.var() + eps)
