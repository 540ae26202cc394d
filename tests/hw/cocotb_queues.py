"""cocotb scoreboard for the Verilated Queues block: all three queues at once, two clocks.

Run by ``tests/hw/test_queues_cocotb.py`` through ``ahasd.tb.cocotb_run.run_cocotb``. Producers and
consumers on both sides stall at random (with phases of light and heavy traffic, so that queues
fill up and push back and also run dry); the NPU squashes the draft queue at random. Every
descriptor that comes out is checked against the golden models of :mod:`ahasd.sim.blocks.queues`
as it comes out; at the end every queue must be empty, every live descriptor delivered and the
RTL's ``discarded`` count equal to the golden model's.

The producers and consumers are the shared stream drivers (:mod:`ahasd.tb.cocotb_streams`), run
in a fixed order per clock: on the PIM clock a squash reaching the producer is booked before the
same cycle's push (it carries the new epoch); on the NPU clock a pop in the squash cycle is booked
before the squash.
"""

import json
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, Timer

from ahasd.hw import descriptors as layouts
from ahasd.sim.blocks.queues import QueueModel, SquashQueueModel
from ahasd.spec.descriptors import DraftDescriptor, FeedbackDescriptor, PreverifyDescriptor
from ahasd.tb.cocotb_run import params
from ahasd.tb.cocotb_streams import Step, StreamSink, StreamSource, run_in_order
from ahasd.tb.generators import pauses

#: Traffic phases: (probability a producer offers, probability a consumer is ready).
PHASES = [(0.9, 0.9), (0.95, 0.2), (0.2, 0.95), (0.6, 0.6), (1.0, 1.0), (0.5, 0.05)]


def random_items(rng, cls, count):
    """``count`` descriptors of ``cls`` with random fields; the first field (16 bits for drafts)
    carries the serial number where it fits, so that a duplicate stands out."""
    items = []
    for i in range(count):
        fields = {name: rng.getrandbits(bits) for name, bits in cls.FIELDS}
        first, bits = cls.FIELDS[0]
        fields[first] = i % (1 << bits)
        items.append(cls(**fields))
    return items


class Side:
    """The drivers of one clock domain, with the traffic phase of its cycle count."""

    def __init__(self, dut, clock, st, rng, shift):
        self.dut, self.clock, self.st, self.rng = dut, clock, st, rng
        self.shift = shift
        self.cycle = 0
        self.phase = PHASES[0]

    def tick(self):
        self.cycle += 1
        self.phase = PHASES[(self.cycle // self.st["phase_cycles"] + self.shift) % len(PHASES)]

    def source(self, name, layout, items, golden):
        src = StreamSource(self.dut, f"{name}__i_stream", self.clock, layout,
                           on_accept=golden.push, start=False)
        for item in items:
            src.send(item)
        src.set_idle_generator(pauses(lambda: 1 - self.phase[0], self.rng))
        return src

    def sink(self, name, layout, cls, golden):
        sink = StreamSink(self.dut, f"{name}__o_stream", self.clock, layout, cls=cls,
                          on_item=golden.pop, keep=False, start=False)
        sink.set_backpressure_generator(pauses(lambda: 1 - self.phase[1], self.rng))
        return sink


def start_pim_side(dut, st, rng):
    """PIM clock: draft producer, pre-verify consumer and producer, feedback consumer."""
    side = Side(dut, dut.pim_clk, st, rng, 0)
    golden_d, golden_f, golden_p = st["draft"], st["feedback"], st["preverify"]

    def watch():
        if int(dut.draft__w_squash.value):   # before this cycle's push: it carries the new epoch
            golden_d.w_squash()
            st["w_squashes"] += 1
        if int(dut.draft__w_level.value) == st["draft_depth"]:
            st["draft_full_cycles"] += 1

    st["draft_source"] = side.source("draft", layouts.DraftDescriptor, st["draft_items"],
                                     golden_d)
    st["preverify_source"] = side.source("preverify", layouts.PreverifyDescriptor,
                                         st["preverify_items"], golden_p)
    parts = [Step(sample=watch, drive=side.tick), st["draft_source"],
             side.sink("preverify", layouts.PreverifyDescriptor, PreverifyDescriptor, golden_p),
             st["preverify_source"],
             side.sink("feedback", layouts.FeedbackDescriptor, FeedbackDescriptor, golden_f)]
    cocotb.start_soon(run_in_order(dut.pim_clk, parts))
    return side


def start_npu_side(dut, st, rng):
    """NPU clock: draft consumer with random squashes, feedback producer."""
    side = Side(dut, dut.npu_clk, st, rng, 2)
    golden_d = st["draft"]
    squash = {"on": False}
    dut.draft__squash.value = 0

    def squash_sample():
        if squash["on"] and int(dut.draft__squash_ready.value):
            golden_d.squash()            # accepted at the coming edge, after its pop
            squash["on"] = False

    def squash_drive():
        if not squash["on"] and st["draft_source"].busy and rng.random() < st["p_squash"]:
            squash["on"] = True
        dut.draft__squash.value = squash["on"]

    st["feedback_source"] = side.source("feedback", layouts.FeedbackDescriptor,
                                        st["feedback_items"], st["feedback"])
    st["squashing"] = lambda: squash["on"]
    parts = [Step(drive=side.tick),
             side.sink("draft", layouts.DraftDescriptor, DraftDescriptor, golden_d),
             Step(sample=squash_sample, drive=squash_drive), st["feedback_source"]]
    cocotb.start_soon(run_in_order(dut.npu_clk, parts))
    return side


@cocotb.test()
async def queues_scoreboard(dut):
    p = params()
    rng = random.Random(p["seed"])
    n = p["count"]
    st = {
        "draft": SquashQueueModel(), "feedback": QueueModel(),
        "preverify": QueueModel(depth=p["preverify_depth"]),
        "draft_items": random_items(rng, DraftDescriptor, n),
        "feedback_items": random_items(rng, FeedbackDescriptor, n),
        "preverify_items": random_items(rng, PreverifyDescriptor, n),
        "draft_depth": p["draft_depth"], "p_squash": p["p_squash"],
        "phase_cycles": p["phase_cycles"], "w_squashes": 0, "draft_full_cycles": 0,
    }
    cocotb.start_soon(Clock(dut.npu_clk, p["npu_ps"], unit="ps").start())
    # Offset the PIM clock so that equal periods do not give coincident edges.
    await Timer(p["npu_ps"] * 37 // 100, unit="ps")
    cocotb.start_soon(Clock(dut.pim_clk, p["pim_ps"], unit="ps").start())
    dut.npu_rst.value = 1
    dut.pim_rst.value = 1
    for _ in range(4):
        await FallingEdge(dut.npu_clk)
        await FallingEdge(dut.pim_clk)
    dut.npu_rst.value = 0
    dut.pim_rst.value = 0
    pim = start_pim_side(dut, st, random.Random(p["seed"] + 1))
    npu = start_npu_side(dut, st, random.Random(p["seed"] + 2))
    golden_d, golden_f, golden_p = st["draft"], st["feedback"], st["preverify"]
    sources = [st["draft_source"], st["preverify_source"], st["feedback_source"]]
    quiet = 0
    limit = p["max_pim_cycles"]
    while True:
        await FallingEdge(dut.pim_clk)
        drained = (not any(source.busy for source in sources) and not st["squashing"]()
                   and golden_f.popped == n
                   and golden_p.popped == n and golden_d.drain() == []
                   and int(dut.draft__r_level.value) == 0)
        quiet = quiet + 1 if drained else 0
        if quiet > 32:   # longer than any synchroniser latency: nothing is in flight
            break
        assert pim.cycle < limit, (
            f"no progress after {limit} PIM cycles: draft {golden_d.pushed} pushed / "
            f"{golden_d.delivered} delivered / {golden_d.discarded} discarded, feedback "
            f"{golden_f.popped}/{n}, pre-verify {golden_p.popped}/{n}")
    assert golden_d.pushed == n and golden_f.pushed == n and golden_p.pushed == n
    assert golden_d.drain() == [], "live draft descriptors never delivered"
    assert len(golden_f) == 0 and len(golden_p) == 0
    assert golden_d.delivered + golden_d.discarded == n
    assert int(dut.draft__discarded.value) == golden_d.discarded, (
        f"RTL discarded {int(dut.draft__discarded.value)}, golden {golden_d.discarded}")
    assert st["w_squashes"] == golden_d.squashes
    # The run must have exercised what it claims to test.
    assert golden_d.squashes > 0 and golden_d.discarded > 0
    assert st["draft_full_cycles"] > 0
    pushbacks = {name: st[f"{name}_source"].stalls for name in ("draft", "feedback", "preverify")}
    assert all(count > 0 for count in pushbacks.values()), pushbacks
    moved = golden_d.delivered + golden_d.discarded + golden_f.popped + golden_p.popped
    if p.get("summary"):   # what the run did, for the pytest side's summary line
        with open(p["summary"], "w") as out:
            json.dump({"draft_delivered": golden_d.delivered,
                       "draft_discarded": golden_d.discarded, "squashes": golden_d.squashes,
                       "feedback": golden_f.popped, "preverify": golden_p.popped,
                       "descriptors": moved, "pim_cycles": pim.cycle, "npu_cycles": npu.cycle,
                       "pushbacks": pushbacks}, out)
    dut._log.info(
        "queues npu %d ps / pim %d ps: draft %d delivered + %d discarded (%d squashes), "
        "feedback %d, pre-verify %d; %d descriptors in %d PIM / %d NPU cycles; push-backs %s",
        p["npu_ps"], p["pim_ps"], golden_d.delivered, golden_d.discarded, golden_d.squashes,
        golden_f.popped, golden_p.popped, moved, pim.cycle, npu.cycle, pushbacks)
