"""Task-queue descriptor layouts (``amaranth.lib.data.StructLayout``), built from the field
lists of :mod:`ahasd.spec.descriptors` so that RTL and golden model share one definition.

The widths and meanings are tabulated in :mod:`ahasd.spec.descriptors`. The first field sits in the
least significant bits, so a payload read as an integer equals ``Descriptor.pack()``.
"""

from amaranth.lib import data

from ahasd.spec.descriptors import DRAFT_FIELDS, FEEDBACK_FIELDS, PREVERIFY_FIELDS

__all__ = ["DraftDescriptor", "FeedbackDescriptor", "PreverifyDescriptor", "layout_of"]


def layout_of(field_list):
    """A ``StructLayout`` with the fields of ``field_list`` (name, bits) in order."""
    return data.StructLayout({name: bits for name, bits in field_list})


#: Unverified-draft queue entry: batch_id 16, length 8, kv_base 16, mean_entropy 16 (56 bits).
DraftDescriptor = layout_of(DRAFT_FIELDS)
#: Feedback queue entry: accepted_length 8, full 1, cycles 32, kv_length 16 (57 bits).
FeedbackDescriptor = layout_of(FEEDBACK_FIELDS)
#: Pre-verify queue entry: verify_length 4, urgent 1 (5 bits).
PreverifyDescriptor = layout_of(PREVERIFY_FIELDS)
