"""Directed steps of the controller's fast-tier tests (tests/hw/test_controller_*.py).

Each step is an async function of a :class:`ahasd.tb.controller_sim.ControllerSim` and the
simulator context; :func:`run` simulates one test body on a fresh controller with small,
unequal queues (:data:`DEPTHS`: full queues come quickly and a swapped depth shows).
"""

from ahasd.hw.controller import EDC_MODES, Controller
from ahasd.hw.regmap import load
from ahasd.sim.blocks.tvc import TVC as GoldenTVC
from ahasd.tb.controller_sim import ControllerSim

__all__ = ["DEPTHS", "QUEUES", "INSERT_INPUTS", "run", "golden_tvc", "start_blocking_task",
           "push", "pop", "queue_setup", "trigger", "untrigger"]

DEPTHS = {"draft_depth": 8, "feedback_depth": 4, "preverify_depth": 2}
#: The queues by the prefix of their registers and interrupt.
QUEUES = ("draft_q", "feedback_q", "preverify_q")
#: TVC inputs for which TVC inserts its longest pre-verification (8 tokens) at the presets.
INSERT_INPUTS = (4000, 0, 9)
RM = load()


def run(body, **params):
    """Simulate ``body(sim, ctx)`` on a fresh controller (DEPTHS unless ``params`` say)."""
    sim = ControllerSim(Controller(**{**DEPTHS, **params}))

    async def testbench(ctx):
        await body(sim, ctx)
    sim.run(testbench)
    return sim


def golden_tvc(ratio=None, presets=None):
    reset = {t: RM[f"TVC_{t.upper()}_PRESET"].reset for t in ("nvct", "pdct", "pvct")}
    return GoldenTVC(freq_ratio=RM["TVC_FREQ_RATIO"].reset if ratio is None else ratio,
                     presets=presets or reset)


async def start_blocking_task(sim, ctx):
    """Start a draft task that runs until ``task_done``: GTS then takes no pre-verify task."""
    sim.task_done = False
    await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["always"])
    await sim.draft(ctx, 100)
    await sim.offer(ctx, sim.dut.draft_request, {"length": 3})
    await sim.cycles(ctx, 3)
    assert sim.tasks[-1] == (0, 3)


async def push(sim, ctx, queue):
    """One descriptor into ``queue`` (its consumer is held off by the caller)."""
    if queue == "draft_q":
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["always"])
        await sim.draft(ctx, 100)
    elif queue == "feedback_q":
        await sim.result(ctx, full=1, wait=False)
    else:
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        sim.tvc_inputs(ctx, *INSERT_INPUTS)
        await sim.draft(ctx, 100)
    await sim.settle(ctx)


async def pop(sim, ctx, queue):
    """Let the consumer of ``queue`` take exactly one descriptor."""
    if queue == "preverify_q":     # one task_done: GTS ends the running task, takes the next
        sim.task_done = True
        await sim.cycles(ctx, 1)
        sim.task_done = False
    else:
        await sim.take(ctx, queue.removesuffix("_q"))
    await sim.settle(ctx)


async def queue_setup(sim, ctx, queue):
    await sim.write_reg(ctx, "TVC_CTRL", sim.word("TVC_CTRL", max_len=8,
                                                  disable=int(queue != "preverify_q")))
    if queue == "preverify_q":
        await start_blocking_task(sim, ctx)


async def trigger(sim, ctx, source):
    """Make interrupt ``source`` fire once and leave its raw condition true."""
    if source == "draft_q":
        await sim.write_reg(ctx, "DRAFT_Q_THRESHOLD", 1)
        await sim.draft(ctx, 100)                      # the NPU does not pop
    elif source == "feedback_q":
        await sim.write_reg(ctx, "FEEDBACK_Q_THRESHOLD", 1)
        await sim.result(ctx, full=1, wait=False)     # the PIM does not take it
    elif source == "preverify_q":
        await start_blocking_task(sim, ctx)
        await sim.write_reg(ctx, "PREVERIFY_Q_THRESHOLD", 1)
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        sim.tvc_inputs(ctx, *INSERT_INPUTS)
        await sim.draft(ctx, 100)
    elif source == "edc_stop":
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        await sim.draft(ctx, 100)
    elif source == "tvc_insert":
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        sim.tvc_inputs(ctx, *INSERT_INPUTS)
        await sim.draft(ctx, 100)
    elif source == "tvc_error":
        await sim.offer(ctx, sim.dut.record, {"table": 2, "cycles": 100, "length": 0})
    else:
        raise KeyError(f"no trigger for interrupt {source!r}: add one with its test")
    await sim.settle(ctx)


async def untrigger(sim, ctx, source):
    """Make the raw condition of ``source`` false again."""
    if source == "draft_q":
        sim.draft_ready = True
    elif source == "feedback_q":
        sim.feedback_ready = True
    elif source == "preverify_q":
        sim.task_done = True
    elif source in ("edc_stop", "tvc_insert"):
        sim.tvc_inputs(ctx, 0, 0, 0)                  # nothing to pre-verify: no insert
        if source == "edc_stop":
            await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["always"])
        await sim.draft(ctx, 100)
    elif source == "tvc_error":
        await sim.write_reg(ctx, "CTRL", sim.word("CTRL", enable=1, soft_reset=1))
    await sim.settle(ctx)
