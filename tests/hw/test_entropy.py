"""Streaming entropy RTL against the golden model (bit for bit), Amaranth simulator."""

import numpy as np
import pytest
from amaranth.sim import Simulator

from ahasd.hw.entropy import EntropyUnit
from ahasd.sim.blocks.entropy import EntropyConfig, entropy_fx


def run_streams(dut, streams, *, seed=None):
    """Feed ``streams`` (with random idle cycles / backpressure if ``seed``); return outputs."""
    rng = np.random.default_rng(seed)
    out = []

    async def producer(ctx):
        for s in streams:
            for i, v in enumerate(s):
                while seed is not None and rng.random() < 0.2:
                    ctx.set(dut.i_stream.valid, 0)
                    await ctx.tick()
                ctx.set(dut.i_stream.valid, 1)
                ctx.set(dut.i_stream.payload, {"logit": int(v), "last": int(i == len(s) - 1)})
                await ctx.tick().until(dut.i_stream.ready)
            ctx.set(dut.i_stream.valid, 0)

    async def consumer(ctx):
        for _ in streams:
            while True:
                ready = 1 if seed is None else int(rng.random() < 0.5)
                ctx.set(dut.o_stream.ready, ready)
                _, _, valid, payload = await ctx.tick().sample(dut.o_stream.valid,
                                                               dut.o_stream.payload)
                if valid and ready:
                    out.append(payload)
                    break

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.run()
    return out


def test_bit_exact_random_and_extreme_streams():
    rng = np.random.default_rng(1)
    streams = [
        rng.integers(-32768, 32768, 64),
        np.round(rng.normal(0, 3, 400) * 256).astype(int),
        np.full(9, -32768),
        np.full(5, 32767),
        np.array([123]),
        np.linspace(-32768, 32767, 300).astype(int),     # running max rises at every element
        np.linspace(32767, -32768, 100).astype(int),
        np.r_[np.full(50, -30000), [32767], np.full(50, -30000)],
    ]
    out = run_streams(EntropyUnit(), streams, seed=2)
    assert out == [entropy_fx(s) for s in streams]


def test_other_format():
    cfg = dict(logit_width=12, logit_frac=4, max_vocab=1000)
    rng = np.random.default_rng(3)
    streams = [rng.integers(-2048, 2048, n) for n in (1, 2, 77, 500)]
    out = run_streams(EntropyUnit(**cfg), streams)
    assert out == [entropy_fx(s, EntropyConfig(**cfg)) for s in streams]


def test_too_long_stream_sets_error():
    for streams, expected in (([np.arange(8)], 0), ([np.arange(9)], 1)):
        dut = EntropyUnit(max_vocab=8)
        seen = {}

        async def tb(ctx, dut=dut, streams=streams, seen=seen):
            ctx.set(dut.o_stream.ready, 1)
            for i, v in enumerate(streams[0]):
                ctx.set(dut.i_stream.valid, 1)
                ctx.set(dut.i_stream.payload, {"logit": int(v),
                                               "last": int(i == len(streams[0]) - 1)})
                await ctx.tick().until(dut.i_stream.ready)
            ctx.set(dut.i_stream.valid, 0)
            await ctx.tick().until(dut.o_stream.valid)
            seen["error"] = ctx.get(dut.error)

        sim = Simulator(dut)
        sim.add_clock(1e-6)
        sim.add_testbench(tb)
        sim.run()
        assert seen["error"] == expected


def test_parameter_errors():
    with pytest.raises(ValueError, match="max_vocab must be an integer in 2..1048576, not 0"):
        EntropyUnit(max_vocab=0)
