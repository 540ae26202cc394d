"""ahasd.tb.amaranth_sim and ahasd.tb.generators: the fast-tier runner and stream drivers."""

import random

import pytest
from amaranth import Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import AsyncFIFO
from amaranth.lib.wiring import In, Out

from ahasd.tb.amaranth_sim import StreamSink, StreamSource, simulate, stream_get, stream_put
from ahasd.tb.generators import cycle_pattern, never, pauses

ITEM = data.StructLayout({"a": 4, "b": 4})


class CrossingFIFO(wiring.Component):
    """A two-clock FIFO with stream ports (``w`` writes, ``r`` reads)."""
    i: In(stream.Signature(ITEM))
    o: Out(stream.Signature(ITEM))

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = fifo = AsyncFIFO(width=8, depth=4, w_domain="w", r_domain="r")
        m.d.comb += [
            fifo.w_en.eq(self.i.valid), fifo.w_data.eq(self.i.payload),
            self.i.ready.eq(fifo.w_rdy),
            self.o.valid.eq(fifo.r_rdy), self.o.payload.eq(fifo.r_data),
            fifo.r_en.eq(self.o.ready),
        ]
        return m


def test_source_and_sink_with_pauses_across_two_clocks():
    dut = CrossingFIFO()
    items = [{"a": i % 16, "b": (7 * i) % 16} for i in range(200)]
    accepted = []
    source = StreamSource(dut.i, items, domain="w", on_accept=accepted.append)
    source.set_idle_generator(pauses(0.4, 1))
    sink = StreamSink(dut.o, len(items), domain="r")
    sink.set_backpressure_generator(cycle_pattern([0, 1, 1]))
    simulate(dut, source.testbench, sink.testbench, clocks={"w": 1e-9, "r": (1.3e-9, 0.2e-9)})
    assert accepted == items and source.sent == len(items)
    assert [{"a": p.a, "b": p.b} for p in sink.items] == items


def test_stream_put_and_get():
    dut = CrossingFIFO()
    got = []

    async def producer(ctx):
        for value in ({"a": 1, "b": 2}, ITEM.const({"a": 3, "b": 4})):
            await stream_put(ctx, dut.i, value, domain="w")

    async def consumer(ctx):
        for _ in range(2):
            got.append(await stream_get(ctx, dut.o, domain="r"))

    simulate(dut, producer, consumer, clocks={"w": 1e-9, "r": 1e-9})
    assert [(p.a, p.b) for p in got] == [(1, 2), (3, 4)]


def test_vcd_is_written_only_when_asked(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    monkeypatch.chdir(tmp_path)

    def counter():
        m = Module()
        count = Signal(4)
        m.d.sync += count.eq(count + 1)
        return m

    async def idle(ctx):
        await ctx.tick().repeat(3)

    monkeypatch.delenv("AHASD_VCD", raising=False)
    simulate(counter(), idle, vcd_name="quiet")
    assert not (tmp_path / "build" / "vcd" / "quiet.vcd").exists()
    monkeypatch.setenv("AHASD_VCD", "1")
    simulate(counter(), idle, vcd_name="loud")
    assert "$enddefinitions" in (tmp_path / "build" / "vcd" / "loud.vcd").read_text()


@pytest.mark.parametrize("probability", [0.0, 0.25, 0.9])
def test_pauses_follow_their_probability(probability):
    gen = pauses(probability, random.Random(3))
    share = sum(next(gen) for _ in range(4000)) / 4000
    assert abs(share - probability) < 0.03
    assert not any(next(never()) for _ in range(10))


def test_pauses_read_a_changing_probability():
    level = {"p": 0.0}
    gen = pauses(lambda: level["p"], 5)
    assert not any(next(gen) for _ in range(100))
    level["p"] = 1.0
    assert all(next(gen) for _ in range(100))
