"""``ahasd bench tvc --quick``: runs end to end and reports measured figures."""

import pytest

from ahasd.bench.tvc import bench


@pytest.mark.slow
def test_bench_quick_reports_measured_latencies(capsys):
    figures = bench(json_output=True, quick=True)
    assert capsys.readouterr().out == ""
    assert figures["rtl_matches_golden"] is True
    assert figures["decisions"] == 500 and figures["records"] > 0
    # The specification's bound (at most 3 cycles), not a speed figure.
    assert figures["decision_latency_cycles"]["max"] <= 3
    assert figures["record_latency_cycles"]["min"] >= 1
    assert figures["golden_events_per_s"] > 0 and figures["rtl_events_per_s"] > 0
    assert 0 < figures["golden_replay_peak_mb"] < figures["rtl_replay_peak_mb"] < 1000
