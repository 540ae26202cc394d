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

__all__ = ["COUNTER_BITS", "ParameterTypeError", "check_int", "check_real", "check_bool", "check_power_of_two", "check_positive", "check_unit",
           "check_identifier", "check_domain", "check_instance", "check_choice"]

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


def check_power_of_two(name, value, low=1):
    """``value`` if it is an integer power of two, at least ``low``."""
    if not _is_int(value) or value < max(low, 1) or value & (value - 1):
        bound = f" >= {low}" if low > 1 else ""
        raise ValueError(f"{name} must be a power of two{bound}, not {value!r}")
    return int(value)


def check_positive(name, value, *, integer=False, upper=None):
    """``value`` if it is a positive (finite) number, or a positive integer with ``integer``,
    and at most ``upper`` when given."""
    ok = _is_int(value) if integer else _is_number(value)
    if not ok or value <= 0 or (upper is not None and value > upper):
        kind = "a positive integer" if integer else "a positive number"
        extra = f" <= {upper}" if upper is not None else ""
        raise ValueError(f"{name} must be {kind}{extra}, not {value!r}")
    return value


def check_unit(name, value):
    """``value`` if it is a number in [0, 1]."""
    if not _is_number(value) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a number in [0, 1], not {value!r}")
    return value


def check_identifier(name, value, what):
    """``value`` if it is a string usable as a Python identifier (a clock domain name, say);
    ``what`` names the kind in the message."""
    if not isinstance(value, str) or not value.isidentifier():
        raise ValueError(f"{name} must be {what}, not {value!r}")
    return value


def check_domain(name, value):
    """``value`` if it is a clock domain name."""
    return check_identifier(name, value, "a clock domain name")


def check_instance(name, value, cls):
    """``value`` if it is an instance of ``cls``."""
    if not isinstance(value, cls):
        raise ValueError(f"{name} must be a {cls.__name__}, not {value!r}")
    return value


def check_choice(name, value, choices):
    """``value`` if it is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}, not {value!r}")
    return value
