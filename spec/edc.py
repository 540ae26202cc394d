"""EDC's specification (docs/architecture.md 4.1): its hardware parameters, the entropy input
format and the bucket thresholds, shared by the RTL (:class:`ahasd.hw.edc.EDC`) and the golden
model (:class:`ahasd.sim.blocks.edc.EDC`)."""

from dataclasses import dataclass

from ahasd.spec.formats import UQ4_12, round_half_up
from ahasd.spec.params import check_int, check_power_of_two, check_real

__all__ = ["VARIANTS", "ENTROPY", "ENTROPY_FRAC_BITS", "ENTROPY_BITS", "ENTROPY_MAX", "EDCParams",
           "entropy_to_fx", "bucket_thresholds"]

VARIANTS = ("committed", "anchor")
#: The entropy input format, UQ4.12 (:data:`ahasd.spec.formats.UQ4_12`).
ENTROPY = UQ4_12
ENTROPY_FRAC_BITS = UQ4_12.frac_bits
ENTROPY_BITS = UQ4_12.width
ENTROPY_MAX = UQ4_12.max_code


def entropy_to_fx(entropy_nats):
    """Entropy in nats -> UQ4.12 code, ``clamp(floor(H * 4096 + 1/2), 0, 65535)`` (the format's
    one rounding rule, half up)."""
    check_real("entropy_nats", entropy_nats, finite=False)
    return UQ4_12.encode(entropy_nats)


def bucket_thresholds(h_max_nats, bucket_bits):
    """The integer UQ4.12 thresholds ``t_1 .. t_{2**bucket_bits - 1}``."""
    buckets = 1 << bucket_bits
    return [round_half_up(k * h_max_nats * (1 << ENTROPY_FRAC_BITS) / buckets)
            for k in range(1, buckets)]



@dataclass(frozen=True)
class EDCParams:
    """EDC hardware parameters, validated on construction (shared by golden model and RTL).

    Parameters
    ----------
    history_depth : int
        Entries D of LEHT / LCEHT; a power of two >= 2 (each half is averaged with a shift).
    bucket_bits : int
        Bits per entropy bucket (1..4); ``2**bucket_bits`` buckets.
    llr_bits : int
        Bits of LLR, the count of unverified (look-ahead) batches; saturates at ``2**llr_bits-1``.
    counter_bits : int
        Bits of each PHT saturating counter; *continue* iff counter >= ``2**(counter_bits-1)``.
    counter_reset : int or None
        Reset value of every PHT counter; default ``2**(counter_bits-1)`` (2 for 2-bit counters).
    fifo_depth_log2 : int
        log2 of the depth of the FIFO of pending (index, bucket) pairs; the oldest entry is dropped
        when a draft finds it full.
    h_max_nats : float
        Entropy mapped to the top bucket boundary; thresholds must fit in UQ4.12 (0 < H_max < 16).
    """
    history_depth: int = 8
    bucket_bits: int = 3
    llr_bits: int = 3
    counter_bits: int = 2
    counter_reset: int | None = None
    fifo_depth_log2: int = 3
    h_max_nats: float = 10.0

    def __post_init__(self):
        check_power_of_two("history_depth", self.history_depth, 2, 64)
        check_int("bucket_bits", self.bucket_bits, 1, 4)
        check_int("llr_bits", self.llr_bits, 1, 8)
        check_int("counter_bits", self.counter_bits, 1, 8)
        if self.counter_reset is None:
            object.__setattr__(self, "counter_reset", 1 << (self.counter_bits - 1))
        check_int("counter_reset", self.counter_reset, 0, (1 << self.counter_bits) - 1)
        check_int("fifo_depth_log2", self.fifo_depth_log2, 1, 8)
        # Inside the UQ4.12 range of the entropy input.
        check_real("h_max_nats", self.h_max_nats, 0, 16, low_open=True, high_open=True)

    @property
    def index_bits(self):
        return 2 * self.bucket_bits + self.llr_bits

    @property
    def pht_entries(self):
        return 1 << self.index_bits

    @property
    def llr_max(self):
        return (1 << self.llr_bits) - 1

    @property
    def counter_max(self):
        return (1 << self.counter_bits) - 1

    @property
    def continue_threshold(self):
        return 1 << (self.counter_bits - 1)

    @property
    def fifo_depth(self):
        return 1 << self.fifo_depth_log2

    @property
    def half_shift(self):
        """log2(D/2): the shift that averages one half of the history."""
        return (self.history_depth // 2).bit_length() - 1

    @property
    def thresholds(self):
        return bucket_thresholds(self.h_max_nats, self.bucket_bits)
