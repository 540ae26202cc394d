"""State-commit RTL against the fixed-point mirror, on the timing-checking bank model (Amaranth
simulator)."""

import inspect

import numpy as np
import pytest
from amaranth.sim import Simulator

from ahasd.hw.dram_port import Cmd
from ahasd.hw.state_commit import KEY_LATENCY, CommitLane, KeyScale, StateCommit
from ahasd.sim.specla.fixed import (
    K_FRAC,
    S_FRAC,
    U_FRAC,
    W_FRAC,
    commit_fixed,
    load_sequence,
    quantise,
    state_from_bursts,
    state_layout,
)
from ahasd.spec.dram import DRAMConfig
from ahasd.tb.dram_bank import DRAMError
from ahasd.tb.state_commit_system import StateCommitSystem

# Short timing so that refreshes and row switches happen often in a few hundred cycles.
FAST = DRAMConfig(t_rcd=5, t_rp=4, t_ras=9, t_ccd=2, t_rrd=2, t_faw=10, t_refi=150, t_rfc=20,
                  t_rfcpb=10, t_pbr2pbr=5, t_pbr2act=2, t_rl=4, row_bytes=64, burst_bytes=8,
                  n_banks=2, rows=8)


def random_commit(rng, d_k, d_v, rank):
    """Fixed-point inputs of a commit, extremes included."""
    S = rng.integers(-32768, 32768, (d_k, d_v))
    k = rng.integers(-32768, 32768, (rank, d_k))
    u = rng.integers(-32768, 32768, (rank, d_v))
    w = rng.integers(0, 1 << 16, rank)
    P = int(rng.integers(0, 1 << 16))
    if rank:
        k[0, 0], u[0, 0], w[0] = -32768, -32768, (1 << 16) - 1
    return S, P, k, w, u


def simulate(config, jobs, *, d_k, d_v, max_rank, ready_seed=None, overlap=False):
    """Run commits ``jobs`` = [(S, P, k, w, u, base_row)] back to back; return the states read
    out, the DRAM error code and the commands. ``overlap``: each commit's factors are loaded
    while the one before streams (from its start on), else while the unit is idle."""
    init = [0] * (config.rows * config.n_banks * config.bursts_per_row)
    for S, *_, base in jobs:
        words = state_layout(S, config.burst_bytes)
        init[base * config.bursts_per_row:base * config.bursts_per_row + len(words)] = words
    dut = StateCommitSystem(config=config, init=init, d_k=d_k, d_v=d_v, max_rank=max_rank)
    rng = np.random.default_rng(ready_seed)
    log = {"states": [], "cmds": [], "cycles": [], "loads_while_busy": 0}
    loads = [load_sequence(P, k, w, u, lanes=dut.unit.lanes) for _S, P, k, w, u, _ in jobs]

    def offer(ctx, word):
        ctx.set(dut.f__valid, word is not None)
        if word is not None:
            kind, t, index, data = word
            for n, value in enumerate(dut.factor_words(kind, t, index, data)):
                ctx.set(getattr(dut, f"f__payload{n}"), value)
            assert ctx.get(dut.f__ready)

    async def tb(ctx):
        pending = list(loads[0])
        for n, (*_, w, _u, base) in enumerate(jobs):
            while pending:                       # what is left of this commit's loads
                offer(ctx, pending.pop(0))
                await ctx.tick()
            offer(ctx, None)
            ctx.set(dut.rank, len(w))
            ctx.set(dut.base_row, base)
            ctx.set(dut.start, 1)
            await ctx.tick()
            ctx.set(dut.start, 0)
            assert ctx.get(dut.busy) and not ctx.get(dut.error)
            pending = list(loads[n + 1]) if n + 1 < len(jobs) else []
            words = []
            for _ in range(50000):
                offer(ctx, pending.pop(0) if overlap and pending else None)
                if overlap and ctx.get(dut.f__valid):
                    log["loads_while_busy"] += 1
                ready = 1 if ready_seed is None else int(rng.random() < 0.5)
                ctx.set(dut.o_stream__ready, ready)
                if ready and ctx.get(dut.o_stream__valid):
                    words.append(dut.join(ctx.get(getattr(dut, f"o_stream__payload{i}"))
                                          for i in range(dut.words)))
                cmd = ctx.get(dut.unit.cmd)
                if cmd != Cmd.NOP:
                    log["cmds"].append(cmd)
                await ctx.tick()
                if not ctx.get(dut.busy):
                    break
            offer(ctx, None)
            log["cycles"].append(ctx.get(dut.cycles))
            log["states"].append(state_from_bursts(words, d_k, d_v, config.burst_bytes)
                                 if len(words) == d_k * d_v * 2 // config.burst_bytes else words)
        log["dram_error"] = ctx.get(dut.dram_error_code)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
    return log


@pytest.mark.parametrize("d_k, d_v, max_rank, rank, banks, refresh", [
    (8, 8, 4, 4, 2, "per_bank"), (6, 12, 4, 1, 2, "all_bank"), (8, 4, 3, 0, 1, "per_bank"),
    (5, 16, 5, 3, 4, "per_bank"), (16, 16, 4, 2, 16, "per_bank"), (16, 16, 4, 2, 16, "all_bank")])
def test_bit_exact_and_timing_clean(d_k, d_v, max_rank, rank, banks, refresh):
    config = DRAMConfig(**{**FAST.__dict__, "n_banks": banks, "refresh": refresh})
    rng = np.random.default_rng(d_k * 100 + d_v + rank)
    S, P, k, w, u = random_commit(rng, d_k, d_v, rank)
    log = simulate(config, [(S, P, k, w, u, 1)], d_k=d_k, d_v=d_v, max_rank=max_rank)
    np.testing.assert_array_equal(log["states"][0], commit_fixed(S, P, k, w, u))
    assert log["dram_error"] == DRAMError.NONE


@pytest.mark.parametrize("refresh, ref", [("per_bank", Cmd.REFPB), ("all_bank", Cmd.REF)])
def test_back_to_back_backpressure_refresh_and_float_path(refresh, ref):
    """Two commits (the second of a real GDN path, quantised) with a random ready, in both
    refresh modes."""
    rng = np.random.default_rng(5)
    first = random_commit(rng, 16, 16, 4)
    S0 = rng.uniform(-1, 1, (16, 16))
    kf = rng.normal(size=(3, 16))
    kf /= np.linalg.norm(kf, axis=1, keepdims=True)
    second = (quantise(S0, S_FRAC), int(quantise(0.6, W_FRAC, signed=False)),
              quantise(kf, K_FRAC), quantise([0.6 / 0.8, 0.6 / 0.9, 1.0], W_FRAC, signed=False),
              quantise(rng.uniform(-1, 1, (3, 16)), U_FRAC))
    jobs = [(*first, 0), (*second, 8)]
    config = DRAMConfig(**{**FAST.__dict__, "refresh": refresh})
    log = simulate(config, jobs, d_k=16, d_v=16, max_rank=4, ready_seed=3)
    for job, got in zip(jobs, log["states"]):
        np.testing.assert_array_equal(got, commit_fixed(*job[:5]))
    assert log["dram_error"] == DRAMError.NONE
    assert log["cmds"].count(ref) >= 1 and log["cmds"].count(Cmd.ACT) >= 4


def test_loads_overlap_streaming():
    """Three commits, each one's factors loaded while the one before streams (into the other
    factor bank): every state bit-exact, so neither bank disturbed the other."""
    rng = np.random.default_rng(17)
    jobs = [(*random_commit(rng, 8, 16, rank), base) for rank, base in ((4, 0), (2, 4), (3, 8))]
    config = DRAMConfig(**{**FAST.__dict__, "n_banks": 4})
    log = simulate(config, jobs, d_k=8, d_v=16, max_rank=4, overlap=True)
    for job, got in zip(jobs, log["states"]):
        np.testing.assert_array_equal(got, commit_fixed(*job[:5]))
    # All loads of the second and third commits went in while the unit was busy.
    assert log["loads_while_busy"] == sum(len(load_sequence(*job[1:5], lanes=4))
                                          for job in jobs[1:])
    assert log["dram_error"] == DRAMError.NONE


def test_rejects_rank_above_max():
    dut = StateCommit(config=FAST, d_k=4, d_v=4, max_rank=4)

    async def tb(ctx):
        ctx.set(dut.rank, 5)
        ctx.set(dut.start, 1)
        await ctx.tick()
        assert ctx.get(dut.error) and not ctx.get(dut.busy)
        ctx.set(dut.rank, 4)
        await ctx.tick()
        assert ctx.get(dut.busy) and not ctx.get(dut.error) and ctx.get(dut.f.ready)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()


def test_parameter_errors():
    with pytest.raises(ValueError, match="d_v must be a multiple of 16 .*, not 24"):
        StateCommit(d_v=24)
    with pytest.raises(ValueError, match="max_rank must be an integer >= 1, not 0"):
        StateCommit(max_rank=0)
    with pytest.raises(ValueError, match="n_banks must be a power of two, not 3"):
        StateCommit(config=DRAMConfig(n_banks=3))
    with pytest.raises(ValueError, match=r"a 64x64 state needs 256 bursts; the DRAM has 8"):
        StateCommit(config=DRAMConfig(rows=1, n_banks=1, row_bytes=256), d_k=64, d_v=64)
    # Defaults: real head sizes, A up to 16 (read from the signature: an unelaborated
    # component would warn when collected).
    defaults = inspect.signature(StateCommit).parameters
    assert [defaults[n].default for n in ("d_k", "d_v", "max_rank")] == [128, 128, 16]


def test_registered_block_lints_clean_small(tmp_path):
    """Verilator lint (-Wall, the documented waivers) of the registered block in a small
    configuration: every construct of the default (two factor banks, key scalings, carry-save
    lanes, the scheduler), two lanes of rank 2 (seconds, not the default's minutes)."""
    from ahasd.hw.blocks import BLOCKS
    from ahasd.synth.export import write_verilog
    assert BLOCKS["state_commit"] == "ahasd.hw.state_commit:StateCommit"
    path = write_verilog("state_commit", tmp_path, params={
        "config": DRAMConfig(burst_bytes=4, row_bytes=256, rows=2), "d_k": 8, "d_v": 8,
        "max_rank": 2})
    assert "module state_commit(" in path.read_text()


@pytest.mark.regress
def test_registered_block_lints_clean(tmp_path):
    """The default configuration's lint (about 3 minutes of Verilator)."""
    from ahasd.synth.export import write_verilog
    path = write_verilog("state_commit", tmp_path)
    assert "module state_commit(" in path.read_text()


def _sat16(v):
    return max(-(1 << 15), min((1 << 15) - 1, v))


def _run_pipeline(dut, inputs, output, latency):
    """Drive one input set per cycle; return ``output`` for each, behind ``latency`` registers
    (read after each tick: input n's value is there after tick n + latency - 1)."""
    got = []

    async def tb(ctx):
        for values in [*inputs, *[inputs[0]] * latency]:
            for port, value in values.items():
                ctx.set(getattr(dut, port), value)
            await ctx.tick()
            got.append(ctx.get(getattr(dut, output)))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
    return got[latency - 1:latency - 1 + len(inputs)]


def test_commit_lane_default_rank_extremes_and_random():
    """The default lane (max_rank 16, carry-save tree) against the integer formula, with
    every operand at its extremes, each rank 0..16 and random values, one input per cycle."""
    R = 16
    lane = CommitLane(R)
    assert lane.latency == 6
    rng = np.random.default_rng(11)
    cases = []
    for n in range(40):
        if n < 4:   # largest magnitudes: saturation both ways, the sign corrections
            p, s = (1 << 16) - 1, (32767, -32768)[n % 2]
            kw, u = [-32768] * R, [(-32768, 32767)[n // 2]] * R
            rank = R
        else:
            p, s = int(rng.integers(0, 1 << 16)), int(rng.integers(-32768, 32768))
            kw = [int(x) for x in rng.integers(-32768, 32768, R)]
            u = [int(x) for x in rng.integers(-32768, 32768, R)]
            rank = n % (R + 1)
        acc = p * s + sum(2 * kw[t] * u[t] for t in range(rank))
        cases.append(({"p": p, "s": s, "mask": (1 << rank) - 1,
                       "kw": sum((v & 0xFFFF) << (16 * t) for t, v in enumerate(kw)),
                       "u": sum((v & 0xFFFF) << (16 * t) for t, v in enumerate(u))},
                      _sat16((acc + (1 << 14)) >> 15)))
    got = _run_pipeline(lane, [c for c, _ in cases], "res", lane.latency)
    assert got == [want for _, want in cases]


def test_key_scale_extremes_and_random():
    scale = KeyScale()
    rng = np.random.default_rng(12)
    pairs = [(-32768, 65535), (32767, 65535), (-32768, 0), (-1, 1), (1, 32768)]
    pairs += [(int(k), int(w)) for k, w in zip(rng.integers(-32768, 32768, 40),
                                                rng.integers(0, 1 << 16, 40))]
    got = _run_pipeline(scale, [{"k": k, "w": w} for k, w in pairs], "kw", KEY_LATENCY)
    assert got == [_sat16((k * w + (1 << 14)) >> 15) for k, w in pairs]


def test_cycles_do_not_depend_on_the_lane_count():
    """The schedule the bench relies on (ahasd.bench.state_commit.sim_shape): 2 lanes on a
    d_k x d_v/2 state with half the burst and row size take exactly the cycles of 4 lanes on
    d_k x d_v, commit by commit, with the same number of factor words; two commits, the
    second's loads overlapped with the first's streaming, per-bank refresh and row switches."""
    from ahasd.bench.state_commit import sim_shape
    cycles, words = [], []
    for lanes in (4, 2):
        d_v, burst, row = sim_shape(16, 8, lanes, row_bytes=FAST.row_bytes)
        config = DRAMConfig(**{**FAST.__dict__, "burst_bytes": burst, "row_bytes": row,
                               "n_banks": 4})
        rng = np.random.default_rng(23)
        jobs = [(*random_commit(rng, 8, d_v, 3), base) for base in (0, 4)]
        log = simulate(config, jobs, d_k=8, d_v=d_v, max_rank=3, overlap=True)
        for job, got in zip(jobs, log["states"]):
            np.testing.assert_array_equal(got, commit_fixed(*job[:5]))
        assert log["dram_error"] == DRAMError.NONE
        cycles.append(log["cycles"])
        words.append([len(load_sequence(*job[1:5], lanes=lanes)) for job in jobs])
    assert cycles[0] == cycles[1] and words[0] == words[1]
    assert min(cycles[0]) > 8 * 16 // 4 * FAST.t_ccd     # at least the bursts at one per tCCD
    with pytest.raises(ValueError, match="lanes must divide the full unit's 16, not 3"):
        sim_shape(128, 32, 3)
