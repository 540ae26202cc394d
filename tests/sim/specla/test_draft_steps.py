"""ahasd.sim.specla.speculative: a draft tree of ``depth`` costs ``depth`` draft steps per branch
chain (the root step, then one per deeper level), as the round cost model counts them
(ahasd.sim.specla.costs.round_cost: ``depth`` draft steps)."""

import pytest

from ahasd.sim.specla import speculative
from ahasd.sim.specla.model import GDNConfig, GDNModel


@pytest.mark.parametrize("depth, branch", [(1, 1), (4, 1), (3, 2)])
def test_draft_steps_per_round(depth, branch):
    draft = GDNModel(GDNConfig(n_layers=1, n_heads=1), seed=2)
    calls = []
    step = draft.step

    def counting(state, token):
        calls.append(token)
        return step(state, token)

    draft.step = counting
    state = draft.initial_state()
    tokens, parents = speculative._propose(draft, state, 5, depth, branch)
    assert len(tokens) == 1 + depth * branch
    assert len(calls) == 1 + branch * (depth - 1)
