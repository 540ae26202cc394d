"""The look-ahead decoding engine: exact outputs (greedy and sampled), squash accounting, EDC gating."""

import itertools

import numpy as np
import pytest

from ahasd.sim.blocks.edc import EDC
from ahasd.sim.decoding.golden import build_policy
from ahasd.sim.decoding.lookahead import decode, settle
from ahasd.sim.decoding.ngram import load_pair
from ahasd.sim.decoding.policies import FixedPolicy, SVIPPolicy, make_policy
from ahasd.sim.traces.decoding import validate
from ahasd.tb.stats import chi_square, chi_square_critical


@pytest.fixture(scope="module")
def pair():
    return load_pair(max_files=40)


def target_greedy(model, prompt, n):
    ctx = list(prompt)
    for _ in range(n):
        ctx.append(int(np.argmax(model.next_dist(ctx))))
    return ctx[len(prompt):]


@pytest.mark.parametrize("policy, edc, max_unverified", [
    ("fixed", None, 1), ("fixed", None, 4), ("svip", "committed", 4), ("adaedl", "anchor", 3),
    ("banditspec", None, 6), ("specdecpp", "committed", 2),
])
def test_greedy_lookahead_equals_target_greedy(pair, policy, edc, max_unverified):
    prompt = pair.tokenizer.encode("def run(self, args):\n    for item in ")
    n = 120
    res = decode(pair.draft, pair.target, prompt, n_tokens=n, policy=make_policy(policy),
                 greedy=True, edc=EDC(edc) if edc else None, max_unverified=max_unverified)
    assert res.output == target_greedy(pair.target, prompt, n)
    validate(res.records)


def accounting(res):
    """Rebuild the output from the trace's verify events alone: accepted prefixes + emitted."""
    drafts = {r["batch"]: r for r in res.records if r.get("event") == "draft"}
    out = []
    for r in res.records[1:]:
        if r["event"] == "verify":
            out += drafts[r["batch"]]["tokens"][:r["accepted"]]
            if r["next_token"] is not None:
                out.append(r["next_token"])
    return out


@pytest.mark.parametrize("max_unverified, edc", [(1, None), (4, None), (4, "committed")])
def test_accepted_token_accounting_is_exact(pair, max_unverified, edc):
    prompt = pair.tokenizer.encode("import sys\n")
    res = decode(pair.draft, pair.target, prompt, n_tokens=300, policy=FixedPolicy(k=4),
                 rng=np.random.default_rng(3), max_unverified=max_unverified,
                 edc=EDC(edc) if edc else None)
    rebuilt = accounting(res)
    assert rebuilt[:300] == res.output and len(res.output) == 300
    assert res.accepted_tokens == sum(r["accepted"] for r in res.records[1:]
                                      if r["event"] == "verify")
    squashes = [r for r in res.records[1:] if r["event"] == "squash"]
    assert len(squashes) == res.squashed
    if max_unverified == 1:
        assert res.squashed == 0
    else:
        assert res.squashed > 0   # look-ahead ran on top of batches that were later rejected
    # Every squash follows a rejection at the same time; a full accept squashes nothing.
    events = res.records[1:]
    for i, r in enumerate(events):
        if r["event"] == "squash":
            j = i
            while events[j]["event"] == "squash":
                j -= 1
            assert events[j]["event"] == "verify" and not events[j]["full"]
            assert events[j]["t"] == r["t"]
    # With look-ahead, some full accepts had a batch drafted on top: no bonus token there.
    assert max_unverified == 1 or any(r["event"] == "verify" and r["full"] and r["next_token"] is None for r in events)


def test_edc_stop_makes_the_draft_side_wait_for_a_verification(pair):
    prompt = pair.tokenizer.encode("class A:\n    ")
    edc = EDC("committed")
    res = decode(pair.draft, pair.target, prompt, n_tokens=300, policy=SVIPPolicy(),
                 rng=np.random.default_rng(5), edc=edc, max_unverified=8)
    events = res.records[1:]
    stops = 0
    for i, r in enumerate(events):
        if r["event"] == "draft" and not r["edc"]["cont"]:
            stops += 1
            nxt = next(e for e in events[i + 1:] if e["event"] in ("draft", "verify", "end"))
            assert nxt["event"] != "draft"
    assert stops == res.edc_suppressed == edc.suppressed > 0
    assert edc.decisions == sum(1 for r in events if r["event"] == "draft")


def test_at_most_max_unverified_batches(pair):
    prompt = pair.tokenizer.encode("x = ")
    res = decode(pair.draft, pair.target, prompt, n_tokens=200, policy=FixedPolicy(k=2),
                 rng=np.random.default_rng(0), max_unverified=3, verify_cost=20.0)
    open_batches = set()
    for r in res.records[1:]:
        if r["event"] == "draft":
            open_batches.add(r["batch"])
            assert len(open_batches) <= 3
        elif r["event"] in ("verify", "squash"):
            open_batches.discard(r["batch"])


def test_draft_lengths_respect_the_policy_bounds(pair):
    prompt = pair.tokenizer.encode("if x:\n    ")
    for name in ("svip", "adaedl", "specdecpp", "banditspec"):
        policy = build_policy(name, pair, min_len=2, max_len=5, calibration_tokens=100)
        res = decode(pair.draft, pair.target, prompt, n_tokens=150, policy=policy,
                     rng=np.random.default_rng(1))
        lengths = [len(r["tokens"]) for r in res.records[1:] if r["event"] == "draft"]
        assert all(2 <= k <= 5 for k in lengths)
        assert len(set(lengths)) > 1  # adaptive: not a fixed length


class MarkovLM:
    """A first-order Markov 'language model' with a fixed transition matrix."""

    def __init__(self, table):
        self.table = np.asarray(table)

    @property
    def vocab_size(self):
        return self.table.shape[1]

    def next_dist(self, context):
        return self.table[context[-1]].copy()

    def score(self, context, continuation):
        ctx = list(context) + list(continuation)
        return np.array([self.table[t] for t in ctx[len(context) - 1:]])


def sampled_joint_counts(runs, seed, max_unverified):
    rng = np.random.default_rng(seed)
    target = MarkovLM([[0.5, 0.3, 0.2], [0.1, 0.2, 0.7], [0.3, 0.4, 0.3]])
    draft = MarkovLM([[0.2, 0.3, 0.5], [0.4, 0.4, 0.2], [0.3, 0.1, 0.6]])
    counts = {}
    for _ in range(runs):
        res = decode(draft, target, [0], n_tokens=3, policy=FixedPolicy(k=2, max_len=2),
                     rng=rng, max_unverified=max_unverified, verify_cost=3.0)
        key = tuple(res.output)
        counts[key] = counts.get(key, 0) + 1
    cells = list(itertools.product(range(3), repeat=3))
    expected = []
    for a, b, c in cells:
        expected.append(target.table[0, a] * target.table[a, b] * target.table[b, c])
    return np.array([counts.get(c, 0) for c in cells]), np.array(expected)


@pytest.mark.parametrize("max_unverified", [1, 3])
def test_sampled_output_distribution_equals_target(max_unverified):
    """Three-token outputs over a 3-token vocabulary: chi-square against the target's chain, with
    look-ahead (rejections squash, full accepts skip the bonus) and without."""
    observed, expected = sampled_joint_counts(6000, seed=99 + max_unverified,
                                              max_unverified=max_unverified)
    assert chi_square(observed, expected) < chi_square_critical(len(expected) - 1, 1e-3)


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_tokens=0), "n_tokens must be a positive integer, not 0"),
    (dict(max_unverified=0), "max_unverified must be an integer in 1..1024, not 0"),
    (dict(max_unverified=True), "max_unverified must be an integer in 1..1024, not True"),
    (dict(verify_cost=0), "verify_cost must be a finite number > 0, not 0"),
    (dict(verify_cost=float("inf")), "verify_cost must be a finite number > 0, not inf"),
    (dict(draft_cost="1"), "draft_cost must be a finite number > 0, not '1'"),
    (dict(policy="fixed"), "policy must be a DraftPolicy"),
    (dict(rng=None), "rng must be a numpy.random.Generator unless greedy"),
])
def test_errors(pair, kwargs, message):
    args = dict(n_tokens=5, policy=FixedPolicy(), rng=np.random.default_rng(0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        decode(pair.draft, pair.target, [2, 3], **args)


@pytest.mark.regress
@pytest.mark.parametrize("edc", [None, "committed", "anchor"])
def test_greedy_lookahead_equals_target_greedy_long(edc):
    from ahasd.sim.decoding.golden import PROMPTS
    full = load_pair()
    for name in ("fixed", "specdecpp", "svip", "adaedl", "banditspec"):
        for text in PROMPTS[:3]:
            prompt = full.tokenizer.encode(text)
            res = decode(full.draft, full.target, prompt, n_tokens=1000,
                         policy=build_policy(name, full), greedy=True,
                         edc=EDC(edc) if edc else None, max_unverified=4)
            assert res.output == target_greedy(full.target, prompt, 1000)


@pytest.mark.regress
def test_sampled_output_distribution_equals_target_long():
    observed, expected = sampled_joint_counts(60000, seed=2024, max_unverified=4)
    assert chi_square(observed, expected) < chi_square_critical(len(expected) - 1, 1e-3)


@pytest.mark.parametrize("tokens, accepted, later, commit, emitted, squash", [
    ([5, 6, 7], 1, True, [5, 9], 9, True),       # rejection: residual, later batches squashed
    ([5, 6, 7], 0, False, [9], 9, True),
    ([5, 6], 2, True, [5, 6], None, False),      # full accept, a later batch: no bonus token
    ([5, 6], 2, False, [5, 6, 9], 9, False),     # full accept, nothing later: the bonus token
])
def test_the_commit_rule(tokens, accepted, later, commit, emitted, squash):
    v = settle(tokens, accepted, 9, later=later)
    assert (v.commit, v.emitted, v.squash, v.full, v.accepted) == (
        commit, emitted, squash, accepted == len(tokens), accepted)


def test_decode_settles_every_verification_by_the_rule(pair, monkeypatch):
    from ahasd.sim.decoding import lookahead
    calls = []

    def spy(*args, **kw):
        calls.append(args)
        return settle(*args, **kw)

    monkeypatch.setattr(lookahead, "settle", spy)
    res = decode(pair.draft, pair.target, [2, 3], n_tokens=60, policy=FixedPolicy(k=3),
                 rng=np.random.default_rng(4), max_unverified=3)
    assert len(calls) == res.verifications > 0
