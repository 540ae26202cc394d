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


# Token ids of the hand-made corpus below (0 is <unk>, 1 is <eof>).
A, B, C, D = 2, 3, 4, 5


def test_discounts_and_a_probability_by_hand():
    """Modified KN on a corpus small enough to count on paper (Chen & Goodman 1998, eq. 26).

    The sequence, padded with one <eof> on each side for a bigram model, is
    ``<eof> A B A B A B A B C A C A C <eof>``.
    Bigram counts: A B 4, B A 3, C A 2, A C 2, <eof> A 1, B C 1, C <eof> 1, so
    n1, n2, n3, n4 = 3, 2, 1, 1, Y = 3 / (3 + 2*2) = 3/7 and
    D1 = 1 - 2Y n2/n1 = 3/7, D2 = 2 - 3Y n3/n2 = 19/14, D3 = 3 - 4Y n4/n3 = 9/7.
    Unigram continuation counts (distinct left neighbours): A 3 (<eof>, B, C), C 2 (A, B),
    B 1, <eof> 1; n1..n4 = 2, 1, 1, 0, Y = 1/2, D1 = 1/2, D2 = 1/2, D3 = 3 - 0 = 3.
    Unigram (total 7, discounts 3 + 1/2 + 1/2 + 1/2 = 9/2 spread over V = 6 ids, 3/28 each):
    p1 = <unk> 3/28, <eof> 5/28, A 3/28, B 5/28, C 9/28, D 3/28.
    After B (successors A 3, C 1; total 4; gamma = (9/7 + 3/7) / 4 = 3/7):
    p(A|B) = (3 - 9/7)/4 + 3/7 * 3/28 = 93/196, p(C|B) = (1 - 3/7)/4 + 3/7 * 9/28 = 55/196,
    and 3/7 * p1 for the others: <unk> 9/196, <eof> 15/196, B 15/196, D 9/196.
    """
    model = NGramModel.train([[A, B, A, B, A, B, A, B, C, A, C, A, C]], order=2, vocab_size=6)
    np.testing.assert_allclose(model._disc[1], [0, 3 / 7, 19 / 14, 9 / 7], rtol=1e-15)
    np.testing.assert_allclose(model._disc[0], [0, 1 / 2, 1 / 2, 3], rtol=1e-15)
    np.testing.assert_allclose(model.next_dist([B]), np.array([9, 15, 93, 15, 55, 9]) / 196,
                               rtol=1e-14)
    # A context never seen (D) backs off to the unigram level entirely.
    np.testing.assert_allclose(model.next_dist([D]), np.array([3, 5, 3, 5, 9, 3]) / 28,
                               rtol=1e-14)


def test_degenerate_discounts_by_hand():
    # <eof> A B C <eof>: four bigrams seen once each, n2 = 0: the fixed discounts.
    model = NGramModel.train([[A, B, C]], order=2, vocab_size=6)
    np.testing.assert_array_equal(model._disc[1], [0, 0.5, 1.0, 1.5])
    # Each seen bigram keeps 1 - 1/2 of its count; after A: p(B|A) = 1/2 + 1/2 * p1(B).
    p1 = model.next_dist([D])
    assert model.next_dist([A])[B] == pytest.approx(0.5 + 0.5 * p1[B], rel=1e-14)


def test_the_cache_key_covers_what_determines_the_model(tmp_path, monkeypatch):
    from ahasd.sim.decoding import ngram, pairs, tokenizer
    # Everything the training calls lives in the modules whose source the key digests.
    for fn in (ngram.NGramModel.train, ngram._mkn_discounts, ngram.NGramModel.save,
               ngram.NGramModel.load, ngram.load_pair, tokenizer.Tokenizer.train,
               tokenizer.Tokenizer.encode, tokenizer.stdlib_files, tokenizer.read_corpus,
               tokenizer.corpus_key):
        assert fn.__module__ in ngram.TRAINING_MODULES, fn
    assert pairs._subset_pair.__module__ in pairs.TRAINING_MODULES
    assert set(ngram.TRAINING_MODULES) < set(pairs.TRAINING_MODULES)
    # Parameters and corpus.
    assert ngram.cache_key(["corpus", 512]) == ngram.cache_key(["corpus", 512])
    assert ngram.cache_key(["corpus", 512]) != ngram.cache_key(["corpus", 600])
    assert ngram.cache_key(["corpus", 512]) != ngram.cache_key(["other", 512])
    # Source: one changed byte of a training module changes the key; the same text restores it.
    monkeypatch.syspath_prepend(str(tmp_path))
    source = tmp_path / "ahasd_fake_training.py"
    source.write_text("D1 = 0.5\n")
    modules = ngram.TRAINING_MODULES + ("ahasd_fake_training",)
    first = ngram.cache_key(["corpus", 512], modules)
    source.write_text("D1 = 0.6\n")
    changed = ngram.cache_key(["corpus", 512], modules)
    source.write_text("D1 = 0.5\n")
    assert first != changed and ngram.cache_key(["corpus", 512], modules) == first
    assert first != ngram.cache_key(["corpus", 512])
    with pytest.raises(ValueError, match="training module 'ahasd_no_such_module' has no source"):
        ngram.training_digest(("ahasd_no_such_module",))


def test_changed_training_code_is_not_served_from_the_cache(tmp_path, monkeypatch):
    """The bug this key fixes: a model trained by older code kept being served."""
    from ahasd.sim.decoding import ngram
    monkeypatch.setenv("AHASD_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "ahasd_fake_training.py"
    source.write_text("# the training code, version 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(ngram, "TRAINING_MODULES",
                        ngram.TRAINING_MODULES + ("ahasd_fake_training",))
    old = load_pair(max_files=12, vocab_size=512)
    folder = tmp_path / "cache" / "ngram"
    assert len(list(folder.iterdir())) == 3
    # The training changes (other discounts) and so does its source: the pair is rebuilt.
    monkeypatch.setattr(ngram, "_mkn_discounts", lambda *n: [0.25, 0.5, 0.75])
    source.write_text("# the training code, version 2\n")
    new = load_pair(max_files=12, vocab_size=512)
    assert len(list(folder.iterdir())) == 6
    np.testing.assert_array_equal(new.target._disc[:, 1:], [[0.25, 0.5, 0.75]] * 5)
    assert not np.array_equal(old.target._disc, new.target._disc)
    assert new.tokenizer.vocab == old.tokenizer.vocab
