"""Streaming entropy RTL against the golden model (bit for bit), Amaranth simulator."""

import numpy as np
import pytest

from ahasd.hw.entropy import EntropyUnit
from ahasd.sim.blocks.entropy import EntropyConfig, entropy_fx
from ahasd.tb.amaranth_sim import StreamSink, StreamSource, simulate
from ahasd.tb.generators import pauses


def run_streams(dut, streams, *, seed=None):
    """Feed ``streams`` (with random idle cycles / backpressure if ``seed``); return outputs."""
    source = StreamSource(dut.i_stream, [{"logit": int(v), "last": int(i == len(s) - 1)}
                                         for s in streams for i, v in enumerate(s)])
    sink = StreamSink(dut.o_stream, len(streams))
    if seed is not None:
        source.set_idle_generator(pauses(0.2, seed))
        sink.set_backpressure_generator(pauses(0.5, seed + 1))
    simulate(dut, source.testbench, sink.testbench)
    return sink.items


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


def test_first_row_after_reset_below_zero():
    """The running max of the first row after reset starts at that row's first logit, not at
    the register's reset value 0: a row whose logits are all negative, first after reset."""
    for streams in ([np.array([-20000, -20100, -19000, -25000])], [np.full(9, -32768)]):
        assert run_streams(EntropyUnit(), streams) == [entropy_fx(s) for s in streams]


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

        simulate(dut, tb)
        assert seen["error"] == expected


def test_parameter_errors():
    with pytest.raises(ValueError, match="max_vocab must be an integer in 2..1048576, not 0"):
        EntropyUnit(max_vocab=0)


#: Cycles from the cycle that takes a stream's `last` logit to the result's `valid`
#: (docs/implementation.md, the entropy unit's latency; 30 before the 800 MHz pipelining).
TAIL_CYCLES = 42


def test_one_logit_per_cycle_and_tail():
    """Within a stream the unit takes a logit every cycle (`ready` stays high); the result is
    valid TAIL_CYCLES after the `last` one is taken, the input held off until it is taken,
    and it is the golden model's."""
    dut = EntropyUnit()
    rng = np.random.default_rng(4)
    streams = [rng.integers(-32768, 32768, 40), np.arange(-3000, 3000, 50)]
    seen = []

    async def tb(ctx):
        ctx.set(dut.o_stream.ready, 1)
        for s in streams:
            for i, v in enumerate(s):
                ctx.set(dut.i_stream.valid, 1)
                ctx.set(dut.i_stream.payload, {"logit": int(v), "last": int(i == len(s) - 1)})
                assert ctx.get(dut.i_stream.ready)
                await ctx.tick()
            ctx.set(dut.i_stream.valid, 0)
            tail = 0
            while not ctx.get(dut.o_stream.valid):
                assert not ctx.get(dut.i_stream.ready)
                await ctx.tick()
                tail += 1
            seen.append((tail, ctx.get(dut.o_stream.payload)))
            await ctx.tick()

    simulate(dut, tb)
    assert seen == [(TAIL_CYCLES, entropy_fx(s)) for s in streams]
