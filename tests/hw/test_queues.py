"""The Queues block (all three queues) in Amaranth's simulator: feedback across the clock
crossing and pre-verify in the PIM domain, with random stalls, against the golden FIFO model;
full queues push back. The long runs are in ``test_hw_queues_cocotb.py``."""

import random

import pytest
from amaranth.hdl import Fragment

from ahasd.hw.descriptors import FeedbackDescriptor as FeedbackLayout
from ahasd.hw.queues import DescriptorQueue, Queues
from ahasd.sim.blocks.queues import QueueModel
from ahasd.spec.descriptors import FeedbackDescriptor, PreverifyDescriptor
from ahasd.tb.amaranth_sim import StreamSink, StreamSource, fields_of, simulate
from ahasd.tb.generators import pauses

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
    source = StreamSource(port_in, items, domain=w_domain, on_accept=golden.push)
    source.set_idle_generator(pauses(1 - p_push, seed))
    sink = StreamSink(port_out, lambda: golden.popped >= len(items), domain=r_domain,
                      on_item=lambda payload: golden.pop(fields_of(payload, cls)))
    sink.set_backpressure_generator(pauses(1 - p_pop, seed + 1))

    async def consumer(ctx):
        await sink.testbench(ctx)
        done.append(golden)

    return [source.testbench, consumer]


@pytest.mark.parametrize("npu_ns,pim_ns", [(1.0, 1.25), (1.25, 1.0), (1.0, 3.0), (3.0, 1.0)])
def test_feedback_and_preverify_random_stalls(npu_ns, pim_ns):
    dut = Queues()
    rng = random.Random(17)
    feedback = [random_feedback(rng) for _ in range(600)]
    preverify = [random_preverify(rng) for _ in range(600)]
    done = []
    testbenches = [
        *stream_scoreboard(dut.feedback.i_stream, dut.feedback.o_stream, "npu", "pim",
                           feedback, 1, 0.6, 0.5, QueueModel(), done),
        *stream_scoreboard(dut.preverify.i_stream, dut.preverify.o_stream, "pim", "pim",
                           preverify, 3, 0.5, 0.6, QueueModel(depth=16), done),
    ]
    simulate(dut, *testbenches, until=600 * 12 * max(npu_ns, pim_ns) * NS,
             clocks={"npu": npu_ns * NS, "pim": (pim_ns * NS, 0.41 * pim_ns * NS)})
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
    accepted = []
    source = StreamSource(port.i_stream, items, domain=w, on_accept=accepted.append)
    sink = StreamSink(port.o_stream, len(items), domain=r)

    async def consumer(ctx):
        await ctx.tick(r).repeat(150)
        assert len(accepted) == depth          # the rest wait: pushed back, not dropped
        assert ctx.get(port.w_level) == depth and ctx.get(port.r_level) == depth
        await sink.testbench(ctx)

    simulate(dut, source.testbench, consumer, until=600e-9,
             clocks={"npu": 1e-9, "pim": 1.25e-9})
    assert [fields_of(payload, cls) for payload in sink.items] == items


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
    from ahasd.synth.export import write_verilog
    path = write_verilog("queues", tmp_path)      # raises VerilatorError on any warning
    text = path.read_text()
    for port in ("npu_clk", "pim_clk", "draft__squash", "draft__w_squash", "draft__discarded",
                 "feedback__o_stream__payload", "preverify__i_stream__ready"):
        assert port in text, port


@pytest.mark.slow
def test_area_report_counts_the_three_fifos(tmp_path):
    from ahasd.synth.export import write_verilog
    from ahasd.synth.yosys import area_of_verilog
    path = write_verilog("queues", tmp_path, lint=False)
    report = area_of_verilog(path, "queues", tmp_path / "area")
    # Storage: draft 64 x (56 + 8-bit epoch tag) and feedback 32 x 57, each in two copies
    # (hw/cdc_fifo's fast_read: one copy read at the current pointer, one at the next),
    # pre-verify 15 x 5 (the buffered sync FIFO keeps its last entry in the output register).
    assert report.memory_bits == 2 * 64 * 64 + 2 * 32 * 57 + 15 * 5
    assert report.area_ge > 0
