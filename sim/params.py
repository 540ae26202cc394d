"""Parameter validation shared by the golden models (and, through them, the RTL constructors).

The rules are those of the trace readers (``docs/trace-format.md``): numbers are finite and in
range, and types are exact (a bool is not an integer, a string is not a number). A wrong type
raises :class:`ParameterTypeError` (a TypeError that is also a ValueError, so callers that catch
either see it); a wrong value raises ValueError. Messages name the parameter and the value.
"""

import math
import numbers

import numpy as np

__all__ = ["ParameterTypeError", "check_int", "check_real", "check_bool"]


class ParameterTypeError(TypeError, ValueError):
    """A parameter of the wrong type (also a ValueError)."""


def _show(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def check_int(name, value, low, high=None):
    """Return ``value`` as an ``int`` if it is an integer in ``low..high`` (``high`` None: no
    upper bound); otherwise raise naming ``name`` and the value."""
    bound = f">= {low}" if high is None else f"in {low}..{high}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterTypeError(f"{name} must be an integer {bound}, not {_show(value)}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be an integer {bound}, not {_show(value)}")
    return int(value)


def check_real(name, value, low=-math.inf, high=math.inf, *, low_open=False):
    """Return ``value`` as a ``float`` if it is a finite real number in ``[low, high]``
    (``(low, high]`` with ``low_open``); otherwise raise naming ``name`` and the value."""
    if low_open:
        bound = f"> {low:g}" if high == math.inf else f"in ({low:g}, {high:g}]"
    else:
        bound = f">= {low:g}" if high == math.inf else f"in [{low:g}, {high:g}]"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(f"{name} must be a finite number {bound}, not {_show(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf if value > 0 else -math.inf
    if (not math.isfinite(number) or number > high
            or (number <= low if low_open else number < low)):
        raise ValueError(f"{name} must be a finite number {bound}, not {_show(value)}")
    return number


def check_bool(name, value):
    """Return ``value`` as a ``bool`` if it is one (Python or numpy); otherwise raise."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(f"{name} must be a bool, not {_show(value)}")
    return bool(value)
