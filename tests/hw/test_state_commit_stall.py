"""State commit with its consumer stalled for long stretches: the read scheduler must stop at
the output FIFO's room, so no word is lost or duplicated (bit-exact against the fixed-point
mirror, timing-clean on the bank model). The random-ready test of test_state_commit.py never
holds ready low long enough to fill the FIFO."""

import numpy as np
from amaranth.sim import Simulator

from ahasd.sim.specla.fixed import commit_fixed, load_sequence, state_from_bursts, state_layout
from ahasd.spec.dram import DRAMConfig
from ahasd.tb.dram_bank import DRAMError
from ahasd.tb.state_commit_system import StateCommitSystem

#: Cycles the commit may take (it needs 142 at these stalls).
LIMIT = 1000

CONFIG = DRAMConfig(t_rcd=5, t_rp=4, t_ras=9, t_ccd=2, t_rrd=2, t_faw=10, t_refi=150, t_rfc=20,
                    t_rfcpb=10, t_pbr2pbr=5, t_pbr2act=2, t_rl=4, row_bytes=64, burst_bytes=8,
                    n_banks=2, rows=8)


def _stalled_ready(cycle):
    """Low for 60 cycles out of every 80: the FIFO fills, then drains in bursts."""
    return cycle % 80 >= 60


def test_long_stalls_lose_nothing():
    d_k, d_v, rank, base = 8, 8, 3, 1
    rng = np.random.default_rng(5)
    S = rng.integers(-32768, 32768, (d_k, d_v))
    k = rng.integers(-32768, 32768, (rank, d_k))
    u = rng.integers(-32768, 32768, (rank, d_v))
    w = rng.integers(0, 1 << 16, rank)
    P = int(rng.integers(0, 1 << 16))
    init = [0] * (CONFIG.rows * CONFIG.n_banks * CONFIG.bursts_per_row)
    words = state_layout(S, CONFIG.burst_bytes)
    init[base * CONFIG.bursts_per_row:base * CONFIG.bursts_per_row + len(words)] = words
    dut = StateCommitSystem(config=CONFIG, init=init, d_k=d_k, d_v=d_v, max_rank=4)
    out = {"words": []}

    async def tb(ctx):
        for kind, t, index, data in load_sequence(P, k, w, u, lanes=dut.unit.lanes):
            ctx.set(dut.f__valid, 1)
            for n, value in enumerate(dut.factor_words(kind, t, index, data)):
                ctx.set(getattr(dut, f"f__payload{n}"), value)
            await ctx.tick()
        ctx.set(dut.f__valid, 0)
        ctx.set(dut.rank, rank)
        ctx.set(dut.base_row, base)
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        for cycle in range(LIMIT):
            ready = _stalled_ready(cycle)
            ctx.set(dut.o_stream__ready, ready)
            if ready and ctx.get(dut.o_stream__valid):
                out["words"].append(dut.join(ctx.get(getattr(dut, f"o_stream__payload{i}"))
                                             for i in range(dut.words)))
            await ctx.tick()
            if not ctx.get(dut.busy):
                break
        out["error"] = ctx.get(dut.dram_error_code)
        out["cycles"] = cycle

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
    assert out["cycles"] < LIMIT - 1, "the commit never ended"
    assert len(out["words"]) == d_k * d_v * 2 // CONFIG.burst_bytes
    got = state_from_bursts(out["words"], d_k, d_v, CONFIG.burst_bytes)
    np.testing.assert_array_equal(got, commit_fixed(S, P, k, w, u))
    assert out["error"] == DRAMError.NONE
