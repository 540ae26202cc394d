"""ahasd.sim.decoding.golden.load_models by name: the n-gram pair, and the local-model pair's
argument check (before anything is loaded)."""

import pytest

from ahasd.sim.decoding import golden


def test_the_hf_pair_needs_both_folders():
    for kwargs in ({}, {"draft_model": "d"}, {"target_model": "t"}):
        with pytest.raises(ValueError, match=r"pair 'hf' needs draft_model and target_model"):
            golden.load_models("hf", **kwargs)


def test_the_ngram_pair():
    pair = golden.load_models("ngram", max_files=40)
    assert pair.draft is not None and pair.target is not None and pair.tokenizer is not None
