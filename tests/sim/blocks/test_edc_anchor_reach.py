"""The demo's account of what the anchor EDC's PHT sees (ahasd.sim.blocks.edc.anchor_reach)."""

from ahasd.sim.blocks.edc import anchor_reach


def test_anchor_reach_counts_llr_max_and_reads_of_trained_entries():
    # Zero entropy keeps the history all zero, so an index is just the LLR. Three drafts read
    # entries 1, 2, 3; two rejections train the states after their decrements, LLR 2 and 1; the
    # next draft (LLR 2) reads entry 2, which a verify trained.
    events = [("draft", 0.0)] * 3 + [("verify", False)] * 2 + [("draft", 0.0)]
    assert anchor_reach(events) == (4, 0, 1)
    # Eight drafts saturate the 3-bit LLR at the seventh; a verify then trains LLR 6, the draft
    # after it reads LLR 7 again: no read of a trained entry.
    events = [("draft", 0.0)] * 8 + [("verify", True), ("draft", 0.0)]
    assert anchor_reach(events) == (9, 3, 0)
