"""ahasd.sim.specla.costs.round_cost, put together as its docstring says: ``depth`` draft
steps, one target pass over the tree, and per mode the verification and the commit of
``accepted + 1`` tokens in every layer of the target and the draft."""

import pytest

from ahasd.sim.specla import costs
from ahasd.sim.specla.hardware import load_hardware

HW = load_hardware()


@pytest.mark.parametrize("mode", ["replay", "factor", "deferred"])
def test_a_round_is_the_sum_of_its_parts(mode):
    hw = next(iter(HW.values()))
    t, d, b = costs.GDN_1_3B, costs.GDN_0_4B, hw.state_bytes
    n, depth, accepted = 5, 4, 2.0
    a = accepted + 1
    verify = {"replay": costs.seq_verify, "factor": costs.tree_verify}
    commit = {"replay": costs.replay_commit, "factor": costs.factor_commit,
              "deferred": costs.factor_commit}
    if mode == "deferred":
        target_layer = costs.fused_deferred(t, a, n, b)
    else:
        target_layer = commit[mode](t, a, b) + verify[mode](t, n, b)
    expected = (costs.ar_token_cost(d, hw).scale(depth) + costs.forward_pass(t, n, hw)
                + target_layer.scale(t.n_layers) + commit[mode](d, a, b).scale(d.n_layers))
    got = costs.round_cost(t, d, hw, mode=mode, n_nodes=n, depth=depth, accepted=accepted)
    assert got == expected
    # The modes differ: each one's parts are its own.
    others = [costs.round_cost(t, d, hw, mode=o, n_nodes=n, depth=depth, accepted=accepted)
              for o in ("replay", "factor", "deferred") if o != mode]
    assert all(o != got for o in others)
