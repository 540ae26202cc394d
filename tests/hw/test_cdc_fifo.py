"""ahasd.hw.cdc_fifo.AsyncFIFO against amaranth.lib.fifo.AsyncFIFO, side by side (fast tier).

Both FIFOs get the same random ``w_en`` / ``w_data`` / ``r_en`` (and write-domain resets) from
two unrelated clocks; every port of one must equal the same port of the other at every edge of
its domain. The reference is Amaranth's own FIFO, not a model written here.
"""

import random

import pytest
from amaranth import ClockDomain, Elaboratable, Module, ResetSignal, Signal
from amaranth.lib import fifo

from ahasd.hw.cdc_fifo import AsyncFIFO
from ahasd.tb.amaranth_sim import simulate

NS = 1e-9
CYCLES = 1500


class _Pair(Elaboratable):
    """The two FIFOs with their inputs tied together."""

    def __init__(self, width, depth, fast_read):
        self.ours = AsyncFIFO(width=width, depth=depth, w_domain="w", r_domain="r",
                              fast_read=fast_read)
        self.ref = fifo.AsyncFIFO(width=width, depth=depth, w_domain="w", r_domain="r")
        self.w_en, self.r_en = Signal(), Signal()
        self.w_data = Signal(width)
        self.w_rst = Signal()

    def elaborate(self, platform):
        m = Module()
        m.domains.w = ClockDomain()
        m.domains.r = ClockDomain()
        m.submodules.ours, m.submodules.ref = self.ours, self.ref
        m.d.comb += ResetSignal("w").eq(self.w_rst)
        for f in (self.ours, self.ref):
            m.d.comb += [f.w_en.eq(self.w_en), f.w_data.eq(self.w_data), f.r_en.eq(self.r_en)]
        return m


W_PORTS = ("w_rdy", "w_level")
R_PORTS = ("r_rdy", "r_data", "r_level", "r_rst")


@pytest.mark.parametrize("fast_read", [True, False])
@pytest.mark.parametrize("depth,w_period,r_period", [(4, 7, 10), (8, 10, 3.3), (2, 5, 5)])
def test_equal_to_amaranth_async_fifo(depth, w_period, r_period, fast_read):
    dut = _Pair(width=6, depth=depth, fast_read=fast_read)
    seen = {"w": 0, "r": 0, "reads": 0}

    async def writer(ctx):
        rng = random.Random(f"w {depth}")
        for cycle in range(CYCLES):
            ctx.set(dut.w_en, rng.random() < (0.8 if (cycle // 200) % 2 else 0.3))
            ctx.set(dut.w_data, rng.randrange(64))
            ctx.set(dut.w_rst, rng.random() < 0.004)
            values = (await ctx.tick("w").sample(
                *(getattr(dut.ours, p) for p in W_PORTS),
                *(getattr(dut.ref, p) for p in W_PORTS)))[2:]   # after the clock and reset
            ours, ref = values[:len(W_PORTS)], values[len(W_PORTS):]
            assert ours == ref, (cycle, dict(zip(W_PORTS, ours)), dict(zip(W_PORTS, ref)))
            seen["w"] += 1

    async def reader(ctx):
        rng = random.Random(f"r {depth}")
        for cycle in range(CYCLES):
            ctx.set(dut.r_en, rng.random() < (0.3 if (cycle // 150) % 2 else 0.9))
            values = (await ctx.tick("r").sample(
                *(getattr(dut.ours, p) for p in R_PORTS),
                *(getattr(dut.ref, p) for p in R_PORTS)))[2:]
            ours, ref = values[:len(R_PORTS)], values[len(R_PORTS):]
            if ref[0]:   # r_data is defined while r_rdy
                assert ours == ref, (cycle, dict(zip(R_PORTS, ours)), dict(zip(R_PORTS, ref)))
                seen["reads"] += 1
            else:
                assert (ours[0], ours[2], ours[3]) == (ref[0], ref[2], ref[3]), (cycle, ours, ref)
            seen["r"] += 1

    simulate(dut, writer, reader, clocks={"w": w_period * NS, "r": r_period * NS})
    assert seen["w"] == seen["r"] == CYCLES
    assert seen["reads"] > CYCLES // 10   # the comparison saw real traffic


@pytest.mark.parametrize("seed", range(4))
def test_registered_flags_equal_amaranth_at_random_clock_ratios(seed):
    """The registered ``w_rdy`` / ``r_rdy`` (computed from the next pointers and the
    synchronisers' first flops) equal Amaranth's combinational flags at every edge, at random
    clock ratios and phases, with write-domain resets often enough to hit a reset of a full
    FIFO (whose flag then depends on the stale read pointer)."""
    rng = random.Random(f"ratio {seed}")
    depth = rng.choice([2, 4, 8])
    w_period, r_period = rng.uniform(2, 12), rng.uniform(2, 12)
    dut = _Pair(width=4, depth=depth, fast_read=True)
    seen = {"full_after_reset": 0, "w_full": 0, "r_empty": 0}
    cycles = 1200

    async def writer(ctx):
        wrng = random.Random(f"w {seed}")
        reset_gap = 0
        for cycle in range(cycles):
            ctx.set(dut.w_en, wrng.random() < (0.95 if (cycle // 100) % 2 else 0.4))
            ctx.set(dut.w_data, wrng.randrange(16))
            reset = wrng.random() < 0.02
            ctx.set(dut.w_rst, reset)
            *_, ours, ref, level = await ctx.tick("w").sample(
                dut.ours.w_rdy, dut.ref.w_rdy, dut.ref.w_level)
            assert ours == ref, (cycle, ours, ref)
            seen["w_full"] += not ref
            seen["full_after_reset"] += (reset_gap == 1 and not ref)
            reset_gap = 0 if reset else reset_gap + 1

    async def reader(ctx):
        rrng = random.Random(f"r {seed}")
        for cycle in range(cycles * 2):
            ctx.set(dut.r_en, rrng.random() < (0.2 if (cycle // 120) % 2 else 0.9))
            *_, ours, ref = await ctx.tick("r").sample(dut.ours.r_rdy, dut.ref.r_rdy)
            assert ours == ref, (cycle, ours, ref)
            seen["r_empty"] += not ref

    simulate(dut, writer, background=[reader],
             clocks={"w": (w_period * NS, 0.31 * w_period * NS), "r": r_period * NS})
    assert seen["w_full"] > 20 and seen["r_empty"] > 20, seen


async def _transfer(ctx, domain, en, rdy, n):
    """Hold ``en`` until ``n`` transfers (cycles with ``rdy``) happened in ``domain``."""
    ctx.set(en, 1)
    done = 0
    while done < n:
        *_, ready = await ctx.tick(domain).sample(rdy)
        done += ready
    ctx.set(en, 0)


def test_full_flag_right_after_a_reset_of_a_full_fifo():
    """A write-domain reset of a full FIFO: Amaranth's flag compares the cleared write pointer
    with the not yet cleared read pointer, so the FIFO may look full in the cycle after the
    reset; the registered flag (its zero-pointer register) shows the same."""
    dut = _Pair(width=4, depth=4, fast_read=True)
    seen = []

    async def writer(ctx):
        # Eight writes against four reads: the read pointer at 4 (Gray 110), the write pointer
        # at 8 (0 in three bits), full; the reset keeps the write pointer at 0: still full.
        await _transfer(ctx, "w", dut.w_en, dut.ref.w_rdy, 8)
        for _ in range(10):
            await ctx.tick("w")
        ctx.set(dut.w_rst, 1)
        await ctx.tick("w")
        ctx.set(dut.w_rst, 0)
        for _ in range(8):
            *_, ours, ref = await ctx.tick("w").sample(dut.ours.w_rdy, dut.ref.w_rdy)
            assert ours == ref
            seen.append(ref)

    async def reader(ctx):
        await _transfer(ctx, "r", dut.r_en, dut.ref.r_rdy, 4)

    simulate(dut, writer, reader, clocks={"w": 5 * NS, "r": 7 * NS})
    assert seen[0] == 0, "the scenario should show the reference's full flag after the reset"


@pytest.mark.parametrize("seed", range(3))
def test_level_at_least_equals_the_comparison_every_cycle(seed):
    """``r_level_at_least(threshold)`` (two comparisons of the pointers, no subtraction first)
    is ``r_level >= threshold`` at every read edge, for random thresholds (0, up to beyond
    ``2**bits``, 16 bits wide), random traffic and write-domain resets (after which the level
    may read above the depth for a few cycles)."""
    rng = random.Random(f"level {seed}")
    depth = rng.choice([2, 4, 8])
    dut = _Pair(width=4, depth=depth, fast_read=True)
    thresholds = [Signal(16, name="threshold"), Signal(2, name="narrow")]
    reached = [dut.ours.r_level_at_least(t) for t in thresholds]
    seen = set()

    async def writer(ctx):
        wrng = random.Random(f"w {seed}")
        for cycle in range(1200):
            ctx.set(dut.w_en, wrng.random() < (0.9 if (cycle // 100) % 2 else 0.3))
            ctx.set(dut.w_rst, wrng.random() < 0.01)
            await ctx.tick("w")

    async def reader(ctx):
        rrng = random.Random(f"r {seed}")
        for cycle in range(2000):
            ctx.set(dut.r_en, rrng.random() < (0.2 if (cycle // 120) % 2 else 0.9))
            if cycle % 7 == 0:
                ctx.set(thresholds[0], rrng.choice([0, 1, depth, depth + 1, 2 * depth, 2 * depth + 1,
                                                    0x8000, rrng.randrange(3 * depth)]))
                ctx.set(thresholds[1], rrng.randrange(4))
            sampled = await ctx.tick("r").sample(dut.ours.r_level, *thresholds, *reached)
            level, values, flags = sampled[2], sampled[3:5], sampled[5:]
            for value, flag in zip(values, flags):
                assert flag == (level >= value), (cycle, level, value, flag)
                seen.add((flag, level > depth))

    simulate(dut, writer, background=[reader], clocks={"w": 4.3 * NS, "r": 3 * NS})
    assert {(0, False), (1, False)} <= seen, seen
