"""Batch mean entropy RTL: rounding, batch sizes, the too-long-batch error."""

import numpy as np
import pytest

from ahasd.hw.entropy_mean import BatchEntropy
from ahasd.sim.blocks.entropy import batch_mean_fx, entropy_fx
from ahasd.tb.amaranth_sim import simulate


def run(dut, batches):
    means, errors = [], []

    async def tb(ctx):
        ctx.set(dut.o_stream.ready, 1)
        for tokens in batches:
            for t, logits in enumerate(tokens):
                for i, v in enumerate(logits):
                    last = i == len(logits) - 1
                    ctx.set(dut.i_stream.valid, 1)
                    ctx.set(dut.i_stream.payload, {
                        "logit": int(v), "last": int(last),
                        "batch_last": int(last and t == len(tokens) - 1)})
                    await ctx.tick().until(dut.i_stream.ready)
            ctx.set(dut.i_stream.valid, 0)
            mean, err = await ctx.tick().sample(dut.o_stream.payload, dut.error).until(
                dut.o_stream.valid)
            means.append(mean)
            errors.append(err)

    simulate(dut, tb)
    return means, errors


def test_means_match_golden():
    rng = np.random.default_rng(8)
    batches = [[rng.integers(-3000, 3000, int(rng.integers(2, 60))) for _ in range(n)]
               for n in (1, 2, 3, 5, 8, 7)]
    # Two tokens whose entropies have an odd sum: exercises the rounding.
    means, errors = run(BatchEntropy(max_batch=8), batches)
    assert means == [batch_mean_fx([entropy_fx(t) for t in b]) for b in batches]
    assert not any(errors)


def test_too_long_batch_sets_error():
    means, errors = run(BatchEntropy(max_batch=2), [[[1, 2]] * 2, [[1, 2]] * 3])
    assert errors == [0, 1]


def test_validation():
    with pytest.raises(ValueError, match="max_batch must be an integer in 1..256, not 0"):
        BatchEntropy(max_batch=0)
    with pytest.raises(ValueError, match="a draft batch has at least one token"):
        batch_mean_fx([])
    assert batch_mean_fx([1, 2]) == 2 and batch_mean_fx([1, 1, 2]) == 1
    with pytest.raises(ValueError, match="logit_width must be an integer in 8..24, not 30"):
        BatchEntropy(logit_width=30)
