"""Golden model of the GEMV bank: INT8 weights x INT8 activations -> INT32 accumulators.

The RTL (:mod:`ahasd.hw.gemv`) adds one signed 16-bit product per lane per burst into a 32-bit
accumulator that wraps modulo 2**32; this model does the same sum in int64 and wraps it, so the two
agree bit for bit for every matrix (no wrap happens for N <= 131072, since |sum| <= N * 2**14).
"""

import numpy as np

from ahasd.spec.params import ParameterTypeError

__all__ = ["gemv", "wrap_int32"]


def wrap_int32(values):
    """Two's-complement wrap of integer ``values`` to int32."""
    v = np.asarray(values, dtype=np.int64)
    return ((v + 2**31) % 2**32 - 2**31).astype(np.int64)


def gemv(weights, x):
    """``W @ x`` with int8 inputs and int32 (wrapping) accumulation, as int64 array of length M."""
    w, v = np.asarray(weights), np.asarray(x)
    for name, arr in (("weights", w), ("x", v)):
        if arr.size and arr.dtype.kind not in "iu":   # a float or bool array: cast silently
            raise ParameterTypeError(f"{name} must hold integers, not {arr.dtype} values")
        if arr.size and (arr.min() < -128 or arr.max() > 127):
            raise ValueError(f"{name} must be int8 values in -128..127")
    if w.ndim != 2 or v.ndim != 1 or w.shape[1] != v.shape[0]:
        raise ValueError(f"shapes do not match: weights {w.shape}, x {v.shape}")
    w, v = w.astype(np.int64), v.astype(np.int64)
    return wrap_int32(w @ v)
