"""Drafting policies: each stop rule at its threshold, online adaptation, the bandit, the predictor."""

import math

import numpy as np
import pytest

from ahasd.sim.decoding.policies import (
    AcceptancePredictor,
    AdaEDLPolicy,
    BanditSpecPolicy,
    DraftStep,
    FixedPolicy,
    SpecDecPPPolicy,
    SVIPPolicy,
    make_policy,
)


def step(entropy=1.0, q=0.5, position=1):
    return DraftStep(position=position, entropy=entropy, q=q)


def test_fixed():
    p = FixedPolicy(k=3)
    assert [p.stop(step(position=i)) for i in (1, 2, 3)] == [False, False, True]


def test_svip_threshold():
    p = SVIPPolicy(h=0.6)
    h_stop = 0.6 ** 2 / 0.15      # sqrt(0.15 H) > h  <=>  H > h^2 / 0.15
    assert not p.stop(step(entropy=h_stop * 0.999))
    assert p.stop(step(entropy=h_stop * 1.001))


def test_adaedl_threshold_and_adaptation():
    p = AdaEDLPolicy(gamma=0.15, lam=0.4, target=0.6, eta=0.1, beta=0.5)
    h_stop = (1 - 0.4) ** 2 / 0.15  # 1 - sqrt(gamma H) < lambda  <=>  H > (1 - lambda)^2 / gamma
    assert not p.stop(step(entropy=h_stop * 0.999)) and p.stop(step(entropy=h_stop * 1.001))
    p.observe(4, 0)                 # acceptance far below target: lambda rises (stop earlier)
    assert p.lam > 0.4
    lam = p.lam
    for _ in range(20):
        p.observe(4, 4)             # acceptance above target: lambda falls (draft longer)
    assert p.lam < lam
    assert 0 <= p.lam <= 1


def test_svip_does_not_stop_exactly_at_the_threshold():
    h = math.sqrt(0.15 * 6.0)      # the rule is strict: sqrt(0.15 H) > h
    assert not SVIPPolicy(h=h).stop(step(entropy=6.0))
    assert SVIPPolicy(h=h).stop(step(entropy=math.nextafter(6.0, 7.0)))


def test_adaedl_threshold_is_strict():
    p = AdaEDLPolicy(gamma=0.25, lam=0.5)
    assert not p.stop(step(entropy=1.0))    # 1 - sqrt(0.25) = 0.5, not < 0.5
    assert p.stop(step(entropy=1.0 + 1e-9))


def test_adaedl_update_at_non_symmetric_values():
    """The exact numbers of one update: ema keeps beta of its old value, lambda moves by eta
    times (target - ema); an unverified batch (0 drafted) changes nothing."""
    p = AdaEDLPolicy(lam=0.4, target=0.6, eta=0.1, beta=0.8)
    assert p.ema == 0.6
    p.observe(4, 1)                 # rate 0.25
    assert p.ema == pytest.approx(0.8 * 0.6 + 0.2 * 0.25)            # 0.53
    assert p.lam == pytest.approx(0.4 + 0.1 * (0.6 - 0.53))          # 0.407
    p.observe(5, 5)                 # rate 1
    assert p.ema == pytest.approx(0.8 * 0.53 + 0.2 * 1.0)            # 0.624
    assert p.lam == pytest.approx(0.407 + 0.1 * (0.6 - 0.624))       # 0.4046
    before = (p.ema, p.lam)
    p.observe(0, 0)
    assert (p.ema, p.lam) == before
    assert p.params()["lambda0"] == 0.4 and p.params()["beta"] == 0.8


def test_adaedl_lambda_is_clipped_to_the_unit_interval():
    high = AdaEDLPolicy(lam=0.95, target=1.0, eta=1.0, beta=0.8)
    high.observe(4, 0)              # ema 0.8: lambda 0.95 + 0.2 -> 1
    assert high.lam == 1.0
    low = AdaEDLPolicy(lam=0.05, target=0.0, eta=1.0, beta=0.8)
    low.observe(1, 1)               # ema 0.2: lambda 0.05 - 0.2 -> 0
    assert low.lam == 0.0


def test_specdecpp_stops_when_a_rejection_becomes_likely():
    pred = AcceptancePredictor([math.log(0.8 / 0.2), 0, 0, 0, 0])  # predicts 0.8 for every token
    p = SpecDecPPPolicy(predictor=pred, h=0.5)
    p.begin()
    # 1 - 0.8^n: 0.2, 0.36, 0.488, 0.59 -> stop at the 4th token
    assert [p.stop(step(position=i)) for i in (1, 2, 3, 4)] == [False, False, False, True]
    p.begin()
    assert not p.stop(step())


def test_predictor_learns_that_entropy_lowers_acceptance():
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(300):
        H = rng.uniform(0, 6, size=4).tolist()
        q = rng.uniform(0.05, 0.9, size=4).tolist()
        accept = [1 / (1 + math.exp(h - 3)) for h in H]     # the true acceptance probability
        p = [a * qq for a, qq in zip(accept, q)]              # min(1, p/q) = accept
        batches.append({"entropy": H, "q": q, "p": p, "tokens": [0] * 4})
    pred = AcceptancePredictor.fit_batches(batches)
    assert pred.weights[1] < -0.5
    assert pred.predict(step(entropy=0.5)) > 0.8 > 0.2 > pred.predict(step(entropy=5.5))


def test_banditspec_tries_every_arm_then_exploits_the_best():
    p = BanditSpecPolicy(arms=(1, 2, 4, 8), draft_cost=1.0, verify_cost=4.0, c=0.2)
    played = []
    for _ in range(200):
        p.begin()
        k = p.current
        played.append(k)
        accepted = 4 if k >= 4 else k     # 4 tokens are always right, never more
        p.observe(k, accepted)
    assert sorted(played[:4]) == [1, 2, 4, 8]
    # reward (acc + 1) / (k + 4): k=4 -> 5/8 is best
    assert played[-50:].count(4) > 40
    stops = [p.stop(step(position=i)) for i in range(1, p.current + 1)]
    assert stops[-1] and not any(stops[:-1])


@pytest.mark.parametrize("call, message", [
    (lambda: FixedPolicy(k=0), "k must be a positive integer, not 0"),
    (lambda: FixedPolicy(min_len=0), "min_len must be a positive integer, not 0"),
    (lambda: FixedPolicy(min_len=5, max_len=3), "min_len must be <= max_len, not 5 > 3"),
    (lambda: SVIPPolicy(h=-1), "h must be a positive number, not -1"),
    (lambda: SpecDecPPPolicy(h=1.5), r"h must be a number in \[0, 1\], not 1.5"),
    (lambda: AdaEDLPolicy(gamma=0), "gamma must be a positive number, not 0"),
    (lambda: BanditSpecPolicy(arms=(9,)), r"arms must hold an integer within \[min_len, max_len\] = \[1, 8\]"),
    (lambda: make_policy("greedyish"), "policy must be one of fixed, specdecpp, svip, adaedl, "
                                       "banditspec, not 'greedyish'"),
    (lambda: AcceptancePredictor([1, 2]), r"weights must have shape \(5,\)"),
    (lambda: AcceptancePredictor.fit_batches([]), "no verified batch"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
