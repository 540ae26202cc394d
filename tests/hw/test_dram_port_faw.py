"""The shared DRAM read scheduler (ahasd.hw.dram_port) where the activation window binds: short
rows make every other RD need an ACT, so the scheduler must issue ACTs as fast as tRRD and tFAW
allow (four in every tFAW window, never five) and the bank model sees no violation."""

import numpy as np

from ahasd.hw.dram_port import Cmd
from ahasd.spec.dram import DRAMConfig, weight_layout
from ahasd.tb import amaranth_sim
from ahasd.tb.dram_bank import DRAMError
from ahasd.tb.gemv_system import GEMVSystem, feed_and_start

# Two bursts per row: an ACT for every two RDs, one per 4 cycles wanted, one per 6 allowed.
FAW = DRAMConfig(t_rcd=5, t_rp=4, t_ras=9, t_ccd=2, t_rrd=2, t_faw=24, t_refi=400, t_rfc=20,
                 t_rfcpb=10, t_pbr2pbr=5, t_pbr2act=2, t_rl=4, row_bytes=16, burst_bytes=8,
                 n_banks=16, rows=4)


def act_cycles(config, m, n):
    rng = np.random.default_rng(3)
    w = rng.integers(-128, 128, size=(m, n))
    x = rng.integers(-128, 128, size=n)
    init = [0] * (config.rows * config.n_banks * config.bursts_per_row)
    words = weight_layout(w, config.burst_bytes)
    init[:len(words)] = words
    dut = GEMVSystem(config=config, init=init, max_n=64, max_m=64)
    log = {"acts": [], "out": []}

    async def tb(ctx):
        await feed_and_start(ctx, dut, x, m, n)
        for cycle in range(5000):
            if ctx.get(dut.o_valid):
                log["out"].append(ctx.get(dut.o_data))
            if ctx.get(dut.gemv.cmd) == Cmd.ACT and ctx.get(dut.gemv.cmd_grant):
                log["acts"].append(cycle)
            await ctx.tick()
            if not ctx.get(dut.busy):
                break
        log["error"] = ctx.get(dut.dram_error_code)

    amaranth_sim.simulate(dut, tb)
    assert log["out"] == list(w @ x)
    return log["acts"], log["error"]


def test_four_activations_in_every_faw_window():
    acts, error = act_cycles(FAW, 8, 48)
    assert error == DRAMError.NONE and len(acts) >= 20, (error, acts)
    in_window = [sum(a <= b < a + FAW.t_faw for b in acts) for a in acts]
    assert max(in_window) == 4
    # The first four go out before tFAW has passed, the fifth exactly tFAW after the first.
    assert acts[3] < FAW.t_faw and acts[4] - acts[0] == FAW.t_faw, acts[:12]
