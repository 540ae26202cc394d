"""TVC's specification (docs/architecture.md 4.2, docs/tvc.md): its hardware parameters, table
names, the ``freq_ratio`` format and the NPU-to-PIM cycle conversion, shared by the RTL
(:class:`ahasd.hw.tvc.TVC`) and the golden model (:class:`ahasd.sim.blocks.tvc.TVC`)."""

from dataclasses import dataclass

from ahasd.spec.clocks import PIM_PER_NPU
from ahasd.spec.formats import UQ2_14
from ahasd.spec.params import check_int, check_power_of_two

__all__ = ["TABLES", "FREQ_FORMAT", "FREQ_FRAC_BITS", "FREQ_BITS", "RATIO_FRAC_BITS",
           "DEFAULT_FREQ_RATIO", "TVCParams", "to_pim"]

#: Table names in port/encoding order (the RTL's ``record.payload.table`` and ``preset.load`` bit).
TABLES = ("nvct", "pdct", "pvct")
#: ``freq_ratio`` is UQ2.14 (:data:`ahasd.spec.formats.UQ2_14`).
FREQ_FORMAT = UQ2_14
FREQ_FRAC_BITS = UQ2_14.frac_bits
FREQ_BITS = UQ2_14.width
#: Table entries are UQ(ratio_bits-8).8.
RATIO_FRAC_BITS = 8
#: f_PIM / f_NPU = 800 MHz / 1 GHz (:mod:`ahasd.spec.clocks`) in UQ2.14: 13107.
DEFAULT_FREQ_RATIO = UQ2_14.encode(PIM_PER_NPU)


def to_pim(cycles_npu, freq_ratio):
    """NPU cycles -> PIM cycles: ``(cycles_npu * freq_ratio) >> 14`` (``freq_ratio`` UQ2.14)."""
    return (cycles_npu * freq_ratio) >> FREQ_FRAC_BITS


@dataclass(frozen=True)
class TVCParams:
    """TVC hardware parameters, validated on construction (shared by golden model and RTL).

    Parameters
    ----------
    depth : int
        Entries per table; a power of two in 1..64 (the average is a shift).
    ratio_bits : int
        Bits of a table entry, UQ(ratio_bits-8).8; 9..40. Recorded ratios saturate at
        ``2**ratio_bits - 1``.
    max_preverify_len : int
        Longest pre-verification TVC inserts, 1..64 (one comparator per length).
    cycles_bits : int
        Bits of cycle counts (record ``cycles``, decide ``now``), 1..48.
    length_bits : int
        Bits of token counts (record ``length``, decide ``kv_len`` and ``pending``), 1..32.
    counter_bits : int
        Bits of the saturating error counter of zero-length records, 1..32.
    """
    depth: int = 4
    ratio_bits: int = 32
    max_preverify_len: int = 8
    cycles_bits: int = 32
    length_bits: int = 16
    counter_bits: int = 16

    def __post_init__(self):
        check_power_of_two("depth", self.depth, 1, 64)
        check_int("ratio_bits", self.ratio_bits, RATIO_FRAC_BITS + 1, 40)
        check_int("max_preverify_len", self.max_preverify_len, 1, 64)
        check_int("cycles_bits", self.cycles_bits, 1, 48)
        check_int("length_bits", self.length_bits, 1, 32)
        check_int("counter_bits", self.counter_bits, 1, 32)

    @property
    def depth_log2(self):
        return self.depth.bit_length() - 1

    @property
    def ratio_max(self):
        return (1 << self.ratio_bits) - 1

    @property
    def pim_cycles_bits(self):
        """Bits of ``to_pim(cycles)``: ``freq_ratio < 4``."""
        return self.cycles_bits + FREQ_BITS - FREQ_FRAC_BITS

    @property
    def numerator_bits(self):
        """Bits of the divider's dividend ``to_pim(cycles) * 256``."""
        return self.pim_cycles_bits + RATIO_FRAC_BITS

    @property
    def c_npu_bits(self):
        return max(self.ratio_bits + self.length_bits - RATIO_FRAC_BITS, 1)

    @property
    def c_sub_bits(self):
        """Bits of ``to_pim(now) + (avg(PDCT) >> 8)``."""
        return max(self.pim_cycles_bits, self.ratio_bits - RATIO_FRAC_BITS) + 1

    @property
    def c_left_bits(self):
        """Bits of the signed ``C_left`` (two's complement, never overflows)."""
        return max(self.c_npu_bits, self.c_sub_bits) + 1

    @property
    def result_length_bits(self):
        return self.max_preverify_len.bit_length()
