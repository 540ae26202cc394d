"""``ahasd bench queues --quick --json`` (moved from tests/bench/test_queues.py)."""

import json

from ahasd.cli import main


def test_cli_prints_json(capsys):
    assert main(["bench", "queues", "--quick", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["benches"]["queues"]
    assert set(figures["clocks"]) == {"1000/800", "800/1000"}
