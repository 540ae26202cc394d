"""The quick grid into a folder: every file written, the headlines' table, byte-identical
summaries whatever runs the cells (moved from tests/sim/system/test_commands.py)."""

import csv
import json

from ahasd.sim.system.reproduce import reproduce


def test_reproduce_quick(tmp_path):
    h, _ = reproduce(tmp_path, quick=True, jobs=1, max_files=40)
    for name in ("grid.csv", "grid.json", "summary.json", "summary.md", "ablation.png",
                 "ahasd_vs_specpim.png", "idle.png", "timeline.png", "round_breakdown.png",
                 "vs_npu_lpddr5.png", "energy_breakdown.png", "sensitivity.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    md = (tmp_path / "summary.md").read_text()
    assert "| throughput vs GPU-only (max) |" in md and "| 4.2 |" in md
    assert h["errors"] == []
    # every cell over the quick grid's 3 seeds: one CSV line per run, one JSON row per cell
    assert h["n_seeds"] == 3 and h["seeds"] == [0, 1, 2]
    with (tmp_path / "grid.csv").open() as f:
        runs = list(csv.DictReader(f))
    rows = json.loads((tmp_path / "grid.json").read_text())["rows"]
    assert len(runs) == 3 * len(rows) and {r["seed"] for r in runs} == {"0", "1", "2"}
    row = rows[0]
    mine = [float(r["throughput_tok_s"]) for r in runs
            if (r["system"], r["policy"], r["ablation"], r["acceptance_pair"]) ==
            (row["cell"]["system"], row["cell"]["policy"], row["cell"]["ablation"],
             row["cell"]["acceptance_pair"])]
    assert row["per_seed"]["throughput_tok_s"] == mine
    assert abs(row["throughput_tok_s"] - sum(mine) / 3) < 1e-9 * row["throughput_tok_s"]
    assert row["intervals"]["throughput_tok_s"]["n_seeds"] == 3
    iv = h["intervals"]["vs_npu-lpddr5"]["throughput"]["mean"]
    assert iv["ci95_low"] <= h["vs_npu-lpddr5"]["throughput"]["mean"] <= iv["ci95_high"]
    assert "| headline | ours | paper | ours/paper | significant |" in md
    first = (tmp_path / "summary.json").read_bytes()
    reproduce(tmp_path / "again", quick=True, jobs=2, max_files=40,
              plots=False)
    assert (tmp_path / "again" / "summary.json").read_bytes() == first
