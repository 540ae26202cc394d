"""The controller's queues, GTS and global controls through its registers (fast tier).

Part of the directed register tests of ``test_controller_registers.py`` (whose table names the
test of each field): queue status and thresholds of every queue, the squash counters, the GTS
registers, CTRL.enable and CTRL.soft_reset.
"""

import pytest

from ahasd.hw.controller import EDC_MODES
from ahasd.hw.regmap import load
from ahasd.tb.controller_steps import DEPTHS, INSERT_INPUTS, QUEUES, pop, push, queue_setup, run, start_blocking_task

RM = load()


@pytest.mark.parametrize("queue", QUEUES)
def test_queue_status(queue):
    """STATUS.fill / empty / full follow each push and pop (the fill as the PIM side sees
    it); THRESHOLD raises the queue's interrupt on each rising crossing of fill >= threshold
    (INT_RAW is the level) and 0 disables it; PUSHES / POPS count the descriptors."""
    Q = queue.upper()
    depth = DEPTHS[f"{queue.removesuffix('_q')}_depth"]
    bit = RM["INT_STATUS"].field(queue).mask

    async def body(sim, ctx):
        await queue_setup(sim, ctx, queue)
        await sim.write_reg(ctx, f"{Q}_THRESHOLD", 2)
        await sim.write_reg(ctx, "INT_ENABLE", bit)

        async def check(fill, events):
            status = await sim.read_reg(ctx, f"{Q}_STATUS")
            reg = RM[f"{Q}_STATUS"]
            got = {f.name: f.extract(status) for f in reg.fields}
            assert got == {"fill": fill, "empty": int(fill == 0), "full": int(fill == depth)}
            assert bool(await sim.read_reg(ctx, "INT_RAW") & bit) == (fill >= 2)
            assert await sim.read_reg(ctx, "INT_COUNT") == events, f"fill {fill}"
        await check(0, 0)
        for fill in range(1, depth + 1):
            await push(sim, ctx, queue)
            await check(fill, int(fill >= 2))
        for fill in reversed(range(depth)):
            await pop(sim, ctx, queue)
            await check(fill, 1)
        for _fill in (1, 2):
            await push(sim, ctx, queue)
        await check(2, 2)                          # the second rising crossing
        await sim.write_reg(ctx, f"{Q}_THRESHOLD", 0)
        assert await sim.read_reg(ctx, "INT_RAW") & bit == 0
        await pop(sim, ctx, queue)
        await push(sim, ctx, queue)
        assert await sim.read_reg(ctx, "INT_COUNT") == 2
        assert await sim.read_reg(ctx, f"{Q}_PUSHES") == depth + 3
        assert await sim.read_reg(ctx, f"{Q}_POPS") == depth + 1
    run(body)


def test_squash_counters():
    """SQUASHES counts squashes the NPU issued, SQUASH_DISCARDED the stale entries they
    removed; the PIM sees each squash once (draft_squash) and later drafts are delivered."""
    async def body(sim, ctx):
        await queue_setup(sim, ctx, "draft_q")
        for _ in range(5):
            await push(sim, ctx, "draft_q")
        ctx.set(sim.dut.squash, 1)
        await ctx.tick("npu").until(sim.dut.squash_ready)
        ctx.set(sim.dut.squash, 0)
        sim.draft_ready = True
        await sim.settle(ctx)
        assert sim.draft_pops == 0
        for _ in range(2):
            await push(sim, ctx, "draft_q")
        assert sim.draft_pops == 2
        assert await sim.read_reg(ctx, "SQUASHES") == 1
        assert await sim.read_reg(ctx, "SQUASH_DISCARDED") == 5
        assert await sim.read_reg(ctx, "DRAFT_Q_POPS") == 2
    run(body)


# ---- global control and GTS -------------------------------------------------------------------
def test_ctrl_enable():
    """CTRL.enable = 0: drafts still enter the queue and the EDC (its counters run) but no
    decision is issued, TVC is asked nothing and GTS starts no task; 1 resumes."""
    async def body(sim, ctx):
        sim.task_done = True
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        await sim.write_reg(ctx, "CTRL", 0)
        await sim.offer(ctx, sim.dut.draft_in, {"batch_id": 1, "length": 1, "kv_base": 0,
                                                "mean_entropy": 9})
        assert not await sim.offer(ctx, sim.dut.draft_request, {"length": 2}, cycles=30)
        await sim.settle(ctx)
        assert sim.decisions == [] and sim.tasks == []
        assert await sim.read_reg(ctx, "EDC_DECISIONS") == 1
        assert await sim.read_reg(ctx, "TVC_DECISIONS") == 0
        assert await sim.read_field(ctx, "DRAFT_Q_STATUS", "fill") == 1
        await sim.write_reg(ctx, "CTRL", sim.word("CTRL", enable=1))
        assert await sim.draft(ctx, 9) == 0
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["always"])
        assert await sim.draft(ctx, 9) == 1
        assert await sim.offer(ctx, sim.dut.draft_request, {"length": 2}, cycles=30)
        await sim.cycles(ctx, 2)
        assert sim.tasks == [(0, 2)]
    run(body)


def test_soft_reset():
    """CTRL.soft_reset (a pulse, reads 0) restarts EDC, TVC and GTS: their counters and
    status clear, TVC's tables reload the presets; the registers and the queues keep theirs."""
    async def body(sim, ctx):
        sim.task_done = True
        await sim.write_reg(ctx, "TVC_CTRL", sim.word("TVC_CTRL", max_len=4))
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        await sim.write_reg(ctx, "GTS_DRAFT_MASK", 0x0003)
        sim.tvc_inputs(ctx, *INSERT_INPUTS)
        for _ in range(3):
            await sim.draft(ctx, 40000)
            await sim.settle(ctx)
        await sim.offer(ctx, sim.dut.record, {"table": 2, "cycles": 9000, "length": 3})
        await sim.offer(ctx, sim.dut.record, {"table": 1, "cycles": 0, "length": 0})
        await sim.settle(ctx)
        pvct_preset = RM["TVC_PVCT_PRESET"].reset
        assert await sim.read_reg(ctx, "TVC_PVCT_AVG") != pvct_preset
        before = {n: await sim.read_reg(ctx, n) for n in ("EDC_DECISIONS", "TVC_ERRORS",
                                                          "GTS_SWITCHES", "GTS_BUSY",
                                                          "EDC_STATUS")}
        assert all(before.values()), before
        fill = await sim.read_field(ctx, "DRAFT_Q_STATUS", "fill")
        assert fill == 3
        await sim.write_reg(ctx, "CTRL", sim.word("CTRL", enable=1, soft_reset=1))
        assert await sim.read_reg(ctx, "CTRL") == sim.word("CTRL", enable=1)
        for name in ("EDC_DECISIONS", "TVC_ERRORS", "GTS_SWITCHES", "GTS_BUSY"):
            assert await sim.read_reg(ctx, name) == 0, name
        assert await sim.read_field(ctx, "EDC_STATUS", "llr") == 0
        assert await sim.read_reg(ctx, "TVC_PVCT_AVG") == pvct_preset
        assert await sim.read_field(ctx, "DRAFT_Q_STATUS", "fill") == fill
        assert await sim.read_reg(ctx, "DRAFT_Q_PUSHES") == 3
        assert await sim.read_reg(ctx, "TVC_CTRL") == sim.word("TVC_CTRL", max_len=4)
        assert await sim.read_reg(ctx, "GTS_DRAFT_MASK") == 0x0003
        assert await sim.read_reg(ctx, "EDC_CTRL") == EDC_MODES["never"]
    run(body)


def test_gts_registers():
    """The GTS masks drive the rank enables of each task kind (GTS_STATUS.rank_enable reads
    them), GTS_STATUS.state / draft_allowed / switching follow the tasks, GTS_SWITCHES counts
    mode switches, GTS_BUSY the non-idle cycles and GTS_STALLS the cycles a request waited."""
    async def body(sim, ctx):
        sim.draft_ready = True
        st = RM["GTS_STATUS"]
        await sim.write_reg(ctx, "GTS_DRAFT_MASK", 0x00F0)
        await sim.write_reg(ctx, "GTS_PREVERIFY_MASK", 0x0F00)
        await sim.write_reg(ctx, "TVC_CTRL", sim.word("TVC_CTRL", max_len=8))
        await start_blocking_task(sim, ctx)
        status = await sim.read_reg(ctx, "GTS_STATUS")
        assert ctx.get(sim.dut.rank_en) == 0x00F0
        assert (st.field("state").extract(status), st.field("rank_enable").extract(status),
                st.field("draft_allowed").extract(status)) == (1, 0x00F0, 1)
        busy = await sim.read_reg(ctx, "GTS_BUSY")
        await sim.cycles(ctx, 20)
        assert await sim.read_reg(ctx, "GTS_BUSY") - busy == 22   # reads 22 cycles apart
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        sim.tvc_inputs(ctx, *INSERT_INPUTS)
        await sim.draft(ctx, 100)                  # stop: drafting withheld, a pre-verify
        await sim.settle(ctx)
        assert await sim.read_field(ctx, "GTS_STATUS", "draft_allowed") == 0
        stalls = await sim.read_reg(ctx, "GTS_STALLS")
        await sim.cycles(ctx, 10)
        assert await sim.read_reg(ctx, "GTS_STALLS") - stalls == 12   # the pre-verify waits
        # The switch cycle: read GTS_STATUS k cycles after the task_done pulse, for each k.
        seen = []
        for k in range(4):
            sim.task_done = True
            await sim.cycles(ctx, 1)
            sim.task_done = False
            if k:
                await sim.cycles(ctx, k)
            seen.append(await sim.read_reg(ctx, "GTS_STATUS"))
            await sim.settle(ctx, 10)
            sim.task_done = True                   # the pre-verify task ends: idle
            await sim.cycles(ctx, 1)
            sim.task_done = False
            await sim.result(ctx, full=1)          # allows drafting again
            await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["always"])
            await sim.offer(ctx, sim.dut.draft_request, {"length": 1})
            await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
            await sim.draft(ctx, 100)              # the next pre-verify
            await sim.settle(ctx)
        switching = [st.field("switching").extract(v) for v in seen]
        assert sum(switching) == 1, [hex(v) for v in seen]
        state, ranks = st.field("state"), st.field("rank_enable")
        after = seen[switching.index(1) + 1]
        assert (state.extract(after), ranks.extract(after)) == (2, 0x0F00)
        assert ctx.get(sim.dut.rank_en) in (0x00F0, 0x0F00)
        kinds = [k for k, _ in sim.tasks]
        switches = sum(a != b for a, b in zip(kinds, kinds[1:])) + 1
        assert await sim.read_reg(ctx, "GTS_SWITCHES") == switches
        sim.task_done = True
        await sim.settle(ctx, 10)
        idle = await sim.read_reg(ctx, "GTS_STATUS")
        assert (state.extract(idle), ranks.extract(idle)) == (0, 0)
    run(body)


# ---- push-back counters ---------------------------------------------------------------------
@pytest.mark.parametrize("queue", QUEUES)
def test_pushbacks(queue):
    """PUSHBACKS counts the cycles a producer offers a descriptor to the full queue, exactly,
    in the producer's clock (the pre-verify queue's producer is the TVC request: a stop
    decision waiting for room, shown by TVC_STATUS.deciding); none while nothing is offered."""
    Q = queue.upper()
    depth = DEPTHS[f"{queue.removesuffix('_q')}_depth"]
    offered = 37

    async def body(sim, ctx):
        await queue_setup(sim, ctx, queue)
        for _ in range(depth):
            await push(sim, ctx, queue)
        await sim.settle(ctx)
        assert await sim.read_field(ctx, f"{Q}_STATUS", "full") == 1
        assert await sim.read_reg(ctx, f"{Q}_PUSHBACKS") == 0
        if queue == "draft_q":
            assert not await sim.offer(ctx, sim.dut.draft_in, {"batch_id": 1, "length": 1,
                                                               "kv_base": 0, "mean_entropy": 9},
                                       cycles=offered)
        elif queue == "feedback_q":
            assert not await sim.offer(ctx, sim.dut.feedback_in, {
                "accepted_length": 1, "full": 1, "cycles": 9, "kv_length": 9},
                domain="npu", cycles=offered)
        if queue == "preverify_q":
            assert await sim.read_field(ctx, "TVC_STATUS", "deciding") == 0
            await sim.draft(ctx, 100)              # a stop: its request waits for room
            assert await sim.read_field(ctx, "TVC_STATUS", "deciding") == 1
            first = await sim.read_reg(ctx, f"{Q}_PUSHBACKS")
            await sim.cycles(ctx, offered)
            # Two reads offered+2 cycles apart (R of the first, the wait, AR of the second).
            assert await sim.read_reg(ctx, f"{Q}_PUSHBACKS") - first == offered + 2
            await pop(sim, ctx, queue)             # room: the request goes, TVC inserts
            assert await sim.read_field(ctx, "TVC_STATUS", "deciding") == 0
            assert await sim.read_field(ctx, f"{Q}_STATUS", "fill") == depth
            total = await sim.read_reg(ctx, f"{Q}_PUSHBACKS")
        else:
            total = offered
        await sim.settle(ctx)
        assert await sim.read_reg(ctx, f"{Q}_PUSHBACKS") == total
        await sim.settle(ctx)
        assert await sim.read_reg(ctx, f"{Q}_PUSHBACKS") == total   # stopped counting
        assert await sim.read_reg(ctx, f"{Q}_PUSHES") == depth + (queue == "preverify_q")
    run(body)
