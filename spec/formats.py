"""Fixed-point number formats: each written once, with its width, fraction bits, rounding rule
and saturation, for the RTL (``ahasd.hw``), the golden models (``ahasd.sim``) and the
co-simulation packing alike.

A format converts a real number to its integer code with :meth:`FixedFormat.encode` (round, then
saturate to the code range) and back with :meth:`FixedFormat.decode`. The rounding rule is part
of the format: ``"half_up"`` is ``floor(x * 2**frac + 1/2)`` (what a hardware adder of one half
LSB and a truncation computes); ``"floor"`` truncates towards minus infinity. Python's ``round``
(half to even) is not a rule any format uses.
"""

import math
from dataclasses import dataclass
from fractions import Fraction

from ahasd.spec.params import check_choice, check_int, check_real

__all__ = ["FixedFormat", "ROUNDING", "UQ4_12", "UQ2_14", "UQ16_8", "round_half_up"]

#: The rounding rules a format may name.
ROUNDING = ("half_up", "floor")


def round_half_up(x):
    """``floor(x + 1/2)`` of a real or rational ``x``, as an ``int``, exactly: a float just below
    a half-way point rounds down (``math.floor(x + 0.5)`` rounds it up when the sum rounds)."""
    if isinstance(x, (int, Fraction)):
        return math.floor(x + Fraction(1, 2))
    whole = math.floor(x)
    return whole + (1 if x - whole >= 0.5 else 0)     # x - whole is exact for |x| < 2**52


@dataclass(frozen=True)
class FixedFormat:
    """An unsigned or signed fixed-point format ``(U)Qi.f`` of ``width`` bits.

    Parameters
    ----------
    name : str
        How the documents write it (``"UQ4.12"``).
    width : int
        Bits of the code, 1..64.
    frac_bits : int
        Fraction bits, 0..width.
    signed : bool
        Two's complement codes when true.
    rounding : str
        One of :data:`ROUNDING`.
    saturate : bool
        Out-of-range values clamp to the code range when true; otherwise :meth:`encode` raises.
    """
    name: str
    width: int
    frac_bits: int
    signed: bool = False
    rounding: str = "half_up"
    saturate: bool = True

    def __post_init__(self):
        check_int("width", self.width, 1, 64)
        check_int("frac_bits", self.frac_bits, 0, self.width)
        check_choice("rounding", self.rounding, ROUNDING)

    @property
    def scale(self):
        """``2**frac_bits``: the code of 1.0."""
        return 1 << self.frac_bits

    @property
    def min_code(self):
        return -(1 << (self.width - 1)) if self.signed else 0

    @property
    def max_code(self):
        return (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1

    def round(self, scaled):
        """``scaled`` (a value already multiplied by :attr:`scale`) to an integer by the
        format's rounding rule, without saturation."""
        if self.rounding == "half_up":
            return round_half_up(scaled)
        return math.floor(scaled)

    def clamp(self, code):
        """``code`` saturated to the code range (or a ValueError without ``saturate``)."""
        if self.min_code <= code <= self.max_code:
            return code
        if not self.saturate:
            raise ValueError(f"{code} is outside the {self.name} code range "
                             f"{self.min_code}..{self.max_code}")
        return min(max(code, self.min_code), self.max_code)

    def encode(self, value):
        """The code of the real ``value``: rounded by the format's rule, then saturated.
        Infinities saturate; NaN raises (``value`` is checked through ``ahasd.spec.params``)."""
        x = check_real(self.name, value, finite=False)
        if math.isinf(x):
            if not self.saturate:
                raise ValueError(f"{self.name} cannot hold {x}")
            return self.max_code if x > 0 else self.min_code
        scaled = (Fraction(value) if isinstance(value, (int, Fraction)) else x) * self.scale
        if isinstance(scaled, float) and math.isinf(scaled):    # a huge finite value, scaled
            return self.clamp(self.max_code + 1 if x > 0 else self.min_code - 1)
        return self.clamp(self.round(scaled))

    def decode(self, code):
        """The real value of ``code``."""
        return code / self.scale


#: Entropy in nats: EDC's input, the entropy unit's output, the draft descriptor's
#: ``mean_entropy`` (docs/architecture.md 4.1).
UQ4_12 = FixedFormat("UQ4.12", width=16, frac_bits=12)
#: TVC's ``freq_ratio`` = f_PIM / f_NPU (docs/tvc.md).
UQ2_14 = FixedFormat("UQ2.14", width=16, frac_bits=14)
#: TVC's default table entries, cycles per token (the RTL's ``ratio_bits`` widens the integer
#: part: UQ(ratio_bits-8).8).
UQ16_8 = FixedFormat("UQ16.8", width=24, frac_bits=8)
