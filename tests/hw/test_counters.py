"""ahasd.hw.counters.EventCounter in the Amaranth simulator, within and across clock domains."""

import random

import pytest
from amaranth import ClockDomain, Module

from ahasd.hw.counters import EventCounter
from ahasd.tb.amaranth_sim import simulate


def _design(crossing, late_event=False, carry_select=None):
    """An 8-bit counter read in ``sync``, counting in ``ev`` when ``crossing`` (its subtraction
    built as for ``carry_select``: None, the default, is the 28 nm build)."""
    domain = "ev" if crossing else "sync"
    dut = EventCounter(width=8, domain=domain, read_domain="sync", late_event=late_event,
                       carry_select=carry_select)
    m = Module()
    m.submodules.dut = dut
    if crossing:
        m.domains.ev = ClockDomain("ev")
    return domain, dut, m


def test_parameters_are_validated():
    with pytest.raises(ValueError, match=r"width must be an integer in 1\.\.64, not 0"):
        EventCounter(width=0)
    with pytest.raises(ValueError, match=r"domain must be a clock domain name, not '1x'"):
        EventCounter(domain="1x")
    with pytest.raises(ValueError, match=r"late_event must be a bool, not 1"):
        EventCounter(late_event=1)
    with pytest.raises(TypeError, match="carry_select must be a bool"):
        EventCounter(carry_select="yes")
    with pytest.raises(ValueError, match=r"late_event needs domain == read_domain"):
        EventCounter(domain="npu", late_event=True)


@pytest.mark.parametrize("late_event", [False, True])
def test_same_domain_count_is_exact(late_event):
    """Within one domain the count after each edge is the events before it since the last
    clear (a clear's own event counts), cycle for cycle, with or without ``late_event``."""
    _, dut, m = _design(False, late_event)
    rng = random.Random(7)

    async def testbench(ctx):
        expected, peak, clears = 0, 0, 0
        for cycle in range(600):
            fire, clear = rng.random() < 0.6, rng.random() < 0.01
            ctx.set(dut.event, fire)
            ctx.set(dut.clear, clear)
            await ctx.tick()
            expected = fire if clear else (expected + fire) % 256
            assert ctx.get(dut.count) == expected, (cycle, expected)
            peak, clears = max(peak, expected), clears + clear
        assert peak >= 30 and clears >= 2, (peak, clears)

    simulate(m, testbench)


@pytest.mark.parametrize("event_period, crossing, carry_select", [
    (1000, False, None), (1000, True, None), (700, True, None), (2900, True, None),
    (700, True, False), (2900, True, False)])   # False: the FPGA build's one subtraction
def test_counts_every_event_and_clears(event_period, crossing, carry_select):
    """Random events (one per event-clock cycle at most) are all counted; the reader never sees
    a value outside [events before the synchroniser delay, events so far]; a clear restarts."""
    domain, dut, m = _design(crossing, carry_select=carry_select)
    clocks = {"sync": 1e-9, **({"ev": event_period * 1e-12} if crossing else {})}
    rng = random.Random(event_period)
    state = {"events": 0, "base": 0, "done": False}

    async def producer(ctx):
        for _ in range(600):
            fire = rng.random() < 0.6
            ctx.set(dut.event, fire)
            await ctx.tick(domain)
            state["events"] += fire
        ctx.set(dut.event, 0)
        state["done"] = True

    async def reader(ctx):
        cleared = False
        while not state["done"]:
            count = ctx.get(dut.count)
            total = (state["events"] - state["base"]) % 256
            # The reader lags by at most a few cycles' worth of events.
            assert (total - count) % 256 <= 8, (count, total)
            if not cleared and state["events"] > 200:
                ctx.set(dut.clear, 1)
                await ctx.tick()
                ctx.set(dut.clear, 0)
                # The clear stores what the reader saw in that cycle: `count` events.
                state["base"] += count
                cleared = True
                continue
            await ctx.tick()
        for _ in range(8):
            await ctx.tick()
        assert cleared
        assert ctx.get(dut.count) == (state["events"] - state["base"]) % 256

    simulate(m, producer, reader, clocks=clocks)


@pytest.mark.parametrize("crossing, late_event, carry_select", [
    (False, False, None), (True, False, None), (False, True, None), (True, False, False)])
def test_read_latency_of_one_event(crossing, late_event, carry_select):
    """Within one domain the count shows an event right after its clock edge; across domains it
    passes the Gray register (event clock), the two synchroniser flip-flops and the count
    register (three read-clock edges, one more when the Gray register's edge falls just after a
    read edge): three or four read-clock edges, as documented, never at once."""
    domain, dut, m = _design(crossing, late_event, carry_select)
    clocks = {"sync": 1e-9, **({"ev": (1e-9, 0.3e-9)} if crossing else {})}
    seen = {}

    async def testbench(ctx):
        for _ in range(5):
            await ctx.tick()
        assert ctx.get(dut.count) == 0
        ctx.set(dut.event, 1)
        await ctx.tick(domain)
        ctx.set(dut.event, 0)
        lag = 0
        while ctx.get(dut.count) == 0 and lag < 10:
            await ctx.tick()
            lag += 1
        seen["lag"] = lag
        for _ in range(5):
            await ctx.tick()
        seen["final"] = ctx.get(dut.count)

    simulate(m, testbench, clocks=clocks)
    assert seen["final"] == 1
    assert (3 <= seen["lag"] <= 4) if crossing else seen["lag"] == 0, seen


def test_fpga_targets_build_one_subtraction():
    """Elaborated for an FPGA family (the FPGA flow's ``platform``) a crossing counter subtracts
    in one carry chain; otherwise (plain Verilog, the 28 nm flows) with its halves' carry select
    (the halves' candidate differences are named signals)."""
    from ahasd.hw.blocks import to_verilog
    from ahasd.hw.construction import on_fpga

    def verilog(platform):
        return to_verilog(EventCounter(width=16, domain="npu", read_domain="sync"), "counter",
                          platform)
    assert "gray_diff_lo_even" in verilog(None) and "gray_diff_lo_even" not in verilog("ecp5")
    assert "gray_diff_lo_even" not in verilog("ice40")
    assert [on_fpga(p) for p in (None, "formal", "ecp5", "ice40", object())] == [
        False, False, True, True, True]
