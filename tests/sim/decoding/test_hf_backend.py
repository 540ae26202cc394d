"""The optional transformers backend without transformers: the missing-dependency message, and the
LanguageModel logic (softmax, temperature, batched scoring) over a stand-in for the network."""

import sys

import numpy as np
import pytest

from ahasd.sim.decoding.hf_backend import HFModel, require_transformers
from ahasd.sim.decoding.ngram import LanguageModel


def test_missing_dependency_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(ImportError, match=r"pip install 'ahasd\[hf\]'"):
        require_transformers()
    with pytest.raises(ImportError, match="optional dependencies"):
        HFModel("some/local/folder")


class FakeNetwork(HFModel):
    """HFModel with the network replaced by fixed logits that depend on the last token."""

    def __init__(self, table, temperature=1.0):  # no transformers: skip the loading
        self.table = np.asarray(table, dtype=np.float64)
        self.temperature = temperature
        self._V = self.table.shape[1]
        self.calls = 0

    def logits(self, ids):
        self.calls += 1
        return self.table[list(ids)]


def test_next_dist_and_score_over_a_stand_in_network():
    table = np.log([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]])
    m = FakeNetwork(table)
    assert isinstance(m, LanguageModel) and m.vocab_size == 3
    np.testing.assert_allclose(m.next_dist([2, 0]), [0.5, 0.25, 0.25])
    rows = m.score([2, 0], [1, 2])
    np.testing.assert_allclose(rows, np.exp(table[[0, 1, 2]]))
    assert m.calls == 2 and rows.shape == (3, 3)   # one forward pass for the whole draft
    hot = FakeNetwork(table, temperature=0.5)
    np.testing.assert_allclose(hot.next_dist([1]), np.array([0.01, 0.01, 0.64]) / 0.66)
    with pytest.raises(ValueError, match="context must hold at least one token"):
        m.next_dist([])


def _tiny_model(folder, *, seed, n_layer, n_embd, n_positions=64):
    """Save a tiny random GPT-2 and a word-level tokenizer, built locally (no download)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers
    words = ["<unk>", "def", "return", "import", "self", "(", ")", ":", "=", "x", "y", "if"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>")
    torch.manual_seed(seed)
    cfg = transformers.GPT2Config(n_layer=n_layer, n_embd=n_embd, n_head=2, vocab_size=len(words),
                                  n_positions=n_positions)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(folder)
    fast.save_pretrained(folder)
    return str(folder)


def test_a_real_local_transformers_pair_decodes(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    draft = _tiny_model(tmp_path / "draft", seed=0, n_layer=1, n_embd=16)
    target = _tiny_model(tmp_path / "target", seed=1, n_layer=2, n_embd=32)
    from ahasd.sim.decoding import golden
    from ahasd.sim.decoding.lookahead import decode
    pair = golden.load_models("hf", draft_model=draft, target_model=target)
    assert pair.draft.vocab_size == pair.target.vocab_size == 12
    prompt = pair.tokenizer.encode("def x ( self ) :")
    assert prompt and max(prompt) < 12
    policy = golden.build_policy("fixed", pair)
    run = decode(pair.draft, pair.target, prompt, n_tokens=16, policy=policy,
                 rng=np.random.default_rng(0), edc=golden.make_edc("committed"))
    assert len(run.output) == 16 and 0 <= run.acceptance_rate <= 1 and run.verifications >= 1
    # A draft identical to the target is always accepted, sampled or greedy.
    same = golden.load_models("hf", draft_model=target, target_model=target)
    for greedy in (False, True):
        run = decode(same.draft, same.target, prompt, n_tokens=16, policy=policy,
                     rng=np.random.default_rng(0), greedy=greedy)
        assert run.acceptance_rate == 1.0
    # Past the model's positions, and for a folder that holds no model: clear ValueErrors.
    with pytest.raises(ValueError, match="longer than the model's context of 64 positions"):
        pair.target.next_dist([1] * 65)
    with pytest.raises(ValueError, match="cannot load a transformers model"):
        golden.load_models("hf", draft_model=str(tmp_path / "none"), target_model=target)
