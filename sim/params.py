"""Parameter validation shared by the golden models (and, through them, the RTL constructors)."""

import numbers

__all__ = ["check_int"]


def check_int(name, value, low, high=None):
    """Return ``value`` as an ``int`` if it is an integer in ``low..high`` (``high`` None: no
    upper bound); otherwise raise ``ValueError`` naming ``name`` and the value."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low
            or (high is not None and value > high)):
        bound = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"{name} must be an integer {bound}, not {value!r}")
    return int(value)
