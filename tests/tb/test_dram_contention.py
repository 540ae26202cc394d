"""Two requesters on one rank: each streams at the raw rate alone, they share it together (the
arbiter is round-robin), every command stays legal, and bad set-ups are rejected."""

import pytest

from ahasd.spec.dram import DRAMConfig
from ahasd.tb.dram_contention import ContentionSystem, contention, measure_bandwidth, split_banks

FAST16 = DRAMConfig(t_rcd=5, t_rp=4, t_ras=9, t_ccd=2, t_rrd=2, t_faw=10, t_refi=400, t_rfc=20,
                    t_rfcpb=10, t_pbr2pbr=5, t_pbr2act=2, t_rl=4, row_bytes=64, burst_bytes=8,
                    n_banks=16, rows=2)


def test_alone_and_together():
    figures = contention(FAST16, cycles=1600)
    for case in ("pim", "host", "both"):
        assert figures[case]["error"] == "NONE", case
        assert figures[case]["refpb"] >= 8 * 1600 // FAST16.t_refi - 8, case
    other = {"pim": "host", "host": "pim"}
    for alone in ("pim", "host"):
        f = figures[alone]
        assert f[alone]["of_raw"] >= 0.97 and f[other[alone]]["reads"] == 0
        assert f[alone]["bytes_per_cycle"] == pytest.approx(f[alone]["reads"] * 8 / 1600)
    both = figures["both"]
    # One data bus: together at most the raw rate, shared about evenly.
    total = both["pim"]["of_raw"] + both["host"]["of_raw"]
    assert 0.95 <= total <= 1
    assert min(both["pim"]["of_raw"], both["host"]["of_raw"]) >= 0.4


def test_split_and_errors():
    assert split_banks(DRAMConfig()) == ((0, 1, 2, 3, 8, 9, 10, 11), (4, 5, 6, 7, 12, 13, 14, 15))
    assert split_banks(DRAMConfig(), 2) == ((0, 1, 8, 9), (2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14,
                                                           15))
    with pytest.raises(ValueError, match=r"pim_pairs must be an integer in 1..7"):
        split_banks(DRAMConfig(), 8)
    with pytest.raises(ValueError, match="config.refresh must be per_bank with two requesters"):
        ContentionSystem(config=DRAMConfig(rows=2, refresh="all_bank"))
    with pytest.raises(ValueError, match="pim_banks and host_banks must be disjoint"):
        ContentionSystem(config=DRAMConfig(rows=2), pim_banks=(0, 8), host_banks=(0, 8))
    with pytest.raises(ValueError, match="banks must hold whole refresh pairs"):
        ContentionSystem(config=DRAMConfig(rows=2), pim_banks=(0, 1), host_banks=(8, 9))
    with pytest.raises(ValueError, match="requesters must be among pim, host, not 'npu'"):
        measure_bandwidth(FAST16, cycles=10, requesters=("npu",))
