"""``ahasd bench queues`` runs and its figures are the RTL's design properties (simulated cycles,
not wall-clock time): full throughput without stalls, a one-cycle GTS switch."""

import pytest

from ahasd.bench.queues import bench


def test_bench_figures_quick():
    figures = bench(json_output=True, quick=True)
    for clocks in figures["clocks"].values():
        for q in clocks["queues"].values():
            # One descriptor per cycle of the slower clock: the slower side is never idle (within
            # the one-edge quantisation of a 300-descriptor window).
            assert max(q["per_write_cycle"], q["per_read_cycle"]) == pytest.approx(1.0, abs=0.01)
            assert 0 < q["first_latency_read_cycles"] < 5
        assert clocks["squash"]["pim_cycles_to_producer"] <= 4
    g = figures["gts"]
    assert g["idle_to_draft_cycles"] == 1 and g["draft_to_preverify_cycles"] == 1
    assert g["request_in_switch_cycle_waits"] == 1 and g["switches"] == 3  # draft, pre, draft
