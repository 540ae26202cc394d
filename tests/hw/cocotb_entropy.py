"""cocotb scoreboard for the Verilated entropy unit: every output against the golden mirror.

Run by ``tests/hw/test_entropy_cocotb.py``. The logits go in through the shared stream source
(payloads through the unit's logit layout), the results come out through the stream sink
(:mod:`ahasd.tb.cocotb_streams`).
"""

import random

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

from ahasd.hw.entropy import logit_layout
from ahasd.sim.blocks.entropy import entropy_float, entropy_fx
from ahasd.tb.cocotb_run import params
from ahasd.tb.cocotb_streams import StreamSink, StreamSource
from ahasd.tb.generators import pauses


def make_streams(p):
    rng = np.random.default_rng(p["seed"])
    vocab = p["vocab"]
    peaked = rng.normal(0, 1, vocab)
    peaked[rng.integers(vocab)] += 9.0
    streams = [rng.normal(0, 0.01, vocab), peaked, rng.normal(0, 3, vocab)]
    streams += [rng.normal(0, 4, int(rng.integers(1, 300))) for _ in range(p["short"])]
    return [np.clip(np.round(s * 256), -32768, 32767).astype(int) for s in streams]


@cocotb.test()
async def streams_match_golden(dut):
    p = params()
    rnd = random.Random(p["seed"])
    streams = make_streams(p)
    expected = [entropy_fx(s) for s in streams]
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    source = StreamSource(dut, "i_stream", dut.clk, logit_layout(16))
    sink = StreamSink(dut, "o_stream", dut.clk)
    current = {"n": 0}
    # The first three (full-vocabulary) streams see a ready consumer, the rest backpressure.
    sink.set_backpressure_generator(pauses(lambda: 0.0 if current["n"] < 3 else 0.5, rnd))
    dut.rst.value = 1
    await FallingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0

    for n, s in enumerate(streams):
        current["n"] = n
        for i, logit in enumerate(s):
            source.send({"logit": int(logit), "last": int(i == len(s) - 1)})
        while len(sink.items) <= n:
            await FallingEdge(dut.clk)
        got = sink.items[n]
        assert got == expected[n], f"stream {n} (V={len(s)}): RTL {got}, golden {expected[n]}"
        if len(s) == p["vocab"]:
            assert abs(got / 4096 - entropy_float(s)) <= 0.02
    assert int(dut.error.value) == 0
