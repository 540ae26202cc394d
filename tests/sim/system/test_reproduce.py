"""The quick grid into a folder: every file written, the headlines' table, byte-identical
summaries whatever runs the cells (moved from tests/sim/system/test_commands.py)."""

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
    first = (tmp_path / "summary.json").read_bytes()
    reproduce(tmp_path / "again", quick=True, jobs=2, max_files=40,
              plots=False)
    assert (tmp_path / "again" / "summary.json").read_bytes() == first
