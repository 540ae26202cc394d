"""cocotb scoreboard for the Verilated Queues block: all three queues at once, two clocks.

Run by ``tests/hw/test_queues_cocotb.py`` through ``ahasd.tb.cocotb_run.run_cocotb``. Producers and consumers on
both sides stall at random (with phases of light and heavy traffic, so that queues fill up and push
back and also run dry); the NPU squashes the draft queue at random. Every descriptor that comes out
is checked against the golden models of :mod:`ahasd.sim.blocks.queues` as it comes out; at the end every
queue must be empty, every live descriptor delivered and the RTL's ``discarded`` count equal to the
golden model's.

Each domain has one coroutine that wakes at the falling edge of its clock, reads the state-only
handshake outputs (``ready``, ``valid``, ``squash_ready``, ``w_squash`` depend on no input), drives
the inputs for the next rising edge and books the transfers that edge will make.
"""

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, Timer

from ahasd.hw.descriptors import PreverifyDescriptor as PreverifyLayout
from ahasd.sim.blocks.queues import QueueModel, SquashQueueModel

from ahasd.tb.cocotb_run import params

#: Traffic phases: (probability a producer offers, probability a consumer is ready).
PHASES = [(0.9, 0.9), (0.95, 0.2), (0.2, 0.95), (0.6, 0.6), (1.0, 1.0), (0.5, 0.05)]


def descriptor_source(rng, bits, count):
    """Random payloads, the serial number in the low 16 bits (a duplicate stands out)."""
    high = bits - 16
    return [(rng.getrandbits(high) << 16) | (i & 0xFFFF) for i in range(count)]


class Producer:
    """Stream producer: holds valid and payload until accepted (AXI-Stream rule)."""

    def __init__(self, dut, prefix, items):
        self.valid = getattr(dut, f"{prefix}__i_stream__valid")
        self.ready = getattr(dut, f"{prefix}__i_stream__ready")
        self.payload = getattr(dut, f"{prefix}__i_stream__payload")
        self.items = items
        self.index = 0
        self.offering = False
        self.pushbacks = 0
        self.valid.value = 0

    def cycle(self, p_offer, rng):
        """Drive valid/payload for the coming edge; return the item it will transfer, or None."""
        if not self.offering and self.index < len(self.items) and rng.random() < p_offer:
            self.offering = True
            self.payload.value = self.items[self.index]
        self.valid.value = self.offering
        if not self.offering:
            return None
        if not int(self.ready.value):
            self.pushbacks += 1
            return None
        self.offering = False
        self.index += 1
        return self.items[self.index - 1]

    @property
    def finished(self):
        return self.index == len(self.items)


class Consumer:
    def __init__(self, dut, prefix):
        self.valid = getattr(dut, f"{prefix}__o_stream__valid")
        self.ready = getattr(dut, f"{prefix}__o_stream__ready")
        self.payload = getattr(dut, f"{prefix}__o_stream__payload")
        self.ready.value = 0

    def cycle(self, p_ready, rng):
        """Drive ready for the coming edge; return the item it will take, or None."""
        ready = rng.random() < p_ready
        self.ready.value = ready
        if ready and int(self.valid.value):
            return int(self.payload.value)
        return None


async def pim_side(dut, st, rng):
    """PIM clock: draft producer, feedback consumer, pre-verify producer and consumer."""
    draft_p = Producer(dut, "draft", st["draft_items"])
    pre_p = Producer(dut, "preverify", st["preverify_items"])
    fb_c = Consumer(dut, "feedback")
    pre_c = Consumer(dut, "preverify")
    w_squash = dut.draft__w_squash
    draft_level = dut.draft__w_level
    golden_d, golden_f, golden_p = st["draft"], st["feedback"], st["preverify"]
    cycle = 0
    while not st["stop"]:
        await FallingEdge(dut.pim_clk)
        cycle += 1
        p_offer, p_ready = PHASES[(cycle // st["phase_cycles"]) % len(PHASES)]
        if int(w_squash.value):          # before this cycle's push: it carries the new epoch
            golden_d.w_squash()
            st["w_squashes"] += 1
        if int(draft_level.value) == st["draft_depth"]:
            st["draft_full_cycles"] += 1
        pushed = draft_p.cycle(p_offer, rng)
        if pushed is not None:
            golden_d.push(pushed)
        # Pre-verify: both ends in this domain; the golden model is bounded by the real depth.
        item = pre_c.cycle(p_ready, rng)
        if item is not None:
            golden_p.pop(item)
        pushed = pre_p.cycle(p_offer, rng)
        if pushed is not None:
            golden_p.push(pushed)
        item = fb_c.cycle(p_ready, rng)
        if item is not None:
            golden_f.pop(item)
        st["pim_cycles"] = cycle
        st["pim_done"] = draft_p.finished and pre_p.finished
    st["pushbacks"]["draft"] = draft_p.pushbacks
    st["pushbacks"]["preverify"] = pre_p.pushbacks


async def npu_side(dut, st, rng):
    """NPU clock: draft consumer with random squashes, feedback producer."""
    draft_c = Consumer(dut, "draft")
    fb_p = Producer(dut, "feedback", st["feedback_items"])
    squash, squash_ready = dut.draft__squash, dut.draft__squash_ready
    squash.value = 0
    golden_d, golden_f = st["draft"], st["feedback"]
    squashing = False
    cycle = 0
    while not st["stop"]:
        await FallingEdge(dut.npu_clk)
        cycle += 1
        p_offer, p_ready = PHASES[(cycle // st["phase_cycles"] + 2) % len(PHASES)]
        item = draft_c.cycle(p_ready, rng)
        if item is not None:
            golden_d.pop(item)           # a pop in the squash cycle completes before the squash
        if not squashing and not st["pim_done"] and rng.random() < st["p_squash"]:
            squashing = True
        squash.value = squashing
        if squashing and int(squash_ready.value):
            golden_d.squash()            # accepted at the coming edge, after its pop
            squashing = False
        pushed = fb_p.cycle(p_offer, rng)
        if pushed is not None:
            golden_f.push(pushed)
        st["npu_cycles"] = cycle
        st["npu_done"] = fb_p.finished and not squashing
    st["pushbacks"]["feedback"] = fb_p.pushbacks


@cocotb.test()
async def queues_scoreboard(dut):
    p = params()
    rng = random.Random(p["seed"])
    n = p["count"]
    st = {
        "draft": SquashQueueModel(), "feedback": QueueModel(),
        "preverify": QueueModel(depth=p["preverify_depth"]),
        "draft_items": descriptor_source(rng, 56, n),
        "feedback_items": descriptor_source(rng, 57, n),
        "preverify_items": [PreverifyLayout.const({"verify_length": i % 16,
                                                   "urgent": rng.getrandbits(1)}).as_bits()
                            for i in range(n)],
        "draft_depth": p["draft_depth"], "p_squash": p["p_squash"],
        "phase_cycles": p["phase_cycles"],
        "stop": False, "pim_done": False, "npu_done": False, "w_squashes": 0,
        "draft_full_cycles": 0, "pushbacks": {}, "pim_cycles": 0, "npu_cycles": 0,
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
    pim = cocotb.start_soon(pim_side(dut, st, random.Random(p["seed"] + 1)))
    npu = cocotb.start_soon(npu_side(dut, st, random.Random(p["seed"] + 2)))
    golden_d, golden_f, golden_p = st["draft"], st["feedback"], st["preverify"]
    quiet = 0
    limit = p["max_pim_cycles"]
    while True:
        await FallingEdge(dut.pim_clk)
        drained = (st["pim_done"] and st["npu_done"] and golden_f.popped == n
                   and golden_p.popped == n and golden_d.drain() == []
                   and int(dut.draft__r_level.value) == 0)
        quiet = quiet + 1 if drained else 0
        if quiet > 32:   # longer than any synchroniser latency: nothing is in flight
            break
        assert st["pim_cycles"] < limit, (
            f"no progress after {limit} PIM cycles: draft {golden_d.pushed} pushed / "
            f"{golden_d.delivered} delivered / {golden_d.discarded} discarded, feedback "
            f"{golden_f.popped}/{n}, pre-verify {golden_p.popped}/{n}")
    st["stop"] = True
    await pim
    await npu
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
    assert all(count > 0 for count in st["pushbacks"].values()), st["pushbacks"]
    moved = golden_d.delivered + golden_d.discarded + golden_f.popped + golden_p.popped
    dut._log.info(
        "queues npu %d ps / pim %d ps: draft %d delivered + %d discarded (%d squashes), "
        "feedback %d, pre-verify %d; %d descriptors in %d PIM / %d NPU cycles; push-backs %s",
        p["npu_ps"], p["pim_ps"], golden_d.delivered, golden_d.discarded, golden_d.squashes,
        golden_f.popped, golden_p.popped, moved, st["pim_cycles"], st["npu_cycles"],
        st["pushbacks"])
