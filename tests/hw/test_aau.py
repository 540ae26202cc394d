"""AAU RTL against the golden fixed-point mirror (bit for bit), Amaranth simulator."""

import numpy as np
import pytest

from ahasd.hw.aau import AAU, AAUOp
from ahasd.sim.blocks.aau import gelu_fx, layernorm_fx, softmax_fx
from ahasd.tb.amaranth_sim import StreamSink, StreamSource, simulate
from ahasd.tb.generators import pauses

GOLDEN = {AAUOp.SOFTMAX: softmax_fx, AAUOp.GELU: gelu_fx, AAUOp.LAYERNORM: layernorm_fx}


def test_vectors(rng, count):
    vecs = [np.full(16, -32768), np.full(16, 32767), np.zeros(16, dtype=int),
            np.r_[[32767], np.full(15, -32768)], np.arange(16) * 4000 - 32768]
    vecs += [rng.integers(-32768, 32768, 16) for _ in range(count)]
    vecs += [np.clip(np.round(rng.normal(0, s, 16) * 256), -32768, 32767).astype(int)
             for s in (0.01, 1.0, 4.0)]
    return vecs


test_vectors.__test__ = False


def run(dut, requests, *, seed=None):
    source = StreamSource(dut.i_stream, [{"op": op, "x": [int(v) for v in vec]}
                                         for op, vec in requests])
    sink = StreamSink(dut.o_stream, len(requests))
    if seed is not None:
        source.set_idle_generator(pauses(0.3, seed))
        sink.set_backpressure_generator(pauses(0.5, seed + 1))
    simulate(dut, source.testbench, sink.testbench)
    return [(payload.op, [int(v) for v in payload.y]) for payload in sink.items]


def raw16(values):
    return [v & 0xFFFF for v in values]


@pytest.mark.parametrize("op", list(AAUOp))
def test_bit_exact(op):
    rng = np.random.default_rng(int(op.value) + 10)
    requests = [(op, v) for v in test_vectors(rng, 12)]
    out = run(AAU(), requests)
    for (_, vec), (got_op, got) in zip(requests, out):
        assert got_op == op
        assert got == raw16(GOLDEN[op](vec))


def test_mixed_ops_in_order_with_backpressure_and_eps():
    rng = np.random.default_rng(4)
    ops = list(AAUOp)
    requests = [(ops[i % 3], rng.integers(-4000, 4000, 16)) for i in range(9)]
    out = run(AAU(eps=0.5), requests, seed=5)
    for (op, vec), (got_op, got) in zip(requests, out):
        assert got_op == op
        gold = layernorm_fx(vec, eps=0.5) if op == AAUOp.LAYERNORM else GOLDEN[op](vec)
        assert got == raw16(gold)


def test_parameter_errors():
    with pytest.raises(ValueError,
                       match=r"eps must be a finite number in \[3.72529e-09, 16\) \(2\*\*-28 up to 16\), not 0"):
        AAU(eps=0)


# Cycles per request, from the accept to the result's output cycle, counted from the schedule
# (hw/aau.py), not measured: a product step is 4 cycles (issue into the carry-save rows, then
# three 17-bit segments, the last writing), a divider run is its quotient bits plus the cycle
# that sees it idle.
PRODUCT = 4
SCHEDULE = {
    # accept, max (2 registered levels), max - x, exp product, e from the table,
    # carry-save sum of e, resolve it into the divider, 20 quotient bits + 1, e * R, output
    "softmax": 1 + 2 + 1 + PRODUCT + 1 + 1 + 1 + (20 + 1) + PRODUCT + 1,
    # accept, six dependent products (x², x³, inner, u, tanh interpolation, x(1 + t)), output
    "gelu": 1 + 6 * PRODUCT + 1,
    # accept, carry-save sum of x, resolve it, d = 16 x - sum, d * d, carry-save variance,
    # three segments of it, 31 root bits + the divider start, 33 quotient bits + 1, d * R, output
    "layernorm": 1 + 1 + 1 + 1 + PRODUCT + 1 + 3 + (31 + 1) + (33 + 1) + PRODUCT + 1,
}


@pytest.mark.parametrize("op", list(SCHEDULE))
def test_cycles_per_request_follow_the_schedule(op):
    from ahasd.bench.rtl_timing import aau_cycles
    assert aau_cycles(op, 16) == SCHEDULE[op]
    assert aau_cycles(op, 48, seed=2) == 3 * SCHEDULE[op]     # back to back, data-independent
