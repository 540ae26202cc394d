"""cocotb scoreboard for the Verilated entropy unit: every output against the golden mirror.

Run by ``tests/hw/test_entropy_cocotb.py``. Inputs change at the falling edge and are sampled by the
rising edge that follows; outputs are read at the falling edge (those of the previous rising edge).
"""

import random

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

from ahasd.sim.blocks.entropy import entropy_float, entropy_fx

from ahasd.tb.cocotb_run import params


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
    dut.i_stream__valid.value = 0
    dut.o_stream__ready.value = 0
    dut.rst.value = 1
    await FallingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0

    got = []
    for n, s in enumerate(streams):
        i = 0
        while i < len(s):
            dut.i_stream__valid.value = 1
            dut.i_stream__payload.value = (int(s[i]) & 0xFFFF) | (int(i == len(s) - 1) << 16)
            ready = int(dut.i_stream__ready.value)
            await FallingEdge(dut.clk)
            i += ready
        dut.i_stream__valid.value = 0
        while True:
            ready = int(n < 3 or rnd.random() < 0.5)
            dut.o_stream__ready.value = ready
            valid = int(dut.o_stream__valid.value)
            value = int(dut.o_stream__payload.value)
            await FallingEdge(dut.clk)
            if valid and ready:
                got.append(value)
                break
        dut.o_stream__ready.value = 0
        assert got[-1] == expected[n], f"stream {n} (V={len(s)}): RTL {got[-1]}, golden {expected[n]}"
        if len(s) == p["vocab"]:
            assert abs(got[-1] / 4096 - entropy_float(s)) <= 0.02
    assert int(dut.error.value) == 0
