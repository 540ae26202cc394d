"""``ahasd bench system --quick --json`` prints its figures."""

import json

from ahasd.cli import main


def test_bench_system_quick_json(capsys):
    assert main(["bench", "system", "--quick", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["benches"]["system"]
    assert d["runs"]["ahasd"]["simulated_tok_per_wall_s"] > 0
    accs = [p["acceptance_rate"] for p in d["pairs"].values()]
    assert min(accs) < 0.5 < 0.8 < max(accs)        # the pairs span the acceptance range
    assert all(p["entropy_acceptance_correlation"] < 0 for p in d["pairs"].values())
