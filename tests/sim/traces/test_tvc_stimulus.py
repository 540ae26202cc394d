"""ahasd.sim.traces.tvc.boundary_trace, its documented shape: it starts with one record below,
on and above the ratio saturation threshold (``cycles * 256 == length * 2**ratio_bits``, then
the delta), whenever the widths reach it; its other records are whole cycles per token."""

import pytest

from ahasd.sim.traces.tvc import boundary_trace
from ahasd.spec.tvc import TVCParams


def records(ops):
    return [op for op in ops if op["op"] == "record"]


@pytest.mark.parametrize("params, top", [
    (TVCParams(), 255),                           # (2**32 - 2) >> 24
    (TVCParams(ratio_bits=16, cycles_bits=9), 1),   # (511 - 1) >> 8: only length 1 reaches it
])
def test_it_starts_on_the_saturation_threshold(params, top):
    for seed in range(5):
        first = records(boundary_trace(5, seed=seed, params=params))[:3]
        shift = params.ratio_bits - 8
        assert [r["cycles"] - (r["length"] << shift) for r in first] == [-1, 0, 1]
        assert all(1 <= r["length"] <= top and r["table"] in ("pdct", "pvct") for r in first)


def test_no_threshold_records_when_the_widths_cannot_reach_it():
    # (255 - 1) >> 8 == 0: no length saturates within 8 cycle bits.
    params = TVCParams(ratio_bits=16, cycles_bits=8)
    ops = boundary_trace(50, seed=1, params=params)
    shift = params.ratio_bits - 8
    assert not any(r["cycles"] >= r["length"] << shift for r in records(ops))


def test_the_other_records_are_whole_cycles_per_token():
    params = TVCParams()
    whole = params.ratio_max >> 12
    for seed in range(3):
        rest = records(boundary_trace(400, seed=seed, params=params))[3:]
        assert len(rest) > 10
        for r in rest:
            assert r["cycles"] % r["length"] == 0 and r["cycles"] // r["length"] <= whole, r
