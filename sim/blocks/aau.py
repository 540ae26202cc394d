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
  as ``round(eps * 2**28)``). Bound: ``|out/4096 - layernorm(x)| <= LAYERNORM_BOUND`` = 1e-3.
"""

import math

import numpy as np

from ahasd.spec.params import check_ints, check_real

__all__ = ["LANES", "softmax_fx", "gelu_fx", "layernorm_fx", "softmax_float", "gelu_float",
           "layernorm_float", "eps_fx", "check_eps", "EPS_MIN", "EPS_MAX", "SOFTMAX_BOUND",
           "GELU_BOUND", "LAYERNORM_BOUND", "EXP2_Q16", "TANH_LUT"]

LANES = 16
SOFTMAX_BOUND = 2e-3
GELU_BOUND = 4e-3
LAYERNORM_BOUND = 1e-3

LOG2E_Q15 = round(math.log2(math.e) * 2**15)
#: 2**-(i/256) in 16 fraction bits.
EXP2_Q16 = [round(2.0 ** (-i / 256) * 2**16) for i in range(256)]
SOFTMAX_RECIP_SHIFT = 35

GELU_C0 = round(math.sqrt(2 / math.pi) * 2**16)   # 52293
GELU_C1 = round(0.044715 * 2**16)                 # 2930
U_FRAC = 10                                       # fraction bits of u
TANH_STEP_BITS = 5                                # table step 2**-5 on [0, 8)
#: tanh(i / 32) in 16 fraction bits, 257 entries (the last for interpolation).
TANH_LUT = [round(math.tanh(i / 2**TANH_STEP_BITS) * 2**16) for i in range(257)]

LN_SQRT_SHIFT = 16
LN_RECIP_SHIFT = 46


#: The range of LayerNorm's ``eps``: its fixed-point form (units of 2**-28) is at least 1, so
#: that a constant vector never divides by zero, and below 16.
EPS_MIN, EPS_MAX = 2.0 ** -28, 16.0


def check_eps(eps):
    """``eps`` as a float if LayerNorm accepts it (the golden model and the RTL alike)."""
    return check_real("eps", eps, EPS_MIN, EPS_MAX, high_open=True, note="2**-28 up to 16")


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


def eps_fx(eps):
    """``eps`` in the units of V (var in Q.28)."""
    return round(eps * 2**28)


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
