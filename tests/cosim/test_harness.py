"""The Verilator harness (cosim/harness.cpp) on small designs: ports wider than 64 bits, two clocks
with a non-integer period ratio, stream handshakes under backpressure, AXI4-Lite reads and writes
(with SLVERR), timeouts and bad commands."""

import random

import pytest
from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.cosim.harness import Harness, HarnessError
from ahasd.hw.blocks import port_list, to_verilog

WIDE = 100


class Stage(wiring.Component):
    """One registered stream stage with a 100-bit payload (ready = empty or taken)."""
    i: In(stream.Signature(WIDE))
    o: Out(stream.Signature(WIDE))

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.i.ready.eq(~self.o.valid | self.o.ready)
        with m.If(self.i.ready):
            m.d.sync += [self.o.valid.eq(self.i.valid), self.o.payload.eq(self.i.payload)]
        return m


class TwoClocks(wiring.Component):
    """A cycle counter in each of two clock domains."""
    count_sync: Out(32)
    count_npu: Out(32)

    def elaborate(self, platform):
        m = Module()
        # `npu` is not defined here: Amaranth makes npu_clk / npu_rst ports of the top.
        m.d.sync += self.count_sync.eq(self.count_sync + 1)
        m.d.npu += self.count_npu.eq(self.count_npu + 1)
        return m


def harness(dut, top, **domains):
    inputs, outputs = port_list(dut)
    return Harness(to_verilog(dut, top), top, inputs, outputs,
                   domains=domains or {"sync": ("clk", "rst", 1000)})


@pytest.fixture
def stage():
    h = harness(Stage(), "stage")
    yield h
    h.close()


def run_stage(h, items, ready, seed):
    source = h.source(f"i{seed}", "sync", "i__valid", "i__ready", ["i__payload"], log=True)
    sink = h.sink(f"o{seed}", "sync", "o__valid", "o__ready", ["o__payload"])
    h.gaps(source, 0.3, seed)
    h.ready(sink, ready)
    for item in items:
        h.push(source, item)
    h.drain("sync", 20 * len(items))
    h.until_count(sink, len(items), "sync", 1000)
    accepted, collected = h.accepted(source), h.collect(sink)
    h.run()
    return accepted.value, collected.value


@pytest.mark.parametrize("ready", ["0110", (0.4, 9)], ids=["pattern", "random"])
def test_wide_payloads_pass_a_stage_under_backpressure(stage, ready):
    rng = random.Random(3)
    items = [rng.getrandbits(WIDE) for _ in range(500)] + [(1 << WIDE) - 1, 1 << 64, 0]
    seed = 1 if isinstance(ready, str) else 2
    accepted, collected = run_stage(stage, items, ready, seed)
    assert [value for _, value in collected] == items
    assert len(accepted) == len(items) and sum(w for _, w in accepted) > 50   # it pushed back
    # Each item leaves the stage after the cycle it entered, in order.
    assert all(out[0] > acc[0] for acc, out in zip(accepted, collected))


def test_two_clocks_with_a_non_integer_ratio():
    h = harness(TwoClocks(), "two_clocks", sync=("clk", "rst", 1250),
                npu=("npu_clk", "npu_rst", 1000))
    with h:
        h.reset("sync", 1)
        h.reset("npu", 1)
        watch = h.watch("count_npu", "npu")
        h.wait("sync", 400)
        now, counts = h.time(), (h.get("count_sync"), h.get("count_npu"))
        seen = h.seen(watch)
        h.run()
        ps, (sync_cycles, npu_cycles) = now.value
        # 400 PIM edges at 1250 ps = 500 ns = 500 NPU edges (common edges every 5 ns count once
        # for each domain).
        assert (ps, sync_cycles, npu_cycles) == (500_000, 400, 500)
        assert [c.value for c in counts] == [399, 499]          # one reset edge each
        assert seen.value[:3] == [(0, 0), (2, 1), (3, 2)]        # sampled before each edge
        assert all(v == c - 1 for c, v in seen.value[1:])


def test_a_clock_that_is_not_a_port_is_named():
    with pytest.raises(ValueError, match=r"fast_clk, fast_rst: not a port of module stage"):
        harness(Stage(), "stage", sync=("clk", "rst", 1000), fast=("fast_clk", "fast_rst", 700))


def test_axil_read_write_strobes_and_slverr():
    from ahasd.hw.csr import AXI_PREFIX, CSR, RESP_OKAY, RESP_SLVERR
    from ahasd.hw.regmap import load
    regmap = load()
    dut = CSR(regmap=regmap)
    inputs, outputs = port_list(dut)
    with Harness(to_verilog(dut, "csr"), "csr", inputs, outputs,
                 domains={"sync": ("clk", "rst", 1250)}) as h:
        bus = h.axil(AXI_PREFIX, "sync")
        h.reset("sync", 2)
        h.wait("sync", 2)
        scratch = regmap["SCRATCH"].address
        hole = next(a for a in range(0, 256, 4) if regmap.at(a) is None)
        answers = [h.axil_write(bus, scratch, 0x12345678), h.axil_read(bus, scratch),
                   h.axil_write(bus, scratch, 0xAABBCCDD, 0b0101), h.axil_read(bus, scratch),
                   h.axil_read(bus, hole), h.axil_write(bus, hole, 1),
                   h.axil_read(bus, regmap["ID"].address)]
        h.run()
        assert [a.value for a in answers] == [
            RESP_OKAY, (0x12345678, RESP_OKAY), RESP_OKAY, (0x12BB56DD, RESP_OKAY),
            (0, RESP_SLVERR), RESP_SLVERR, (regmap["ID"].fields[0].reset, RESP_OKAY)]
        with pytest.raises(HarnessError, match=r"address 0x100 does not fit the 8-bit bus"):
            h.axil_read(bus, 0x100)
            h.run()


def test_timeouts_name_what_did_not_happen(stage):
    source = stage.source("stuck", "sync", "i__valid", "i__ready", ["i__payload"])
    sink = stage.sink("blocked", "sync", "o__valid", "o__ready", ["o__payload"])
    stage.ready(sink, "never")
    for n in range(3):
        stage.push(source, n)
    stage.drain("sync", 50)
    with pytest.raises(HarnessError, match=r"timeout: the sources did not drain after 50 cycles "
                                           r"of domain sync; lane stuck holds 2 items"):
        stage.run()
    stage.command(f"timeout {source} 10")
    stage.wait("sync", 20)
    with pytest.raises(HarnessError, match=r"source stuck: item not accepted within 10 cycles "
                                           r"of domain sync \(ready low since cycle 1\)"):
        stage.run()
    stage.until("o__valid", 0, "sync", 5)
    with pytest.raises(HarnessError, match=r"timeout: port o__valid did not reach its value "
                                           r"after 5 cycles of domain sync"):
        stage.run()


@pytest.mark.parametrize("line, message", [
    ("frobnicate", r"line \d+: unknown command 'frobnicate'"),
    ("set i__payload zz", r"bad hex value 'zz'"),
    ("set i__valid 2", r"value 2 does not fit port i__valid \(1 bits\)"),
    (f"set i__payload 1{'0' * 25}", r"value 10+ does not fit port i__payload \(100 bits\)"),
    ("set nothing 1", r"no port named nothing"),
    ("set o__valid 1", r"port o__valid is an output"),
    ("wait sync", r"usage: wait DOMAIN CYCLES"),
    ("wait fast 3", r"no clock domain named fast"),
    ("wait sync -3", r"bad number '-3'"),
    ("s nosuch 1", r"no source named nosuch"),
    ("source x sync o__valid - -", r"stream x: port o__valid must be an input"),
    ("sink y sync o__valid o__ready i__payload", r"payload port i__payload must be an output"),
    ("sink z sync o__valid o__ready o__payload\nready z sometimes", r"bad pattern 'sometimes'"),
    ("sink z sync o__valid o__ready o__payload\nready z pattern 01x",
     r"pattern '01x' must be a non-empty string of 0 and 1"),
    ("domain sync clk rst 1000", r"clock domain sync is declared twice"),
    ("domain other clk - 1000", r"port clk is already driven by clock domain sync"),
    ("source a sync i__valid i__ready i__payload\nsource b sync i__valid i__ready i__payload",
     r"port i__(valid|payload) is already driven by source a"),
])
def test_bad_commands_are_refused_and_the_harness_stays_usable(stage, line, message):
    stage.command(line)
    stage.command("wait sync 1")     # skipped: the batch stops at the error
    with pytest.raises(HarnessError, match=message):
        stage.run()
    before = stage.time()
    stage.wait("sync", 1)
    after = stage.time()
    stage.run()
    assert after.value[1][0] == before.value[1][0] + 1


def test_a_push_with_the_wrong_number_of_values_is_refused(stage):
    source = stage.source("counted", "sync", "i__valid", "i__ready", ["i__payload"])
    stage.push(source, 1, 2)
    with pytest.raises(HarnessError, match=r"source \d+ takes 1 payload values, not 2"):
        stage.run()


def test_the_c_api_header_is_plain_c(tmp_path):
    """harness.h is what a firmware-in-the-loop harness written in C includes: it must compile as
    C99, and a C caller of the MMIO functions must type-check against it."""
    import shutil
    import subprocess
    from importlib import resources
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "no C compiler (Verilator builds need one as well)"
    (tmp_path / "harness.h").write_text((resources.files("ahasd.cosim") / "harness.h").read_text())
    (tmp_path / "firmware.c").write_text(
        '#include "harness.h"\n'
        "int poke(ahs_harness* h, int bus) {\n"
        "    uint32_t data; int resp;\n"
        "    if (ahs_mmio_write(h, bus, 0xFC, 0x1234u, 0xFu, &resp, 100) < 0) return -1;\n"
        "    if (ahs_mmio_read(h, bus, 0xFC, &data, &resp, 100) < 0) return -1;\n"
        "    return ahs_step(h, 0, 10) < 0 ? -1 : (int)data;\n"
        "}\n")
    result = subprocess.run([cc, "-std=c99", "-Wall", "-Werror", "-fsyntax-only", "firmware.c"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
