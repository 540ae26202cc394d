"""The live source's reuse: cached distributions and lazy target rows change no decision."""

import numpy as np
import pytest

from ahasd.sim.decoding import golden
from ahasd.sim.decoding.pairs import load_named_pair
from ahasd.sim.decoding.policies import FixedPolicy
from ahasd.sim.decoding.speculative import verify_draft, verify_draft_greedy
from ahasd.sim.system.sources import Batch, DistCache, LiveSource

FILES = 40


@pytest.fixture(scope="module")
def pair():
    return load_named_pair("ngram3-5", max_files=FILES)


def test_cached_rows_are_the_models_rows(pair):
    cache = DistCache(max_bytes=3 * 4096 * 8)
    ctx = pair.tokenizer.encode(golden.PROMPTS[0])
    first = cache.row(pair.target, ctx)
    # the target is a 5-gram: only the last 4 tokens matter
    again = cache.row(pair.target, [7, 7, 7] + ctx[-4:])
    assert again is first and cache.hits == 1
    assert np.array_equal(first.p, pair.target.next_dist(ctx))
    assert first.cdf is None and np.array_equal(cache.row(pair.target, ctx, cdf=True).cdf,
                                                np.cumsum(first.p))
    assert cache.bytes == 2 * first.p.nbytes
    assert first.entropy == pytest.approx(float(-(first.p * np.log(first.p)).sum()))
    assert cache.row_after(pair.target, [1] * 50 + ctx[:-2], ctx[-2:]) is first
    for t in range(5):
        cache.row(pair.draft, ctx + [t])
    assert len(cache._rows) == 3 and cache.misses == 6 and cache.bytes <= cache.max_bytes


@pytest.mark.parametrize("greedy", [False, True])
def test_outcomes_equal_the_golden_verification(pair, greedy):
    src = LiveSource(pair, FixedPolicy(k=6, max_len=6), seed=5, greedy=greedy)
    ctx = pair.tokenizer.encode(golden.PROMPTS[0])
    seen = set()
    for bid in range(40):
        tokens, ents, rows, _ = src.draft(bid, ctx)
        b = Batch(bid, len(ctx), tokens, ents, rows)
        p = pair.target.score(ctx, tokens)
        for length in (None, 1, 3):
            k = len(tokens) if length is None else length
            if greedy:
                want = verify_draft_greedy(tokens[:k], p[:k + 1])
            else:
                want = verify_draft(tokens[:k], np.array(rows)[:k], p[:k + 1],
                                    np.random.default_rng([5, 13, bid]))
            got = src.outcome(b, ctx, length)
            assert got == want
            seen.add(got[0] == k)
        n, nxt = src.outcome(b, ctx)
        ctx = ctx + tokens[:n] + [nxt]
    assert seen == {True, False}      # both full accepts and rejections were checked


def test_results_do_not_depend_on_the_cache(monkeypatch):
    from ahasd.sim.system.runner import simulate
    from ahasd.sim.system.sources import DISTS

    def run():
        r = simulate("ahasd", "opt", "adaedl", tokens=96, max_files=FILES)
        return r.as_dict(), r.output_tokens

    DISTS.clear()
    cold = run()
    simulate("ahasd", "opt", "svip", ablation="edc", tokens=96, max_files=FILES)
    assert DISTS.hits > 0
    warm = run()
    monkeypatch.setattr(DISTS, "max_bytes", 8 * 4096 * 8)     # constant eviction
    DISTS.clear()
    tiny = run()
    assert cold == warm == tiny
