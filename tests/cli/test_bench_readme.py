"""``ahasd bench gemv --readme FILE`` rewrites the README's generated GEMV table from the bench's
figures (here a saved run, monkeypatched in: no Verilator build); a bench without a README table,
or a file without the section, is refused before any work."""

import json
from pathlib import Path

import pytest

from ahasd.cli import main

SAVED = json.loads((Path(__file__).parent / "data" / "saved_benches.json").read_text(encoding="utf-8"))
SECTION = "<!-- gemv: begin (generated) -->\nold\n<!-- gemv: end -->\n"


@pytest.fixture
def gemv_runs(monkeypatch):
    calls = []

    def bench(json_output=False, quick=False):
        calls.append(quick)
        return SAVED["gemv"]
    monkeypatch.setattr("ahasd.bench.gemv.bench", bench)
    return calls


def test_gemv_table_written(tmp_path, capsys, gemv_runs):
    readme = tmp_path / "README.md"
    readme.write_text("before\n" + SECTION + "after\n", encoding="utf-8")
    assert main(["bench", "gemv", "--readme", str(readme), "--json"]) in (0, None)
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("before\n<!-- gemv: begin (generated) -->\n") and text.endswith(
        "<!-- gemv: end -->\nafter\n")
    case = SAVED["gemv"]["cases"][0]
    row = next(line for line in text.splitlines() if line.startswith(f"| {case['layer']} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # written out independently: slice, B, tCCD, cycles, reads, refreshes, both efficiencies
    assert cells == [case["layer"], f"{case['m']}x{case['n']}", str(case["burst_bytes"]), str(case["t_ccd"]),
                     f"{case['cycles']:,}", f"{case['reads']:,}", str(case["refpb"] + case["refab"]),
                     "%.4f" % case["efficiency"], "%.4f" % case["efficiency_raw"]]
    assert "old" not in text and gemv_runs == [False]


def test_refused_before_work(tmp_path, capsys, gemv_runs):
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n", encoding="utf-8")
    assert main(["bench", "gemv", "--readme", str(readme)]) == 2
    assert "--readme" in capsys.readouterr().err
    readme.write_text(SECTION, encoding="utf-8")
    assert main(["bench", "edc", "--readme", str(readme)]) == 2
    err = capsys.readouterr().err
    assert "bench edc has no README table" in err and "gemv" in err
    assert gemv_runs == [] and readme.read_text(encoding="utf-8") == SECTION
