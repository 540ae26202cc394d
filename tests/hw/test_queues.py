"""The Queues block (all three queues) in Amaranth's simulator: feedback across the clock
crossing and pre-verify in the PIM domain, with random stalls, against the golden FIFO model;
full queues push back. The long runs are in ``test_hw_queues_cocotb.py``."""

import random

import pytest
from amaranth.hdl import Fragment
from amaranth.sim import Simulator

from ahasd.hw.queues import DescriptorQueue, Queues
from ahasd.hw.descriptors import FeedbackDescriptor as FeedbackLayout
from ahasd.sim.blocks.descriptors import FeedbackDescriptor, PreverifyDescriptor
from ahasd.sim.blocks.queues import QueueModel

NS = 1e-9


def random_feedback(rng):
    return FeedbackDescriptor(accepted_length=rng.randrange(256), full=rng.randrange(2),
                              cycles=rng.randrange(1 << 32), kv_length=rng.randrange(1 << 16))


def random_preverify(rng):
    return PreverifyDescriptor(verify_length=rng.randrange(16), urgent=rng.randrange(2))


def stream_scoreboard(port_in, port_out, w_domain, r_domain, items, seed, p_push, p_pop, golden,
                      done):
    """Producer and consumer testbenches for one queue; the consumer checks every item."""
    cls = type(items[0])

    async def producer(ctx):
        rng = random.Random(seed)
        index, valid = 0, False
        while index < len(items):
            if not valid and rng.random() < p_push:
                valid = True
                ctx.set(port_in.payload.as_value(), items[index].pack())
            ctx.set(port_in.valid, valid)
            *_, ready = await ctx.tick(w_domain).sample(port_in.ready)
            if valid and ready:
                golden.push(items[index])
                index += 1
                valid = False
        ctx.set(port_in.valid, 0)

    async def consumer(ctx):
        rng = random.Random(seed + 1)
        while golden.popped < len(items):
            ready = rng.random() < p_pop
            ctx.set(port_out.ready, ready)
            *_, valid, payload = await ctx.tick(r_domain).sample(port_out.valid,
                                                                 port_out.payload.as_value())
            if valid and ready:
                golden.pop(cls.unpack(payload))
        ctx.set(port_out.ready, 0)
        done.append(golden)

    return [producer, consumer]


@pytest.mark.parametrize("npu_ns,pim_ns", [(1.0, 1.25), (1.25, 1.0), (1.0, 3.0), (3.0, 1.0)])
def test_feedback_and_preverify_random_stalls(npu_ns, pim_ns):
    dut = Queues()
    rng = random.Random(17)
    feedback = [random_feedback(rng) for _ in range(600)]
    preverify = [random_preverify(rng) for _ in range(600)]
    done = []
    sim = Simulator(dut)
    sim.add_clock(npu_ns * NS, domain="npu")
    sim.add_clock(pim_ns * NS, domain="pim", phase=0.41 * pim_ns * NS)
    for tb in stream_scoreboard(dut.feedback.i_stream, dut.feedback.o_stream, "npu", "pim",
                                feedback, 1, 0.6, 0.5, QueueModel(), done):
        sim.add_testbench(tb)
    for tb in stream_scoreboard(dut.preverify.i_stream, dut.preverify.o_stream, "pim", "pim",
                                preverify, 3, 0.5, 0.6, QueueModel(depth=16), done):
        sim.add_testbench(tb)
    sim.run_until(600 * 12 * max(npu_ns, pim_ns) * NS)
    assert len(done) == 2 and all(g.popped == 600 and len(g) == 0 for g in done)


@pytest.mark.parametrize("name,depth,w,r", [("feedback", 32, "npu", "pim"),
                                            ("preverify", 16, "pim", "pim")])
def test_full_queue_pushes_back(name, depth, w, r):
    dut = Queues()
    port = getattr(dut, name)
    cls = FeedbackDescriptor if name == "feedback" else PreverifyDescriptor
    rng = random.Random(2)
    items = [random_feedback(rng) if name == "feedback" else random_preverify(rng)
             for _ in range(depth + 10)]
    accepted, got = [], []

    async def producer(ctx):
        for item in items:
            ctx.set(port.i_stream.payload.as_value(), item.pack())
            ctx.set(port.i_stream.valid, 1)
            await ctx.tick(w).until(port.i_stream.ready)
            accepted.append(item)
        ctx.set(port.i_stream.valid, 0)

    async def consumer(ctx):
        await ctx.tick(r).repeat(150)
        assert len(accepted) == depth          # the rest wait: pushed back, not dropped
        assert ctx.get(port.w_level) == depth and ctx.get(port.r_level) == depth
        ctx.set(port.o_stream.ready, 1)
        while len(got) < len(items):
            *_, valid, payload = await ctx.tick(r).sample(port.o_stream.valid,
                                                         port.o_stream.payload.as_value())
            if valid:
                got.append(cls.unpack(payload))

    sim = Simulator(dut)
    sim.add_clock(1e-9, domain="npu")
    sim.add_clock(1.25e-9, domain="pim")
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.run_until(600e-9)
    assert got == items


def test_default_depths_and_ports():
    dut = Queues()
    assert dut._draft.depth == 64 and dut._feedback.depth == 32 and dut._preverify.depth == 16
    assert len(dut.draft.i_stream.payload.as_value()) == 56
    assert len(dut.feedback.o_stream.payload.as_value()) == 57
    assert len(dut.preverify.o_stream.payload.as_value()) == 5
    Fragment.get(dut, None)  # elaborates (and so uses) the block and its three queues


def test_bad_parameters_are_rejected():
    with pytest.raises(ValueError, match=r"feedback_depth must be a power of two >= 2, not 24"):
        Queues(feedback_depth=24)
    with pytest.raises(ValueError, match=r"preverify_depth must be a power of two >= 2, not 1"):
        Queues(preverify_depth=1)
    with pytest.raises(ValueError, match=r"npu_domain and pim_domain must differ, both are 'x'"):
        Queues(npu_domain="x", pim_domain="x")
    with pytest.raises(ValueError, match=r"depth must be a power of two >= 2, not 3"):
        DescriptorQueue(layout=FeedbackLayout, depth=3)


def test_verilog_is_lint_clean(tmp_path):
    from ahasd.commands.verilog import write_verilog
    path = write_verilog("queues", tmp_path)      # raises VerilatorError on any warning
    text = path.read_text()
    for port in ("npu_clk", "pim_clk", "draft__squash", "draft__w_squash", "draft__discarded",
                 "feedback__o_stream__payload", "preverify__i_stream__ready"):
        assert port in text, port


@pytest.mark.slow
def test_area_report_counts_the_three_fifos(tmp_path):
    from ahasd.commands.verilog import write_verilog
    from ahasd.synth.yosys import area_of_verilog
    path = write_verilog("queues", tmp_path, lint=False)
    report = area_of_verilog(path, "queues", tmp_path / "area")
    # Storage: draft 64 x (56 + 8-bit epoch tag), feedback 32 x 57, pre-verify 15 x 5 (the
    # buffered sync FIFO keeps its last entry in the output register).
    assert report.memory_bits == 64 * 64 + 32 * 57 + 15 * 5
    assert report.area_ge > 0
