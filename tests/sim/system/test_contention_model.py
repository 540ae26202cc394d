"""The system simulator's memory-sharing model (ahasd.sim.system.memory) against the cycle-level
two-requester bank model (ahasd.tb.dram_contention: the PIM's read scheduler and a host read
stream on one 16-bank rank): each requester's effective bandwidth alone and together agrees within
10 % on 7 mixes (two timing sets; the host unpaced or asking for 1/2 .. 1/8 of the raw rate)."""

import pytest

from ahasd.sim.system.config import load_config
from ahasd.sim.system.memory import dram_config, predict, rank_efficiency, slot_shares
from ahasd.spec.dram import named_config
from ahasd.tb.dram_contention import measure_bandwidth, split_banks

CYCLES = 3000
#: (timing set, host period in cycles or None: unpaced)
MIXES = [("jedec", None), ("jedec", 16), ("authors", None), ("authors", 8), ("authors", 12),
         ("authors", 16), ("authors", 32)]


_PIM_ALONE: dict[str, float] = {}


def measured(name, period, cache=_PIM_ALONE):
    """Shares of the raw rate: pim alone, host alone, both (the PIM-alone run once per set)."""
    config = named_config(name, rows=2)
    pim, host = split_banks(config)

    def run(requesters, period):
        f = measure_bandwidth(config, cycles=CYCLES, requesters=requesters, pim_banks=pim,
                              host_banks=host, host_period=period)
        assert f["error"] == "NONE"
        return f["pim"]["of_raw"], f["host"]["of_raw"]
    if name not in cache:
        cache[name] = run(("pim",), None)[0]
    return {"pim": cache[name], "host": run(("host",), period)[1],
            "both": run(("pim", "host"), period)}


@pytest.mark.parametrize("name,period", MIXES)
def test_model_within_10_percent_of_the_bank_model(name, period):
    config = named_config(name, rows=2)
    model = predict(config, config.refresh_pairs // 2,
                    1.0 if period is None else config.t_ccd / period)
    got = measured(name, period)
    assert model["pim"] == pytest.approx(got["pim"], rel=0.10)
    assert model["host"] == pytest.approx(got["host"], rel=0.10)
    for m, g in zip(model["both"], got["both"]):
        assert m == pytest.approx(g, rel=0.10)


def test_shares_by_hand():
    # round-robin, max-min fair: below half, a requester gets what it asks; the other the rest
    assert slot_shares(1.0, 0.25, 1.0) == (0.75, 0.25)
    assert slot_shares(1.0, 1.0, 1.0) == (0.5, 0.5)
    assert slot_shares(0.3, 1.0, 0.9) == (pytest.approx(0.3), pytest.approx(0.6))
    # the activation window binds on short rows: 2 bursts per row, 4 ACTs per tFAW = 64 cycles
    short = named_config("authors", rows=2, row_bytes=64)
    assert rank_efficiency(short, 4) == pytest.approx(2 * 4 * 4 / 64)
    # one refresh pair: the pair's refresh (tRFCpb + tRP + tRCD) every tREFI stops it
    jedec = named_config("jedec", rows=2)
    assert rank_efficiency(jedec, 1) == pytest.approx(1 - (112 + 32 + 32) / 3120)
    assert rank_efficiency(dram_config(load_config().pim), 4) == 1.0
    # the command bus binds only at tCCD 1 (a RD every cycle leaves no slot for ACT / PRE)
    tight = named_config("jedec", rows=2, t_ccd=1, t_rrd=1, t_faw=4)
    assert rank_efficiency(tight, 4) == pytest.approx(1 / (1 + 2 / 64))
