"""Out of reset, before any EDC decision or verification result, the controller lets drafting
start: GTS_STATUS.draft_allowed reads 1 and a draft request becomes a DRAFT task (Amaranth
simulator, no cocotb build)."""

from ahasd.hw.controller import Controller
from ahasd.hw.gts import TaskKind
from ahasd.tb.controller_sim import ControllerSim


def test_drafting_is_allowed_out_of_reset():
    sim = ControllerSim(Controller(draft_depth=8, feedback_depth=4, preverify_depth=4))
    seen = {}

    async def pim(ctx):
        sim.task_done = True
        seen["allowed"] = await sim.read_field(ctx, "GTS_STATUS", "draft_allowed")
        seen["taken"] = await sim.offer(ctx, sim.dut.draft_request, {"length": 3}, cycles=20)
        await sim.cycles(ctx, 5)

    sim.run(pim)
    assert seen == {"allowed": 1, "taken": True}
    assert sim.tasks and sim.tasks[0] == (TaskKind.DRAFT.value, 3)
