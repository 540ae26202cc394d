"""Parameter validation: the one module every golden model and RTL constructor checks its
parameters with (``ahasd.hw`` imports it; it is pure Python).

Each check returns the value when it is acceptable and otherwise raises with a message naming the
parameter, the rule and the bad value (``"<name> must be <rule>, not <value>"``), which the tests
assert. The rules are those of the trace readers (``docs/trace-format.md``): numbers are finite and
in range, and types are exact (a bool is not an integer, a string is not a number). A wrong type
raises :class:`ParameterTypeError` (a TypeError that is also a ValueError, so callers that catch
either see it); a wrong value raises ValueError.
"""

import math
import numbers

import numpy as np

__all__ = ["COUNTER_BITS", "ParameterTypeError", "check_int", "check_ints", "check_real",
           "check_bool", "check_power_of_two", "check_positive", "check_unit", "check_identifier",
           "check_domain", "check_instance", "check_callable", "check_choice"]

#: Width of the wrapping statistics counters of the blocks (EDC, GTS, the draft queue's
#: ``discarded``), the same as the 32-bit counter registers.
COUNTER_BITS = 32


class ParameterTypeError(TypeError, ValueError):
    """A parameter of the wrong type (also a ValueError)."""


def _show(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value):
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value))


def _none(optional):
    return " or None" if optional else ""


def check_int(name, value, low, high=None, *, optional=False, note=None):
    """Return ``value`` as an ``int`` if it is an integer in ``low..high`` (``high`` None: no
    upper bound; None itself with ``optional``); otherwise raise naming ``name`` and the value.
    ``note`` (what the range means) is added to the message."""
    if optional and value is None:
        return None
    bound = f">= {low}" if high is None else f"in {low}..{high}"
    rule = f"an integer {bound}{f' ({note})' if note else ''}{_none(optional)}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterTypeError(f"{name} must be {rule}, not {_show(value)}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {rule}, not {_show(value)}")
    return int(value)


def check_real(name, value, low=-math.inf, high=math.inf, *, low_open=False, high_open=False,
               finite=True, note=None):
    """Return ``value`` as a ``float`` if it is a finite real number in ``[low, high]``
    (open at ``low`` with ``low_open``, at ``high`` with ``high_open``); otherwise raise naming
    ``name`` and the value. ``finite=False``: any real number but NaN (for conversions that
    saturate), without bounds. ``note`` (what the range means) is added to the message."""
    if not finite:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ParameterTypeError(f"{name} must be a number, not {_show(value)}")
        try:
            number = float(value)
        except OverflowError:
            # typeshed's numbers.Real has no __gt__ / __ge__ (every Real compares)
            return math.inf if value > 0 else -math.inf  # type: ignore[operator]
        if math.isnan(number):
            raise ValueError(f"{name} must be a number, not {_show(value)}")
        return number
    if high == math.inf:
        bound = f"> {low:g}" if low_open else f">= {low:g}"
    else:
        bound = (f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}")
    if note:
        bound += f" ({note})"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(f"{name} must be a finite number {bound}, not {_show(value)}")
    try:
        number = float(value)
    except OverflowError:
        # typeshed's numbers.Real has no __gt__ / __ge__ (every Real compares)
        number = math.inf if value > 0 else -math.inf  # type: ignore[operator]
    if (not math.isfinite(number)
            or (number >= high if high_open else number > high)
            or (number <= low if low_open else number < low)):
        raise ValueError(f"{name} must be a finite number {bound}, not {_show(value)}")
    return number


def check_ints(name, values, low, high, note=None):
    """``values`` (a list, tuple or 1-D array of integers) as a list of ints in ``low..high``;
    a bad element is named by its index (``name[i]``). An integer numpy array is checked at
    once."""
    check_instance(name, values, (list, tuple, np.ndarray), what="sequence of integers")
    array = np.asarray(values)
    if array.ndim == 1 and array.dtype.kind in "iu":
        outside = np.flatnonzero((array < low) | (array > high))
        if outside.size:
            i = int(outside[0])
            check_int(f"{name}[{i}]", int(array[i]), low, high, note=note)
        return array.tolist()
    return [check_int(f"{name}[{i}]", v, low, high, note=note) for i, v in enumerate(values)]


def check_bool(name, value):
    """Return ``value`` as a ``bool`` if it is one (Python or numpy); otherwise raise."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(f"{name} must be a bool, not {_show(value)}")
    return bool(value)


def check_power_of_two(name, value, low=1, high=None):
    """``value`` as an ``int`` if it is an integer power of two in ``low..high`` (``high`` None:
    no upper bound)."""
    if high is not None:
        bound = f" in {low}..{high}"
    else:
        bound = f" >= {low}" if low > 1 else ""
    message = f"{name} must be a power of two{bound}, not {_show(value)}"
    if not _is_int(value):
        raise ParameterTypeError(message)
    if value < max(low, 1) or (high is not None and value > high) or value & (value - 1):
        raise ValueError(message)
    return int(value)


def check_positive(name, value, *, integer=False, upper=None, optional=False):
    """``value`` if it is a positive (finite) number, or a positive integer with ``integer``,
    and at most ``upper`` when given (None itself with ``optional``)."""
    if optional and value is None:
        return None
    kind = "a positive integer" if integer else "a positive number"
    extra = f" <= {upper}" if upper is not None else ""
    message = f"{name} must be {kind}{extra}{_none(optional)}, not {_show(value)}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral if integer
                                                 else numbers.Real):
        raise ParameterTypeError(message)
    if not (integer or _is_number(value)) or value <= 0 or (upper is not None and value > upper):
        raise ValueError(message)
    return value


def check_unit(name, value):
    """``value`` if it is a number in [0, 1]."""
    message = f"{name} must be a number in [0, 1], not {_show(value)}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(message)
    # typeshed's numbers.Real has no __gt__ / __ge__ (every Real compares)
    if not _is_number(value) or not 0 <= value <= 1:  # type: ignore[operator]
        raise ValueError(message)
    return value


def check_identifier(name, value, what):
    """``value`` if it is a string usable as a Python identifier (a clock domain name, say);
    ``what`` names the kind in the message."""
    message = f"{name} must be {what}, not {_show(value)}"
    if not isinstance(value, str):
        raise ParameterTypeError(message)
    if not value.isidentifier():
        raise ValueError(message)
    return value


def check_domain(name, value):
    """``value`` if it is a clock domain name."""
    return check_identifier(name, value, "a clock domain name")


def check_instance(name, value, cls, *, optional=False, what=None):
    """``value`` if it is an instance of ``cls`` (a class or a tuple of classes), or None with
    ``optional``; ``what`` names the kind in the message (default: the class names)."""
    if optional and value is None:
        return value
    if not isinstance(value, cls):
        classes = cls if isinstance(cls, tuple) else (cls,)
        what = what or " or ".join(c.__name__ for c in classes)
        raise ParameterTypeError(f"{name} must be a {what}{_none(optional)}, not "
                                 f"{type(value).__name__} {_show(value)}")
    return value


def check_callable(name, value, *, optional=False):
    """``value`` if it can be called, or None with ``optional``."""
    if (value is None and optional) or callable(value):
        return value
    raise ParameterTypeError(f"{name} must be callable{_none(optional)}, not "
                             f"{type(value).__name__} {_show(value)}")


def check_choice(name, value, choices):
    """``value`` if it is one of ``choices``."""
    try:
        ok = value in choices
    except TypeError:                 # unhashable, against a set or dict
        ok = False
    if ok and isinstance(value, bool):    # True == 1: a bool is not an integer choice
        ok = any(c is value for c in choices)
    if not ok:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}, not {_show(value)}")
    return value
