"""GEMV's activation port on its own (Amaranth simulator, no DRAM traffic): taken while idle up
to max_n, never in the cycle ``start`` is high (start rewinds the buffer, so that activation
would be lost), and ``n`` checked against the activations loaded at its boundary."""

from amaranth.sim import Simulator

from ahasd.hw.gemv import GEMV
from ahasd.spec.dram import DRAMConfig

CONFIG = DRAMConfig(t_rcd=5, t_rp=4, t_ras=9, t_ccd=2, t_rrd=2, t_faw=10, t_refi=150, t_rfc=20,
                    t_rfcpb=10, t_pbr2pbr=5, t_pbr2act=2, t_rl=4, row_bytes=64, burst_bytes=8,
                    n_banks=2, rows=16)


def bench(body, max_n=4):
    dut = GEMV(config=CONFIG, max_n=max_n, max_m=8)
    seen = {}

    async def tb(ctx):
        await body(ctx, dut, seen)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
    return seen


async def load(ctx, dut, n):
    """Offer ``n`` activations one per cycle; return the ready level seen in each cycle."""
    ready = []
    for v in range(n):
        ctx.set(dut.x_stream.valid, 1)
        ctx.set(dut.x_stream.payload, v + 1)
        ready.append(ctx.get(dut.x_stream.ready))
        await ctx.tick()
    ctx.set(dut.x_stream.valid, 0)
    return ready


def test_activations_are_taken_up_to_max_n():
    async def body(ctx, dut, seen):
        seen["ready"] = await load(ctx, dut, 6)
    assert bench(body)["ready"] == [1, 1, 1, 1, 0, 0]


def test_no_activation_is_taken_in_the_start_cycle():
    async def body(ctx, dut, seen):
        await load(ctx, dut, 2)
        ctx.set(dut.m, 1)
        ctx.set(dut.n, 2)
        ctx.set(dut.start, 1)
        ctx.set(dut.x_stream.valid, 1)
        seen["ready_at_start"] = ctx.get(dut.x_stream.ready)
        await ctx.tick()
        ctx.set(dut.start, 0)
        ctx.set(dut.x_stream.valid, 0)
        seen["busy"] = ctx.get(dut.busy)
        seen["ready_busy"] = ctx.get(dut.x_stream.ready)
        seen["error"] = ctx.get(dut.error)
    seen = bench(body)
    assert seen == {"ready_at_start": 0, "busy": 1, "ready_busy": 0, "error": 0}


def test_n_is_checked_against_the_activations_loaded():
    def attempt(loaded, n):
        async def body(ctx, dut, seen):
            await load(ctx, dut, loaded)
            ctx.set(dut.m, 1)
            ctx.set(dut.n, n)
            ctx.set(dut.start, 1)
            await ctx.tick()
            ctx.set(dut.start, 0)
            seen["busy"], seen["error"] = ctx.get(dut.busy), ctx.get(dut.error)
        return bench(body)
    assert attempt(3, 3) == {"busy": 1, "error": 0}       # n == activations loaded: runs
    assert attempt(3, 4) == {"busy": 0, "error": 1}       # one more: rejected
    assert attempt(3, 0) == {"busy": 0, "error": 1}
