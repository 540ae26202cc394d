"""The synthetic decoding of ``ahasd claims`` (:class:`AcceptanceSource`): a run's measured
acceptance matches the set per-token acceptance within the stated tolerance, its entropies carry
a signal of the outcome, and a pre-verification agrees with the verification of the batch."""

import statistics

import pytest

from ahasd.sim.decoding.policies import FixedPolicy, make_policy
from ahasd.sim.system.runner import simulate
from ahasd.sim.system.sources import AcceptanceSource, Batch, prefix_rate


@pytest.mark.parametrize("a,k", [(0.4, 1), (0.4, 8), (0.73, 5), (0.9, 8), (0.0, 3), (1.0, 4)])
def test_prefix_rate_solves_the_prefix_sum(a, k):
    p = prefix_rate(a, k)
    assert 0 <= p <= 1
    assert sum(p ** j for j in range(1, k + 1)) == pytest.approx(a * k, abs=1e-9)
    if k == 1:
        assert p == pytest.approx(a)


@pytest.mark.parametrize("a", [0.4, 0.6, 0.8, 0.9])
@pytest.mark.parametrize("system,ablation", [("ahasd", "tvc"), ("npu-lpddr5", "tvc")])
def test_measured_acceptance_matches_a(a, system, ablation):
    r = simulate(system, "opt", "adaedl", ablation=ablation, tokens=1024, offload=True, seed=2,
                 acceptance=a)
    assert abs(r.acceptance_rate - a) <= AcceptanceSource.TOLERANCE
    assert r.acceptance_pair == f"synthetic:{a:g}"


def test_other_policies_are_calibrated_too():
    for policy in ("svip", "banditspec"):
        r = simulate("ahasd", "opt", policy, tokens=1024, offload=True, seed=0, acceptance=0.7)
        assert abs(r.acceptance_rate - 0.7) <= AcceptanceSource.TOLERANCE, policy


def _batches(a, n=400, seed=4):
    src = AcceptanceSource(a, FixedPolicy(k=6, max_len=6), seed=seed)
    out = []
    for i in range(n):
        toks, ents, _, _ = src.draft(i, [])
        b = Batch(i, 0, toks, ents)
        acc, _ = src.outcome(b, [])
        src.observe(len(toks), acc)
        out.append((ents, acc))
    return src, out


def test_entropy_signals_the_outcome():
    _, out = _batches(0.7)
    accepted = [h for ents, acc in out for h in ents[:acc]]
    rejected = [ents[acc] for ents, acc in out if acc < len(ents)]
    assert statistics.fmean(rejected) > statistics.fmean(accepted) + 1.0
    # the batch mean entropy (what the EDC sees) is higher for batches with a rejection
    full = [statistics.fmean(e) for e, acc in out if acc == len(e)]
    part = [statistics.fmean(e) for e, acc in out if acc < len(e)]
    assert statistics.fmean(part) > statistics.fmean(full)
    assert all(AcceptanceSource.H_LOW <= h <= AcceptanceSource.H_HIGH
               for e, _ in out for h in e)


def test_preverification_agrees_with_verification():
    src = AcceptanceSource(0.6, FixedPolicy(k=8, max_len=8), seed=9)
    for i in range(50):
        toks, ents, _, _ = src.draft(i, [])
        b = Batch(i, 0, toks, ents)
        pre = [src.outcome(b, [], length)[0] for length in range(1, 9)]
        full, _ = src.outcome(b, [])
        assert pre == [min(full, length) for length in range(1, 9)]


def test_reproducible_and_seeded():
    a = simulate("ahasd", "opt", "adaedl", tokens=128, seed=3, acceptance=0.8)
    b = simulate("ahasd", "opt", "adaedl", tokens=128, seed=3, acceptance=0.8)
    c = simulate("ahasd", "opt", "adaedl", tokens=128, seed=4, acceptance=0.8)
    assert a.as_dict() == b.as_dict() and a.output_tokens == b.output_tokens
    assert a.output_tokens != c.output_tokens


def test_bad_acceptance_is_one_line():
    for bad in (1.5, -0.1, "x", True):
        with pytest.raises((ValueError, TypeError)) as e:
            AcceptanceSource(bad, make_policy("adaedl"), seed=0)
        assert "acceptance must be a number in [0, 1]" in str(e.value)
