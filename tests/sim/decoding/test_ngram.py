"""Modified Kneser-Ney n-gram models: against an independent dict implementation, the interface,
the cached stdlib pair, and a realistic draft/target agreement."""

from collections import defaultdict

import numpy as np
import pytest

from ahasd.sim.decoding.ngram import LanguageModel, NGramModel, _mkn_discounts, entropy_nats, load_pair
from ahasd.sim.decoding.tokenizer import EOF


def reference_kn(seqs, order, V):
    """Interpolated modified KN written from the textbook formula with dicts (slow, clear)."""
    seq = []
    for s in seqs:
        seq += [EOF] * (order - 1) + list(s)
    seq += [EOF] * (order - 1)
    raw = defaultdict(int)
    for i in range(len(seq) - order + 1):
        raw[tuple(seq[i:i + order])] += 1
    counts = {order: dict(raw)}
    for k in range(order - 1, 0, -1):
        cont = defaultdict(int)
        for gram in counts[k + 1]:
            cont[gram[1:]] += 1
        counts[k] = dict(cont)
    disc = {}
    for k in range(1, order + 1):
        vals = list(counts[k].values())
        disc[k] = [0.0] + _mkn_discounts(*[vals.count(i) for i in (1, 2, 3, 4)])

    def prob(k, h, w):
        if k == 1:
            total = sum(counts[1].values())
            d = disc[1]
            gamma = sum(d[min(c, 3)] for c in counts[1].values()) / total
            c = counts[1].get((w,), 0)
            return max(c - d[min(c, 3)], 0) / total + gamma / V
        succ = {g[-1]: c for g, c in counts[k].items() if g[:-1] == h}
        lower = prob(k - 1, h[1:], w)
        if not succ:
            return lower
        total = sum(succ.values())
        d = disc[k]
        gamma = sum(d[min(c, 3)] for c in succ.values()) / total
        c = succ.get(w, 0)
        return max(c - d[min(c, 3)], 0) / total + gamma * lower

    return lambda ctx: np.array([prob(order, tuple(([EOF] * order + list(ctx))[-(order - 1):])
                                      if order > 1 else (), w) for w in range(V)])


@pytest.mark.parametrize("order", [1, 2, 3])
def test_matches_reference_implementation(order):
    rng = np.random.default_rng(order)
    V = 7
    # A skewed Markov source so that counts of 1, 2, 3 and 4+ all occur.
    trans = rng.dirichlet(np.full(V - 2, 0.3), size=V)
    seqs = []
    for _ in range(5):
        s, t = [], 2
        for _ in range(rng.integers(20, 60)):
            t = 2 + int(rng.choice(V - 2, p=trans[t]))
            s.append(t)
        seqs.append(s)
    model = NGramModel.train(seqs, order=order, vocab_size=V)
    ref = reference_kn(seqs, order, V)
    for ctx in ([], [3], [4, 5], [6, 6, 2], [0, 0], list(seqs[0][:9])):
        got = model.next_dist(ctx)
        np.testing.assert_allclose(got, ref(ctx), rtol=1e-12, atol=1e-15)
        assert got.sum() == pytest.approx(1.0, abs=1e-12) and (got > 0).all()


def test_score_is_next_dist_at_each_prefix():
    model = NGramModel.train([[2, 3, 4, 2, 3, 5, 2, 3, 4]], order=3, vocab_size=6)
    rows = model.score([2], [3, 4])
    assert rows.shape == (3, 6)
    for i, ctx in enumerate(([2], [2, 3], [2, 3, 4])):
        np.testing.assert_array_equal(rows[i], model.next_dist(ctx))
    assert isinstance(model, LanguageModel)


def test_entropy():
    assert entropy_nats([0.5, 0.5, 0.0]) == pytest.approx(np.log(2))
    np.testing.assert_allclose(entropy_nats(np.full((2, 4), 0.25)), [np.log(4)] * 2)


@pytest.mark.parametrize("kwargs, message", [
    (dict(order=0, vocab_size=5), "order must be a positive integer, not 0"),
    (dict(order=2, vocab_size=1), "vocab_size must be an integer >= 2, not 1"),
    (dict(order=6, vocab_size=4096), r"vocab_size \*\* order must be < 2\*\*62"),
    (dict(order=2, vocab_size=3), r"token ids must be in 0..2"),
])
def test_train_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        NGramModel.train([[1, 2, 7]], **kwargs)


def test_pair_is_cached_and_rebuilt_identically(tmp_path, monkeypatch):
    monkeypatch.setenv("AHASD_CACHE", str(tmp_path))
    a = load_pair(max_files=12, vocab_size=512)
    files = sorted(p.name for p in (tmp_path / "ngram").iterdir())
    assert len(files) == 3 and any(f.startswith("vocab-") for f in files)
    b = load_pair(max_files=12, vocab_size=512)           # from the cache
    c = load_pair(max_files=12, vocab_size=512, cache=False)   # rebuilt from the corpus
    ctx = a.tokenizer.encode("def f(self):\n    return ")
    for m in ("draft", "target"):
        np.testing.assert_array_equal(getattr(a, m).next_dist(ctx), getattr(b, m).next_dist(ctx))
        np.testing.assert_array_equal(getattr(a, m).next_dist(ctx), getattr(c, m).next_dist(ctx))
    assert a.tokenizer.vocab == b.tokenizer.vocab == c.tokenizer.vocab
    load_pair(max_files=12, vocab_size=600)  # another hyperparameter: another cache entry
    assert len(list((tmp_path / "ngram").iterdir())) == 6
    with pytest.raises(ValueError, match="draft_order must be a positive integer, not 0"):
        load_pair(draft_order=0)


def test_draft_target_agreement_is_realistic():
    """Per-token acceptance (1 - TV) between the small pair's models is well inside (0, 1), and
    lower where the draft is uncertain (the signal EDC and the entropy policies use)."""
    pair = load_pair(max_files=60)
    rng = np.random.default_rng(0)
    ctx = pair.tokenizer.encode("import os\n\ndef main(argv):\n    ")
    acc, ent = [], []
    for _ in range(400):
        p, q = pair.target.next_dist(ctx), pair.draft.next_dist(ctx)
        acc.append(np.minimum(p, q).sum())
        ent.append(entropy_nats(q))
        ctx.append(int(rng.choice(len(p), p=p)))
    assert 0.4 < np.mean(acc) < 0.95
    assert np.corrcoef(acc, ent)[0, 1] < -0.1
