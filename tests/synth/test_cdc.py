"""ahasd.synth.cdc: the controller's PIM / NPU crossings all pass a synchroniser or an async
FIFO, and the check finds each kind of raw crossing in small fixtures."""

import pytest
from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.fifo import AsyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ahasd.synth.cdc import check, crossings


class Fixture(wiring.Component):
    """A register in ``sync`` and a register in ``npu`` fed from it, in the way ``how`` says."""

    def __init__(self, how):
        self.how = how
        super().__init__({"a": In(4), "b": In(4), "y": Out(4)})

    def elaborate(self, platform):
        m = Module()
        src = Signal(4)
        src2 = Signal(4)
        dst = Signal(4)
        m.d.sync += [src.eq(self.a), src2.eq(self.b)]
        if self.how == "raw":
            m.d.npu += dst.eq(src)
        elif self.how == "ffsync":
            m.submodules.sync = FFSynchronizer(src, dst, o_domain="npu")
        elif self.how == "logic_before_sync":
            m.submodules.sync = FFSynchronizer(src ^ src2, dst, o_domain="npu")
        elif self.how == "fifo":
            m.submodules.fifo = fifo = AsyncFIFO(width=4, depth=4, w_domain="sync",
                                                 r_domain="npu")
            m.d.comb += [fifo.w_data.eq(src), fifo.w_en.eq(1), fifo.r_en.eq(1)]
            m.d.npu += dst.eq(fifo.r_data)
        elif self.how == "memory":
            m.submodules.mem = mem = Memory(shape=4, depth=4, init=[])
            w = mem.write_port(domain="sync")
            r = mem.read_port(domain="npu")
            m.d.comb += [w.data.eq(src), w.en.eq(1), r.addr.eq(0)]
            m.d.npu += dst.eq(r.data)
        elif self.how == "input":
            m.d.npu += dst.eq(self.a)
        m.d.comb += self.y.eq(dst)
        return m


@pytest.mark.parametrize("how,why", [
    ("raw", "no synchroniser or async FIFO on the path"),
    ("logic_before_sync", "logic between the source flip-flops and the synchroniser"),
    ("memory", "memory read in another domain outside an async FIFO"),
    ("input", "a top-level input drives elements of two domains"),
])
def test_raw_crossings_are_found(how, why):
    found = crossings(Fixture(how))
    assert found and {c.why for c in found} == {why}, [str(c) for c in found]
    with pytest.raises(AssertionError, match="unsynchronised clock-domain crossing"):
        check(Fixture(how))


@pytest.mark.parametrize("how,kind", [("ffsync", "synchroniser"), ("fifo", "async FIFO")])
def test_synchronised_crossings_pass(how, kind):
    allowed = []
    assert crossings(Fixture(how), allowed) == []
    assert kind in {c.why for c in allowed}




@pytest.mark.slow
def test_controller_crossings_are_all_synchronised():
    """The controller's sync (PIM) / npu (NPU) crossings: none raw; the synchronised ones
    include the Gray-coded counter of every NPU-side event and both clock-crossing queues."""
    from ahasd.hw.controller import Controller
    allowed = []
    check_found = crossings(Controller(), allowed)
    assert check_found == [], "\n".join(map(str, check_found))
    dests = {c.dest.split(".")[1] for c in allowed if c.dest_domain != c.source_domain}
    npu_counters = {"count_draft_q_pops", "count_feedback_q_pushes",
                    "count_feedback_q_pushbacks", "count_squashes", "count_squash_discarded"}
    assert npu_counters <= dests, sorted(dests)
    assert "queues" in dests
    fifo_reads = {c.dest.rsplit(".", 1)[0] for c in allowed if c.why == "async FIFO"}
    assert {"top.queues.draft.fifo", "top.queues.feedback.fifo"} <= {
        d.split(":")[0] for d in fifo_reads}, fifo_reads
