"""Task-queue descriptors as plain integers: the Python mirror of :mod:`ahasd.hw.descriptors`.

Each descriptor is a frozen dataclass with :meth:`pack` (to the integer the RTL carries on a
stream payload, first field in the least significant bits, as ``amaranth.lib.data.Struct`` lays
it out) and :meth:`unpack`. The field lists below are the single source of the widths: the
Amaranth layouts are built from them, so the two cannot drift apart.

=====================  =======================  =====  ==============================================
descriptor             field                    bits   meaning
=====================  =======================  =====  ==============================================
DraftDescriptor        batch_id                 16     draft batch number (wraps)
(PIM -> NPU,           length                   8      tokens in the batch
unverified-draft)      kv_base                  16     KV-cache position of the batch's first token
                       mean_entropy             16     batch mean entropy, UQ4.12 nats (EDC input)
FeedbackDescriptor     accepted_length          8      tokens of the batch the target model accepted
(NPU -> PIM)           full                     1      1: the whole batch was accepted
                       cycles                   32     NPU cycles the verification took
                       kv_length                16     KV-cache length after the verification
PreverifyDescriptor    verify_length            4      tokens to pre-verify on PIM (TVC's L, 1..8)
(controller -> PIM)    urgent                   1      1: run before the next draft
=====================  =======================  =====  ==============================================
"""

from dataclasses import make_dataclass
from typing import TYPE_CHECKING

from ahasd.spec.params import check_int

__all__ = ["DRAFT_FIELDS", "FEEDBACK_FIELDS", "PREVERIFY_FIELDS", "DraftDescriptor",
           "FeedbackDescriptor", "PreverifyDescriptor", "packed_width"]

#: (name, bits), least significant first.
DRAFT_FIELDS = (("batch_id", 16), ("length", 8), ("kv_base", 16), ("mean_entropy", 16))
FEEDBACK_FIELDS = (("accepted_length", 8), ("full", 1), ("cycles", 32), ("kv_length", 16))
PREVERIFY_FIELDS = (("verify_length", 4), ("urgent", 1))


def packed_width(field_list):
    """Total bits of a field list."""
    return sum(bits for _, bits in field_list)


class _Packed:
    """Shared pack/unpack over the class attribute ``FIELDS``."""

    FIELDS: tuple[tuple[str, int], ...] = ()

    if TYPE_CHECKING:                   # the fields come from FIELDS (see _descriptor)
        def __init__(self, **values: int) -> None: ...

        def __getattr__(self, name: str) -> int: ...

    def __post_init__(self):
        for name, bits in self.FIELDS:
            value = getattr(self, name)
            if bits == 1 and isinstance(value, bool):      # a flag may be given as a bool
                value = int(value)
            check_int(f"{type(self).__name__}.{name}", value, 0, (1 << bits) - 1,
                      note=f"{bits} unsigned bit{'s' if bits > 1 else ''}")

    @classmethod
    def width(cls):
        return packed_width(cls.FIELDS)

    def pack(self):
        """The descriptor as one unsigned integer (first field in the low bits)."""
        word, shift = 0, 0
        for name, bits in self.FIELDS:
            word |= int(getattr(self, name)) << shift
            shift += bits
        return word

    @classmethod
    def unpack(cls, word):
        """Inverse of :meth:`pack`; ``word`` must fit in :meth:`width` bits."""
        check_int(f"{cls.__name__} word", word, 0, (1 << cls.width()) - 1,
                  note=f"{cls.width()} bits")
        values: dict[str, int] = {}
        shift = 0
        for name, bits in cls.FIELDS:
            values[name] = (word >> shift) & ((1 << bits) - 1)
            shift += bits
        return cls(**values)


def _descriptor(name, field_list, doc):
    """A frozen dataclass named ``name`` with one ``int`` field per entry of ``field_list`` (in
    order) and :class:`_Packed`'s pack/unpack over it: the field list is the one declaration."""
    return make_dataclass(name, [(field_name, int) for field_name, _ in field_list], bases=(_Packed,),
                          namespace={"FIELDS": field_list, "__doc__": doc, "__module__": __name__},
                          frozen=True)


DraftDescriptor = _descriptor(
    "DraftDescriptor", DRAFT_FIELDS, "A drafted batch waiting for NPU verification (unverified-draft queue).")
FeedbackDescriptor = _descriptor(
    "FeedbackDescriptor", FEEDBACK_FIELDS,
    "The NPU's verification result for the oldest unverified batch (feedback queue).")
PreverifyDescriptor = _descriptor(
    "PreverifyDescriptor", PREVERIFY_FIELDS, "A pre-verification request for the PIM (pre-verify queue).")
