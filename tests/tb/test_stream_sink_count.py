"""ahasd.tb.amaranth_sim.StreamSink stops at exactly ``count`` payloads (the rest stay in the
design), and StreamSource offers nothing in its idle cycles (no item taken twice)."""

from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from ahasd.tb.amaranth_sim import StreamSink, StreamSource, simulate
from ahasd.tb.generators import cycle_pattern


class Buffer(wiring.Component):
    i: In(stream.Signature(8))
    o: Out(stream.Signature(8))
    level: Out(5)

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = fifo = SyncFIFO(width=8, depth=16)
        m.d.comb += [
            fifo.w_en.eq(self.i.valid), fifo.w_data.eq(self.i.payload),
            self.i.ready.eq(fifo.w_rdy),
            self.o.valid.eq(fifo.r_rdy), self.o.payload.eq(fifo.r_data),
            fifo.r_en.eq(self.o.ready), self.level.eq(fifo.level),
        ]
        return m


def test_the_sink_takes_exactly_count_items():
    dut = Buffer()
    source = StreamSource(dut.i, range(10, 20))
    source.set_idle_generator(cycle_pattern([0, 1]))
    sink = StreamSink(dut.o, 4)
    left = []

    async def settle(ctx):
        await ctx.tick().repeat(60)
        left.append(ctx.get(dut.level))

    simulate(dut, source.testbench, sink.testbench, settle)
    assert source.sent == 10
    assert [int(p) for p in sink.items] == [10, 11, 12, 13]
    assert left == [6]                 # nothing taken twice, nothing lost: 10 - 4 in the buffer
