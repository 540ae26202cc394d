"""GEMV bank RTL (scheduler + MAC lanes) against the golden GEMV, on the timing-checking bank model."""

import numpy as np
import pytest

from ahasd.hw.dram_port import Cmd
from ahasd.hw.gemv import GEMV
from ahasd.sim.blocks.gemv import gemv
from ahasd.spec.dram import DRAMConfig, weight_layout
from ahasd.tb import amaranth_sim
from ahasd.tb.dram_bank import DRAMError
from ahasd.tb.gemv_system import GEMVSystem

# Short timing so that refreshes and row switches happen often in a few hundred cycles.
FAST = DRAMConfig(t_rcd=5, t_rp=4, t_ras=9, t_ccd=2, t_rrd=2, t_faw=10, t_refi=150, t_rfc=20,
                  t_rfcpb=10, t_pbr2pbr=5, t_pbr2act=2, t_rl=4, row_bytes=64, burst_bytes=8,
                  n_banks=2, rows=16)
# The same timing on the platform's 16 banks (8 refresh pairs), tREFI 25 rows long as the
# defaults' 12 (3120 / (64 * 4)).
FAST16 = DRAMConfig(**{**FAST.__dict__, "n_banks": 16, "rows": 4, "t_refi": 400})


def simulate(config, jobs, *, ready_seed=None, max_n=64, max_m=64):
    """Run GEMVs ``jobs`` = [(W, x, base_row)] back to back; return results, commands, errors."""
    init = [0] * (config.rows * config.n_banks * config.bursts_per_row)
    for w, _, base in jobs:
        words = weight_layout(w, config.burst_bytes)
        start = base * config.bursts_per_row
        init[start:start + len(words)] = words
    dut = GEMVSystem(config=config, init=init, max_n=max_n, max_m=max_m)
    rng = np.random.default_rng(ready_seed)
    log = {"results": [], "cmds": [], "cycles": [], "dram_error": None}

    async def tb(ctx):
        for w, x, base in jobs:
            for v in x:
                ctx.set(dut.x_valid, 1)
                ctx.set(dut.x_data, int(v))
                await ctx.tick().until(dut.x_ready)
            ctx.set(dut.x_valid, 0)
            ctx.set(dut.m, w.shape[0])
            ctx.set(dut.n, w.shape[1])
            ctx.set(dut.base_row, base)
            ctx.set(dut.start, 1)
            await ctx.tick()
            ctx.set(dut.start, 0)
            assert ctx.get(dut.busy) and not ctx.get(dut.error)
            out = []
            for _ in range(20000):
                ready = 1 if ready_seed is None else int(rng.random() < 0.6)
                ctx.set(dut.o_ready, ready)
                if ready and ctx.get(dut.o_valid):
                    out.append(ctx.get(dut.o_data))
                cmd = ctx.get(dut.gemv.cmd)
                if cmd != Cmd.NOP:
                    log["cmds"].append(cmd)
                await ctx.tick()
                if not ctx.get(dut.busy):
                    break
            log["results"].append(np.array(out, dtype=np.int64))
            log["cycles"].append(ctx.get(dut.cycles))
        log["dram_error"] = ctx.get(dut.dram_error_code)
        log["reads"] = ctx.get(dut.reads)

    amaranth_sim.simulate(dut, tb)
    return log


def random_case(rng, m, n):
    w = rng.integers(-128, 128, size=(m, n))
    x = rng.integers(-128, 128, size=n)
    # Extremes: a full -128 row and column, and -128 * -128 products.
    w[0, :] = -128
    w[:, -1] = -128
    x[-1] = -128
    return w, x


@pytest.mark.parametrize("m, n, banks, refresh", [
    (13, 11, 2, "per_bank"), (8, 1, 2, "per_bank"), (1, 29, 2, "all_bank"), (21, 40, 1, "per_bank"),
    (17, 64, 4, "all_bank"), (17, 64, 4, "per_bank"), (23, 50, 16, "per_bank")])
def test_bit_exact_and_timing_clean(m, n, banks, refresh):
    config = DRAMConfig(**{**FAST.__dict__, "n_banks": banks, "refresh": refresh})
    rng = np.random.default_rng(m * 100 + n)
    w, x = random_case(rng, m, n)
    log = simulate(config, [(w, x, 1)])
    np.testing.assert_array_equal(log["results"][0], gemv(w, x))
    assert log["dram_error"] == DRAMError.NONE


@pytest.mark.parametrize("n", [1, 2, 3])
def test_one_burst_per_cycle(n):
    """At tCCD = 1 a burst lands in every cycle: a tile's first product reaches the accumulators
    in the cycle its predecessor's sums are resolved into the output buffer (n >= 2)."""
    config = DRAMConfig(**{**FAST.__dict__, "t_ccd": 1, "t_rrd": 1, "n_banks": 4})
    rng = np.random.default_rng(n)
    w, x = random_case(rng, 29, n)
    log = simulate(config, [(w, x, 1)])
    np.testing.assert_array_equal(log["results"][0], gemv(w, x))
    assert log["dram_error"] == DRAMError.NONE


def test_back_to_back_with_backpressure_and_refresh():
    rng = np.random.default_rng(7)
    jobs = [(*random_case(rng, 19, 37), 0), (*random_case(rng, 5, 23), 14)]
    for config, ref in ((FAST, Cmd.REFPB), (DRAMConfig(**{**FAST.__dict__,
                                                         "refresh": "all_bank"}), Cmd.REF)):
        log = simulate(config, jobs, ready_seed=3)
        for (w, x, _), y in zip(jobs, log["results"]):
            np.testing.assert_array_equal(y, gemv(w, x))
        assert log["dram_error"] == DRAMError.NONE
        assert log["cmds"].count(ref) >= 1
        # Rows of both banks were opened: the controller interleaves.
        assert log["cmds"].count(Cmd.ACT) >= 4


def hand_cycles(config, m, n):
    """Cycles of an m x n GEMV at one RD per tCCD from the first ACT, worked out from the
    timing alone (no refresh or row switch may cost a read slot):

    * cycle 1 is ``start``; the first ACT goes out in cycle 2, the first RD tRCD later;
    * the RDs of all ``ceil(m / B) * n`` bursts follow tCCD apart;
    * the last burst lands tRL after its RD; it is registered, its products a cycle later,
      they are added into the accumulators a cycle after that and resolved into the output
      buffer in the next, so the tile's results are in the buffer four cycles after landing
      and leave one per cycle (``m`` mod B of them, or B);
    * ``busy`` drops in the cycle after the last result, which the counter still counts.
    """
    lanes = config.burst_bytes
    bursts = -(-m // lanes) * n
    last_rd = 2 + config.t_rcd + config.t_ccd * (bursts - 1)
    last_out = last_rd + config.t_rl + 4 + ((m - 1) % lanes)
    return last_out + 1


@pytest.mark.parametrize("m, n", [(16, 200), (13, 11)])
def test_cycle_count_at_the_raw_rate(m, n):
    """On 16 banks with per-bank refresh the reads never stop: the cycle count of a GEMV that
    spans several tREFI is the one worked out by hand, with no refresh cost (an all-bank refresh
    costs at least tRFC per tREFI on the same GEMV)."""
    rng = np.random.default_rng(m + n)
    w, x = random_case(rng, m, n)
    log = simulate(FAST16, [(w, x, 0)], max_n=256)
    np.testing.assert_array_equal(log["results"][0], gemv(w, x))
    assert log["dram_error"] == DRAMError.NONE
    assert log["reads"] == -(-m // 8) * n           # every burst read exactly once
    # The scheduler refreshes pairs while the unit is idle (loading x): a REFpb just before
    # `start` may hold the first ACT back by up to tpbR2ACT; after that no cycle is lost.
    assert hand_cycles(FAST16, m, n) <= log["cycles"][0] <= (hand_cycles(FAST16, m, n)
                                                             + FAST16.t_pbr2act)
    if m * n > 1000:
        assert log["cmds"].count(Cmd.REFPB) >= 8 * (log["cycles"][0] // FAST16.t_refi)
        slow = simulate(DRAMConfig(**{**FAST16.__dict__, "refresh": "all_bank"}), [(w, x, 0)],
                        max_n=256)
        np.testing.assert_array_equal(slow["results"][0], gemv(w, x))
        assert slow["dram_error"] == DRAMError.NONE
        refreshes = slow["cmds"].count(Cmd.REF)
        assert refreshes >= 1
        assert slow["cycles"][0] >= hand_cycles(FAST16, m, n) + refreshes * FAST16.t_rfc
        assert slow["cycles"][0] > log["cycles"][0] + refreshes * FAST16.t_rfc - FAST16.t_pbr2act


def test_all_minus_128():
    w = np.full((9, 17), -128)
    x = np.full(17, -128)
    log = simulate(FAST, [(w, x, 0)])
    np.testing.assert_array_equal(log["results"][0], np.full(9, 17 * 16384))


def test_rejects_bad_start():
    dut = GEMV(config=FAST, max_n=16, max_m=16)

    async def tb(ctx):
        for v in (1, 2, 3):
            ctx.set(dut.x_stream.valid, 1)
            ctx.set(dut.x_stream.payload, v)
            await ctx.tick().until(dut.x_stream.ready)
        ctx.set(dut.x_stream.valid, 0)
        for m, n in ((0, 3), (4, 0), (4, 4), (17, 3)):  # n=4 > 3 loaded; m > max_m
            ctx.set(dut.m, m)
            ctx.set(dut.n, n)
            ctx.set(dut.start, 1)
            await ctx.tick()
            ctx.set(dut.start, 0)
            assert ctx.get(dut.error) and not ctx.get(dut.busy), (m, n)
        ctx.set(dut.m, 4)
        ctx.set(dut.n, 3)
        ctx.set(dut.start, 1)
        await ctx.tick()
        assert ctx.get(dut.busy) and not ctx.get(dut.error)

    amaranth_sim.simulate(dut, tb)


def test_parameter_errors():
    with pytest.raises(ValueError, match="n_banks must be a power of two, not 3"):
        GEMV(config=DRAMConfig(n_banks=3))
    with pytest.raises(ValueError, match="max_n must be a positive integer, not 0"):
        GEMV(max_n=0)
    with pytest.raises(ValueError, match="config must be a DRAMConfig"):
        GEMV(config={"t_rcd": 3})
    with pytest.raises(ValueError, match=r"t_refi must exceed n_pairs \* t_pbr2pbr = 576"):
        GEMV(config=DRAMConfig(t_refi=500, t_rfc=100))


def test_default_lpddr5_timing():
    """Default LPDDR5 timing (16 banks, per-bank refresh) and 2 KiB rows, long enough to include
    refreshes, at the cycle count worked out by hand."""
    config = DRAMConfig(burst_bytes=16, rows=1)
    rng = np.random.default_rng(11)
    w, x = random_case(rng, 20, 700)
    log = simulate(config, [(w, x, 0)], max_n=1024)
    np.testing.assert_array_equal(log["results"][0], gemv(w, x))
    assert log["dram_error"] == DRAMError.NONE
    assert Cmd.REFPB in log["cmds"]
    assert log["reads"] == 2 * 700
    assert log["cycles"][0] == hand_cycles(config, 20, 700)


@pytest.mark.slow
def test_verilated_matches_golden():
    """The Verilated path used by ``ahasd bench gemv``."""
    from ahasd.bench.gemv import run_verilated
    rng = np.random.default_rng(12)
    w, x = random_case(rng, 11, 45)
    y, cycles, info = run_verilated(FAST16, w, x, max_n=64, max_m=64)
    np.testing.assert_array_equal(y, gemv(w, x))
    assert info["reads"] == 2 * 45
    assert info["last_result_cycle"] <= cycles
    assert cycles == hand_cycles(FAST16, 11, 45)


def test_system_parameter_errors():
    with pytest.raises(ValueError, match="init has 3 bursts; the model stores 2"):
        GEMVSystem(config=DRAMConfig(rows=1, n_banks=1, row_bytes=64, burst_bytes=32),
                   init=[0, 0, 0])
    with pytest.raises(ValueError, match="n_banks must be a power of two, not 3"):
        GEMVSystem(config=DRAMConfig(rows=1, n_banks=3))
