"""The optional transformers backend without transformers: the missing-dependency message, and the
LanguageModel logic (softmax, temperature, batched scoring) over a stand-in for the network."""

import sys

import numpy as np
import pytest

from ahasd.sim.hf_backend import HFModel, require_transformers
from ahasd.sim.ngram import LanguageModel


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
