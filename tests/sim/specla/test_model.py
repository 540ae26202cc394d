"""The GDN language model: tree verification vs recurrent decoding, and greedy speculative
decoding that emits exactly the target's greedy output."""

import numpy as np
import pytest

from ahasd.sim.specla.model import GDNConfig, GDNModel
from ahasd.sim.specla.speculative import greedy, speculative_greedy


def close(a, b, tol=1e-12):
    return np.linalg.norm(np.asarray(a) - np.asarray(b)) <= tol * np.linalg.norm(b)


@pytest.mark.parametrize("mode", ["replay", "factor", "deferred"])
def test_tree_logits_equal_recurrent_decoding(mode):
    model = GDNModel(GDNConfig(n_layers=3, n_heads=3), seed=4)
    state = model.initial_state()
    for t in (5, 9, 1):
        _, state = model.step(state, t)
    tokens = [7, 2, 3, 11, 4, 8, 6]
    parents = [-1, 0, 1, 0, 3, 4, 2]
    logits, record = model.verify_tree(state, tokens, parents, mode=mode)
    for n in range(len(tokens)):
        path, p = [], n
        while p >= 0:
            path.append(p)
            p = parents[p]
        s = state
        for node in reversed(path):
            lg, s = model.step(s, tokens[node])
        assert close(logits[n], lg), n
    # Commit the path 0 -> 3 -> 4 and continue: same as decoding those tokens.
    committed = model.commit(state, record, [0, 3, 4])
    s = state
    for t in (7, 11, 4):
        _, s = model.step(s, t)
    assert close(model.step(committed, 10)[0], model.step(s, 10)[0])


def test_mode_is_checked():
    model = GDNModel()
    with pytest.raises(ValueError, match="mode must be one of replay, factor, deferred, not 'x'"):
        model.verify_tree(model.initial_state(), [1], [-1], mode="x")


@pytest.mark.parametrize("mode", ["replay", "factor", "deferred"])
@pytest.mark.parametrize("scale, branch", [(0.0, 1), (0.05, 2), (0.3, 1), (1.0, 3)])
def test_speculative_equals_target_greedy(mode, scale, branch):
    target = GDNModel(seed=1)
    draft = target.perturbed(scale, seed=5)
    prompt = [1, 2, 3]
    want = greedy(target, prompt, 48)
    got = speculative_greedy(target, draft, prompt, 48, depth=4, branch=branch, mode=mode)
    assert got.tokens == want
    if scale == 0.0:
        assert got.acceptance == 1.0 and got.rounds == 48 // 5 + (48 % 5 > 0)
    elif scale >= 0.3:
        # A perturbed draft sees both accepts and rejects.
        assert 0 < got.acceptance < 1 and 0 in got.accepted and max(got.accepted) > 0


def test_draft_perturbation_lowers_acceptance():
    target = GDNModel(seed=2)
    rates = [speculative_greedy(target, target.perturbed(s, seed=9), [4, 5], 60).acceptance
             for s in (0.02, 0.2, 1.0)]
    assert rates[0] > rates[1] > rates[2]
