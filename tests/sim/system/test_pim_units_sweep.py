"""The cross-layer sweep (issue 20 point 7): pim.units and placement against the PIM's added
area (units x the GEMV unit's mm² from the area flow, read from a saved result: no synthesis)."""

import csv
import json

import pytest

from ahasd.cli import main
from ahasd.sim.system.sweep import parse_axis, run_sweep


def test_units_sweep_writes_area_energy_and_the_plot(tmp_path):
    axes = [parse_axis("pim.units=16,64"), parse_axis("memory.placement=striped,partitioned")]
    run_sweep(axes, tmp_path, tokens=32, max_files=40, gemv_mm2=0.03)
    with open(tmp_path / "sweep.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4
    for r in rows:
        assert float(r["pim_added_mm2"]) == pytest.approx(int(r["pim.units"]) * 0.03)
        assert float(r["energy_per_token_mj"]) == pytest.approx(1 / float(r["tokens_per_mj"]))
    assert (tmp_path / "pim_units.png").stat().st_size > 0
    # placement changes the result: a draft on 2 of 16 ranks is slower than on all of them
    by = {(r["pim.units"], r["memory.placement"]): float(r["throughput_tok_s"]) for r in rows}
    assert by[("16", "partitioned")] < by[("16", "striped")]


def test_cli_reads_the_gemv_area_from_a_saved_area_json(tmp_path, capsys):
    saved = tmp_path / "gemv_area.json"
    saved.write_text(json.dumps({"blocks": [{"block": "gemv", "total_mm2": 0.05}],
                                 "anchors": None}))
    assert main(["sweep", "--axis", "pim.units=16,32", "--tokens", "16", "--jobs", "1",
                 "--area-json", str(saved), "--out", str(tmp_path / "out")]) == 0
    rows = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert [r["pim_added_mm2"] for r in rows] == [16 * 0.05, 32 * 0.05]
    assert (tmp_path / "out" / "pim_units.png").exists()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["sweep", "--axis", "pim.units=16", "--area-json", str(bad),
                 "--out", str(tmp_path / "o2")]) == 2
    assert "is not the JSON of `ahasd area gemv --json`" in capsys.readouterr().err
