"""ahasd.tb.controller_sim.ControllerSim.draft: each pushed batch carries the next batch id
(16 bits), its length and its mean entropy, and comes out of ``draft_out`` on the NPU clock as
pushed."""

from ahasd.hw.controller import Controller
from ahasd.tb.controller_sim import ControllerSim


def test_drafts_carry_their_batch_ids():
    sim = ControllerSim(Controller(draft_depth=8, feedback_depth=4, preverify_depth=4))
    d = sim.dut
    seen = []

    async def pim(ctx):
        for n, entropy in enumerate((100, 200, 300)):
            await sim.draft(ctx, entropy, length=n + 2)
        await sim.settle(ctx, 20)
        sim.draft_ready = True
        await sim.settle(ctx, 60)

    async def npu(ctx):
        for _ in range(200):
            *_, pop, payload = await ctx.tick("npu").sample(d.draft_out.valid & d.draft_out.ready,
                                                           d.draft_out.payload)
            if pop:
                seen.append((int(payload.batch_id), int(payload.length),
                             int(payload.mean_entropy)))

    sim.run(pim, npu)
    assert seen == [(0, 2, 100), (1, 3, 200), (2, 4, 300)]
