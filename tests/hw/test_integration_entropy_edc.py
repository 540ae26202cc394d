"""Integration: draft-batch logits -> RTL entropy unit -> RTL batch mean -> RTL EDC.

Every EDC decision must equal the golden EDC's decision for the golden batch mean entropy, and
the batch means must be within the entropy unit's 0.02-nat bound of the float mean.
"""

import numpy as np
from amaranth.hdl import Module
from amaranth.lib import wiring

from ahasd.hw.edc import EDC
from ahasd.hw.entropy_mean import BatchEntropy
from ahasd.sim.blocks.edc import EDC as GoldenEDC
from ahasd.sim.blocks.entropy import batch_mean_fx, entropy_float, entropy_fx
from ahasd.tb.amaranth_sim import simulate


class DraftPath(wiring.Component):
    def __init__(self):
        self.mean = BatchEntropy(max_batch=8)
        self.edc = EDC()
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.mean = self.mean
        m.submodules.edc = edc = self.edc
        m.d.comb += [
            self.mean.o_stream.ready.eq(1),
            edc.draft.valid.eq(self.mean.o_stream.valid),
            edc.draft.payload.eq(self.mean.o_stream.payload),
        ]
        return m


def make_batches(rng, count):
    batches = []
    for _ in range(count):
        tokens = []
        scale = rng.choice([0.3, 1.0, 3.0, 8.0])     # flat .. peaked distributions
        for _ in range(rng.integers(1, 5)):
            vocab = int(rng.integers(50, 400))
            z = rng.normal(0, scale, vocab)
            tokens.append(np.clip(np.round(z * 256), -32768, 32767).astype(int))
        batches.append((tokens, bool(rng.random() < 0.6)))   # (logits, verify full?)
    return batches


def test_logits_to_edc_decisions():
    rng = np.random.default_rng(21)
    batches = make_batches(rng, 14)
    dut = DraftPath()
    got = []

    async def tb(ctx):
        edc = dut.edc
        for tokens, full in batches:
            for t, logits in enumerate(tokens):
                for i, v in enumerate(logits):
                    last = i == len(logits) - 1
                    ctx.set(dut.mean.i_stream.valid, 1)
                    ctx.set(dut.mean.i_stream.payload, {
                        "logit": int(v), "last": int(last),
                        "batch_last": int(last and t == len(tokens) - 1)})
                    await ctx.tick().until(dut.mean.i_stream.ready)
            ctx.set(dut.mean.i_stream.valid, 0)
            mean, = await ctx.tick().sample(dut.mean.o_stream.payload).until(
                dut.mean.o_stream.valid)
            _, _, valid, decision = await ctx.tick().sample(
                edc.decision.valid, edc.decision.payload)
            assert valid
            got.append((mean, decision["continue"], decision.index))
            # The verification of this batch comes back before the next one is drafted.
            ctx.set(edc.verify.valid, 1)
            ctx.set(edc.verify.payload, int(full))
            await ctx.tick()
            ctx.set(edc.verify.valid, 0)
        assert not ctx.get(dut.mean.error)

    simulate(dut, tb)

    golden = GoldenEDC()
    for (tokens, full), (mean, cont, index) in zip(batches, got, strict=True):
        expected_mean = batch_mean_fx([entropy_fx(t) for t in tokens])
        assert mean == expected_mean
        float_mean = np.mean([entropy_float(t) for t in tokens])
        assert abs(mean / 4096 - float_mean) <= 0.02
        decision = golden.draft_fx(expected_mean)
        assert (cont, index) == (int(decision.cont), decision.index)
        golden.verify(full)
    # The sequence exercised both decisions.
    assert {c for _, c, _ in got} == {0, 1}
