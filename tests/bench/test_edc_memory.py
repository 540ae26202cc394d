"""``ahasd bench edc --quick``: rates and replay memory are measured and reported."""

import pytest

from ahasd.bench.edc import bench


@pytest.mark.slow
def test_bench_quick_reports_speed_and_memory(capsys):
    figures = bench(json_output=False, quick=True)
    out = capsys.readouterr().out
    assert figures["rtl_matches_golden"] is True
    assert figures["golden_committed_events_per_s"] > 0 and figures["rtl_events_per_s"] > 0
    # Peak memory of `ahasd edc replay` (children included): the RTL path carries the model.
    assert 0 < figures["golden_replay_peak_mb"] < figures["rtl_replay_peak_mb"] < 1000
    assert "peak memory" in out and f"golden {figures['golden_replay_peak_mb']:.0f} MB" in out
