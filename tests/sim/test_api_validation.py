"""The golden models' public entry points reject what the CLI rejects: wrong types (a string, a
bool where an integer is meant) with a TypeError, non-finite or out-of-range numbers with a
ValueError, each naming the parameter."""

import math

import numpy as np
import pytest

from ahasd.sim.blocks.edc import EDC
from ahasd.sim.blocks.tvc import TVC
from ahasd.sim.decoding.lookahead import decode
from ahasd.sim.decoding.policies import FixedPolicy
from ahasd.sim.decoding.speculative import verify_draft, verify_draft_greedy


@pytest.mark.parametrize("variant", ["committed", "anchor"])
@pytest.mark.parametrize("call, error, message", [
    (lambda e: e.draft("1"), TypeError, "entropy_nats must be a finite number >= 0, not '1'"),
    (lambda e: e.draft(True), TypeError, "entropy_nats must be a finite number >= 0, not True"),
    (lambda e: e.draft(None), TypeError, "entropy_nats must be a finite number"),
    (lambda e: e.draft(-math.inf), ValueError, "entropy_nats must be a finite number >= 0, "
                                               "not -inf"),
    (lambda e: e.draft(math.inf), ValueError, "entropy_nats must be a finite number >= 0, not inf"),
    (lambda e: e.draft(math.nan), ValueError, "entropy_nats must be a finite number >= 0, not nan"),
    (lambda e: e.draft(-0.5), ValueError, "entropy_nats must be a finite number >= 0, not -0.5"),
    (lambda e: e.draft(10**400), ValueError, r"entropy_nats must be a finite number >= 0, not "
                                             r"1000000000"),
    (lambda e: e.draft_fx(True), TypeError, "entropy_fx must be an integer in 0..65535, not True"),
    (lambda e: e.draft_fx(1.5), TypeError, "entropy_fx must be an integer in 0..65535, not 1.5"),
    (lambda e: e.draft_fx(70000), ValueError, "entropy_fx must be an integer in 0..65535"),
    (lambda e: e.verify(1), TypeError, "full must be a bool, not 1"),
    (lambda e: e.verify("no"), TypeError, "full must be a bool, not 'no'"),
    (lambda e: e.step(draft_fx=False), TypeError, "entropy_fx must be an integer"),
])
def test_edc_rejects(variant, call, error, message):
    with pytest.raises(error, match=message):
        call(EDC(variant=variant))


def test_edc_accepts_what_the_readers_accept():
    edc = EDC()
    assert edc.draft(3) == EDC().draft(np.float32(3.0))           # any real number type
    assert EDC().draft(np.float64(99.0)) == EDC().draft(16.0)    # above UQ4.12: saturates
    edc.verify(np.bool_(True))
    edc.verify(False)
    with pytest.raises(TypeError, match="history_depth must be a power of two in 2..64, not True"):
        EDC(history_depth=True)


@pytest.mark.parametrize("call, error, message", [
    (lambda t: t.decide(True, 1, 1), TypeError, "kv_len must be an integer in 0..65535, not True"),
    (lambda t: t.decide(1.0, 1, 1), TypeError, "kv_len must be an integer in 0..65535, not 1.0"),
    (lambda t: t.decide(1, -1, 1), ValueError, "now must be an integer in 0..4294967295, not -1"),
    (lambda t: t.decide(1, 1, 10**30), ValueError, "pending must be an integer in 0..65535"),
    (lambda t: t.record("pdct", "5", 1), TypeError, "cycles must be an integer"),
    (lambda t: t.record("gpu", 5, 1), ValueError, "table must be one of nvct, pdct, pvct"),
    (lambda t: t.record(["nvct"], 5, 1), ValueError, "table must be one of"),
    (lambda t: t.config(False), TypeError, "freq_ratio must be an integer in 0..65535, not False"),
    (lambda t: t.preset("nvct", math.inf), TypeError, "ratio must be an integer"),
])
def test_tvc_rejects(call, error, message):
    with pytest.raises(error, match=message):
        call(TVC())


def test_tvc_constructor_rejects():
    with pytest.raises(TypeError, match="depth must be a power of two in 1..64, not '4'"):
        TVC(depth="4")
    with pytest.raises(TypeError, match="presets must be a dict"):
        TVC(presets=[("nvct", 1)])
    with pytest.raises(TypeError, match="freq_ratio must be an integer"):
        TVC(freq_ratio=0.8)


class Uniform:
    """A language model with a uniform next-token distribution over 4 tokens."""
    vocab_size = 4

    def next_dist(self, context):
        return np.full(4, 0.25)

    def score(self, context, tokens):
        return np.full((len(tokens) + 1, 4), 0.25)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(n_tokens=True), ValueError, "n_tokens must be a positive integer, not True"),
    (dict(n_tokens=2.0), ValueError, "n_tokens must be a positive integer, not 2.0"),
    (dict(verify_cost=math.inf), ValueError, "verify_cost must be a finite number > 0, not inf"),
    (dict(draft_cost=math.nan), ValueError, "draft_cost must be a finite number > 0, not nan"),
    (dict(draft_cost="1"), TypeError, "draft_cost must be a finite number > 0, not '1'"),
    (dict(max_unverified=True), TypeError, "max_unverified must be an integer in 1..1024"),
    (dict(max_unverified=5000), ValueError, "max_unverified must be an integer in 1..1024"),
    (dict(greedy=1), TypeError, "greedy must be a bool, not 1"),
    (dict(progress=3), TypeError, "progress must be callable or None"),
])
def test_decode_rejects(kwargs, error, message):
    args = dict(n_tokens=5, policy=FixedPolicy(), rng=np.random.default_rng(0))
    args.update(kwargs)
    with pytest.raises(error, match=message):
        decode(Uniform(), Uniform(), [1], **args)


def test_decode_reports_progress():
    seen = []
    decode(Uniform(), Uniform(), [1], n_tokens=20, policy=FixedPolicy(),
           rng=np.random.default_rng(0), progress=seen.append)
    assert seen and seen == sorted(seen) and seen[-1] >= 20


def test_speculative_verification_rejects():
    p = np.full((3, 4), 0.25)
    q = np.full((2, 4), 0.25)
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="draft_tokens must be integer token ids"):
        verify_draft([1.5, 2.0], q, p, rng)
    with pytest.raises(TypeError, match="draft_tokens must be integer token ids"):
        verify_draft_greedy([True, False], p)
    bad = p.copy()
    bad[0, 0] = math.nan
    with pytest.raises(ValueError, match="target_probs must be finite probabilities"):
        verify_draft_greedy([1, 2], bad)
    with pytest.raises(ValueError, match="draft_probs must be finite probabilities"):
        verify_draft([1, 2], -q, p, rng)
