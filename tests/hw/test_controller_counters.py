"""Every event counter of the controller's register map, in the fast tier.

The counters are taken from the map (:func:`ahasd.hw.regmap.counter_fields`: the CSR's own
saturating counters and the status fields documented as wrapping or saturating), never from a
hand list. One traffic script drives every counter past 16 events; it runs on the normal build
and on a narrow-counter build (``Controller(counter_bits=4)``), in which each saturating
counter must read 15 and each wrapping one the normal count modulo 16. The same runs check
which counters CTRL.clear_counters and CTRL.soft_reset clear, as documented.
"""

import re

import pytest
from amaranth.hdl import Fragment

from ahasd.hw.controller import EDC_MODES, Controller
from ahasd.hw.regmap import counter_fields, load
from ahasd.spec.params import COUNTER_BITS
from ahasd.tb.controller_sim import ControllerSim

DEPTHS = {"draft_depth": 8, "feedback_depth": 4, "preverify_depth": 2}
RM = load()
COUNTERS = counter_fields(RM)
NARROW = 4
INSERT_INPUTS = (4000, 0, 9)
#: Past saturation of the narrow build, with room.
EVENTS = 18


def cleared_by_clear_counters():
    """The registers CTRL.clear_counters clears, as its description names them: the listed
    registers and the queue counters (those counted by the controller's queue counters)."""
    desc = RM["CTRL"].field("clear_counters").desc
    named = set(re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", desc))
    assert "queue counters" in desc and named, desc
    queue = {r.ident for r, _ in COUNTERS if len(r.path) == 2 or r.ident.startswith("SQUASH")}
    return named | queue


def cleared_by_soft_reset():
    """EDC, TVC and GTS state with their counters (CTRL.soft_reset's description), except the
    CSR counters clear_counters owns."""
    desc = RM["CTRL"].field("soft_reset").desc
    assert "EDC, TVC and GTS" in desc and "counters" in desc, desc
    return {r.ident for r, _ in COUNTERS if r.ident.split("_")[0] in ("EDC", "TVC", "GTS")} \
        - cleared_by_clear_counters()


def test_every_counter_is_in_the_map_and_cleared_by_one_control():
    idents = {r.ident for r, _ in COUNTERS}
    # Every field named count is a documented counter (else it lacks "(wraps)"/"saturating").
    assert {r.ident for r in RM.registers for f in r.fields if f.name == "count"} <= idents
    clear, soft = cleared_by_clear_counters(), cleared_by_soft_reset()
    assert clear <= idents and not clear & soft
    assert clear | soft == idents, sorted(idents - clear - soft)
    assert all(f.width == COUNTER_BITS for r, f in COUNTERS if r.ident != "TVC_ERRORS")


def test_narrow_build_narrows_every_counter_field():
    dut = Controller(counter_bits=NARROW, **DEPTHS)
    Fragment.get(dut, None)      # elaborates (and so uses) the controller and its parts
    narrow = counter_fields(dut._csr.regmap)
    assert [(r.ident, f.width) for r, f in narrow] == [(r.ident, NARROW) for r, _ in COUNTERS]
    with pytest.raises(ValueError, match=r"counter_bits must be an integer in 1\.\.32, not 0"):
        Controller(counter_bits=0)


async def traffic(sim, ctx):
    """At least EVENTS events of every counter; ends idle (no task, empty queues)."""
    d = sim.dut
    sim.task_done = sim.draft_ready = True
    await sim.write_reg(ctx, "INT_ENABLE", RM["INT_STATUS"].field("edc_stop").mask)
    await sim.write_reg(ctx, "TVC_CTRL", sim.word("TVC_CTRL", max_len=8))
    for i in range(EVENTS + 6):   # 3 in 4 results are rejections: enough EDC squashes
        # A stop with a pre-verification, a rejection (EDC squash), then a draft task.
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        sim.tvc_inputs(ctx, *INSERT_INPUTS)
        await sim.draft(ctx, 20000 + 1000 * (i % 3))
        await sim.settle(ctx, 50)
        await sim.result(ctx, full=int(i % 4 == 3))
        # EDC_SUPPRESSED counts the EDC's own stop predictions whatever the override.
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["always"])
        await sim.draft(ctx, 20000)
        await sim.offer(ctx, d.draft_request, {"length": 2})
    # GTS stalls: a request waits while a task runs.
    await sim.cycles(ctx, 5)                   # the last draft task ends
    sim.task_done = False
    await sim.offer(ctx, d.draft_request, {"length": 2})
    await sim.offer(ctx, d.draft_request, {"length": 2}, cycles=EVENTS + 2)
    sim.task_done = True
    # EDC FIFO drops: drafts without verification results (at the entropies the rejections
    # above trained towards stop).
    for i in range(8 + EVENTS):
        await sim.draft(ctx, 20000 + 1000 * (i % 3))
    # TVC record errors.
    for _ in range(EVENTS):
        await sim.offer(ctx, d.record, {"table": 1, "cycles": 5, "length": 0})
    # Push-back on the draft and the feedback queues.
    sim.draft_ready = False
    for _ in range(8):
        await sim.draft(ctx, 100)
    await sim.offer(ctx, d.draft_in, {"batch_id": 0, "length": 1, "kv_base": 0,
                                      "mean_entropy": 1}, cycles=EVENTS + 2)
    sim.draft_ready = True
    for _ in range(4):
        await sim.result(ctx, full=1, wait=False)
    await sim.offer(ctx, d.feedback_in, {"accepted_length": 1, "full": 1, "cycles": 1,
                                         "kv_length": 1}, domain="npu", cycles=EVENTS + 2)
    sim.feedback_ready = True
    # Push-back on the pre-verify queue: full, GTS busy, a stop's request waiting.
    sim.task_done = False
    await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["always"])
    await sim.draft(ctx, 100)
    await sim.offer(ctx, d.draft_request, {"length": 2})
    await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
    for _ in range(3):
        await sim.draft(ctx, 100)
        await sim.settle(ctx, 50)
    sim.task_done = True
    # Squashes, each discarding two stale drafts.
    for _ in range(EVENTS):
        sim.draft_ready = False
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["always"])
        for _ in range(2):
            await sim.draft(ctx, 100)
        await sim.settle(ctx, 10)
        ctx.set(d.squash, 1)
        await ctx.tick("npu").until(d.squash_ready)
        ctx.set(d.squash, 0)
        sim.draft_ready = True
        await sim.settle(ctx, 10)
    sim.feedback_ready = True
    await sim.settle(ctx, 100)


def run_traffic(counter_bits):
    """Counters after the traffic, after CTRL.clear_counters, after CTRL.soft_reset."""
    sim = ControllerSim(Controller(counter_bits=counter_bits, **DEPTHS))
    seen = {}

    async def body(ctx):
        await traffic(sim, ctx)
        seen["traffic"] = await sim.read_counters(ctx, COUNTERS)
        await sim.write_reg(ctx, "CTRL", sim.word("CTRL", enable=1, clear_counters=1))
        seen["clear"] = await sim.read_counters(ctx, COUNTERS)
        await sim.write_reg(ctx, "CTRL", sim.word("CTRL", enable=1, soft_reset=1))
        seen["soft"] = await sim.read_counters(ctx, COUNTERS)
    sim.run(body)
    return seen


@pytest.fixture(scope="module")
def wide():
    return run_traffic(COUNTER_BITS)


@pytest.fixture(scope="module")
def narrow():
    return run_traffic(NARROW)


@pytest.mark.slow
@pytest.mark.parametrize("ident", [r.ident for r, _ in COUNTERS])
def test_counter_saturates_or_wraps(wide, narrow, ident):
    """Past 2**4 events, the narrow build's counter reads 15 if it saturates, the normal count
    modulo 16 if it wraps (as hw/regs.rdl documents each)."""
    field = RM[ident].field("count")
    count = wide["traffic"][ident]
    assert count >= 1 << NARROW, f"{ident}: only {count} events, the script must reach the wrap"
    top = (1 << NARROW) - 1
    want = min(count, top) if field.counting == "saturates" else count & top
    assert narrow["traffic"][ident] == want, f"{ident} ({field.counting}) of {count} events"


@pytest.mark.slow
@pytest.mark.parametrize("ident", [r.ident for r, _ in COUNTERS])
def test_counters_clear_as_documented(wide, narrow, ident):
    """CTRL.clear_counters zeroes its counters and leaves the others; CTRL.soft_reset then
    zeroes the EDC, TVC and GTS counters."""
    for seen in (wide, narrow):
        if ident in cleared_by_clear_counters():
            assert seen["clear"][ident] == 0
        else:
            assert seen["clear"][ident] == seen["traffic"][ident]
            assert seen["soft"][ident] == 0
