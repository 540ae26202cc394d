"""The streaming entropy unit's specification (docs/architecture.md 4.4): its logit format and
stream limit (:class:`EntropyConfig`), fraction widths, constants and lookup tables, shared by the
RTL (:mod:`ahasd.hw.entropy`) and the golden model (:mod:`ahasd.sim.blocks.entropy`). The output
format is EDC's UQ4.12 (:data:`ahasd.spec.formats.UQ4_12`)."""

import math

from ahasd.spec.formats import UQ4_12
from ahasd.spec.params import check_int

__all__ = ["EntropyConfig", "OUTPUT", "Y_FRAC", "P_FRAC", "LOG2E_Q15", "LN2_Q16", "Q_FRAC",
           "LOG_INDEX", "LOG_INTERP", "Q_BITS", "EXP2_LUT", "LOG2_LUT"]

#: The unit's output: entropy in nats, UQ4.12.
OUTPUT = UQ4_12

Y_FRAC = 8        # fraction bits of y = z * log2(e) and of nd
P_FRAC = 24       # fraction bits of p, S and U
LOG2E_Q15 = round(math.log2(math.e) * 2**15)     # 47274
LN2_Q16 = round(math.log(2) * 2**16)             # 45426
Q_FRAC = 16       # fraction bits of U / S and of H_bits
LOG_INDEX = 8     # mantissa bits that index LOG2_LUT
LOG_INTERP = 8    # further mantissa bits for the linear interpolation

#: 2**-(i / 256) in 24 fraction bits (entry 0 = 1.0 = 2**24).
EXP2_LUT = [round(2.0 ** (-i / 2**Y_FRAC) * 2**P_FRAC) for i in range(2**Y_FRAC)]
#: log2(1 + i/256) in 16 fraction bits, 257 entries (the last one for interpolation).
LOG2_LUT = [round(math.log2(1 + i / 2**LOG_INDEX) * 2**Q_FRAC) for i in range(2**LOG_INDEX + 1)]


class EntropyConfig:
    """Logit format and stream length limit of the entropy unit.

    Parameters
    ----------
    logit_width : int
        Bits of a logit (signed), 8..24.
    logit_frac : int
        Fraction bits of a logit, 0..logit_width-2.
    max_vocab : int
        Longest stream; sets the widths of the S and U accumulators (2..2**20).
    """

    def __init__(self, *, logit_width=16, logit_frac=8, max_vocab=65535):
        check_int("logit_width", logit_width, 8, 24)
        check_int("logit_frac", logit_frac, 0, logit_width - 2)
        check_int("max_vocab", max_vocab, 2, 2**20)
        self.logit_width = logit_width
        self.logit_frac = logit_frac
        self.max_vocab = max_vocab

    @property
    def y_shift(self):
        """Right shift of ``z * LOG2E_Q15`` that leaves ``Y_FRAC`` fraction bits."""
        return 15 + self.logit_frac - Y_FRAC

    @property
    def y_width(self):
        """Bits of y (signed)."""
        return self.logit_width + 16 - self.y_shift + 1

    @property
    def s_width(self):
        return self.max_vocab.bit_length() + P_FRAC + 1

    @property
    def nd_int_width(self):
        """Bits of the integer part of nd = M - y (nonnegative)."""
        return self.y_width - Y_FRAC + 1


#: Quotient bits of U/S (16 fraction + 6 integer: U/S <= log2(V) + 1 < 64).
Q_BITS = Q_FRAC + 6
