"""Golden pairs: one tokenizer and target, drafts trained apart, acceptance ordered by the draft."""

import pytest

from ahasd.sim.decoding.pairs import PAIRS, load_named_pair


def test_unknown_pair():
    with pytest.raises(ValueError, match=r"acceptance pair must be one of ngram3-5, .* not 'x'"):
        load_named_pair("x")


def test_pairs_share_tokenizer_and_target():
    pairs = [load_named_pair(n, max_files=40) for n in PAIRS]
    assert len({p.tokenizer.vocab_size for p in pairs}) == 1
    ctx = pairs[0].tokenizer.encode("def main(argv=None):\n    ")
    ref = pairs[0].target.next_dist(ctx)
    assert all((p.target.next_dist(ctx) == ref).all() for p in pairs)
    # the subset drafts are not the target: their distributions differ somewhere
    assert any(abs(p.draft.next_dist(ctx) - p.target.next_dist(ctx)).sum() > 1e-6 for p in pairs)
