"""The attention algorithm unit's specification (docs/architecture.md 4.4): lane count, the
fixed-point constants and lookup tables, LayerNorm's ``eps`` format, shared by the RTL
(:mod:`ahasd.hw.aau`, :mod:`ahasd.hw.aau_lane`) and the golden model (:mod:`ahasd.sim.blocks.aau`)."""

import math

from ahasd.spec.formats import FixedFormat
from ahasd.spec.params import check_real

__all__ = ["LANES", "SOFTMAX_BOUND", "GELU_BOUND", "LAYERNORM_BOUND", "LOG2E_Q15", "EXP2_Q16",
           "SOFTMAX_RECIP_SHIFT", "GELU_C0", "GELU_C1", "U_FRAC", "TANH_STEP_BITS", "TANH_LUT",
           "LN_SQRT_SHIFT", "LN_RECIP_SHIFT", "EPS_MIN", "EPS_MAX", "EPS_FORMAT", "check_eps",
           "eps_fx"]

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


#: LayerNorm's ``eps`` in the units of V (the variance in Q.28): UQ4.28, rounded half up.
EPS_FORMAT = FixedFormat("UQ4.28", width=32, frac_bits=28, saturate=False)


def check_eps(eps):
    """``eps`` as a float if LayerNorm accepts it (the golden model and the RTL alike)."""
    return check_real("eps", eps, EPS_MIN, EPS_MAX, high_open=True, note="2**-28 up to 16")


def eps_fx(eps):
    """``eps`` in the units of V (var in Q.28), by :data:`EPS_FORMAT`'s rule."""
    return EPS_FORMAT.encode(check_eps(eps))
