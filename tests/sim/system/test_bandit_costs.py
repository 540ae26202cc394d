"""BanditSpec's cost model in the system runner (ahasd.sim.system.runner, documented there):
draft cost 1 per token, verify cost = one 4-token verification over one draft token (at 256
tokens of context) on the system's own timing."""

from types import SimpleNamespace

from ahasd.sim.decoding import golden
from ahasd.sim.system import runner


def test_bandit_costs_come_from_the_system_timing(monkeypatch):
    made = []
    monkeypatch.setattr(golden, "make_policy", lambda name, **params: made.append((name, params)))
    asked = []

    def verify(k, kv):
        asked.append(("verify", k, kv))
        return 3.0 * k + 1.0, 0.0

    def draft_token(kv):
        asked.append(("draft", kv))
        return 2.0, 0.0

    timing = SimpleNamespace(verify=verify, draft_token=draft_token)
    runner._policy("banditspec", None, 0, timing, None)
    assert made == [("banditspec", {"draft_cost": 1.0, "verify_cost": (3.0 * 4 + 1.0) / 2.0})]
    assert sorted(asked) == [("draft", 256), ("verify", 4, 256)]
