"""The area flow's structure: shared modules mapped once and counted per instance, writable
memories as SRAM macros (ROMs as logic), the 28 nm area model, bad input."""

import pytest
from amaranth.hdl import Module
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.blocks import to_verilog
from ahasd.synth.hierarchy import share_modules, split_modules
from ahasd.synth.tech import Technology
from ahasd.synth.yosys import area_of_verilog


class Lane(wiring.Component):
    a: In(8)
    b: In(8)
    y: Out(16)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.y.eq(self.a * self.b + self.y)
        return m


class FourLanes(wiring.Component):
    # Each lane has inputs of its own: nothing for a flat flow to propagate across lanes.
    a: In(32)
    b: In(32)
    y: Out(16)

    def elaborate(self, platform):
        m = Module()
        total = 0
        for i in range(4):
            m.submodules[f"lane{i}"] = lane = Lane()
            m.d.comb += [lane.a.eq(self.a[8 * i:8 * i + 8]), lane.b.eq(self.b[8 * i:8 * i + 8])]
            total = total ^ lane.y
        m.d.comb += self.y.eq(total)
        return m


class WithMemories(wiring.Component):
    addr: In(6)
    data: In(16)
    we: In(1)
    y: Out(16)

    def elaborate(self, platform):
        m = Module()
        m.submodules.ram = ram = memory.Memory(shape=16, depth=64, init=[])   # 1024 bits
        words = [(i * 40503 + 32768) % 65536 for i in range(64)]    # all 16 bits in use
        m.submodules.rom = rom = memory.Memory(shape=16, depth=64, init=words)
        wr, rd, rr = ram.write_port(), ram.read_port(), rom.read_port()
        m.d.comb += [wr.addr.eq(self.addr), wr.data.eq(self.data), wr.en.eq(self.we),
                     rd.addr.eq(self.addr), rr.addr.eq(self.addr), self.y.eq(rd.data ^ rr.data)]
        return m


def test_identical_modules_are_shared_once():
    text = to_verilog(FourLanes(), "four")
    assert len(split_modules(text)) == 5
    shared = share_modules(text, min_lines=1)
    assert shared.instances == {"four.lane0": 4}
    assert list(split_modules(shared.text)) == ["four", "four.lane0"]
    assert shared.text.count("\\four.lane0  lane") == 4


@pytest.mark.slow
def test_shared_area_counts_every_instance(tmp_path):
    path = tmp_path / "four.v"
    path.write_text(to_verilog(FourLanes(), "four"))
    flat = area_of_verilog(path, "four", tmp_path / "flat", share=False, timing=False)
    shared = area_of_verilog(path, "four", tmp_path / "shared", timing=False)
    assert flat.shared_modules == {} and shared.shared_modules == {"four.lane0": 4}
    assert shared.ff_bits == flat.ff_bits == 4 * 16
    assert shared.area_ge == pytest.approx(flat.area_ge, rel=0.03)


@pytest.mark.slow
def test_writable_memories_become_macros_and_roms_stay_logic(tmp_path):
    path = tmp_path / "mem.v"
    path.write_text(to_verilog(WithMemories(), "mem"))
    tech = Technology()
    macro = area_of_verilog(path, "mem", tmp_path / "macro", tech=tech)
    flops = area_of_verilog(path, "mem", tmp_path / "flops", macro_min_bits=None, timing=False)
    assert macro.memory_bits == flops.memory_bits == 2 * 1024
    assert macro.sram_bits == 1024 and flops.sram_bits == 0
    assert [m["name"] for m in macro.sram_macros] == ["ram"]
    assert macro.sram_mm2 == pytest.approx(tech.macro_mm2(1024, 2), abs=1e-6)
    assert flops.ff_bits >= macro.ff_bits + 1024 and flops.area_ge > macro.area_ge + 5 * 1024
    assert macro.total_mm2 == pytest.approx(macro.logic_mm2 + macro.sram_mm2, abs=1e-6)
    assert macro.die_percent == pytest.approx(100 * macro.total_mm2 / tech.die_mm2, abs=1e-4)
    assert 0 < macro.delay_depth and 0 < macro.logic_depth


def test_technology_model_and_errors():
    tech = Technology(nand2_um2=0.5, sram_bitcell_um2=0.1, sram_array_efficiency=0.5)
    assert tech.logic_mm2(2e6) == pytest.approx(1.0)
    assert tech.macro_mm2(1000, 2) == pytest.approx(1000 * 0.1 / 0.5 * 1e-6)
    assert tech.macro_mm2(1000, 3) == pytest.approx(2 * tech.macro_mm2(1000, 2))
    with pytest.raises(ValueError, match=r"nand2_um2 must be a positive number, not -1"):
        Technology(nand2_um2=-1)
    with pytest.raises(ValueError, match=r"sram_array_efficiency must be at most 1, not 1.5"):
        Technology(sram_array_efficiency=1.5)
    with pytest.raises(ValueError, match=r"a macro needs bits >= 0 and ports >= 1, not 8, 0"):
        tech.macro_mm2(8, 0)


def test_anchor_rows_are_ratios_of_our_figures():
    from ahasd.synth.anchors import anchor_rows
    rows = {r[0]: r for r in anchor_rows({"edc": 0.01, "tvc": 0.03, "queues": 0.005,
                                           "aau": 0.9}, die_mm2=18.0)}
    assert rows["edc"][3] == pytest.approx(0.01 / 0.05)
    assert rows["edc+tvc"][1] == pytest.approx(0.04) and rows["edc+tvc"][5] == pytest.approx(100)
    assert rows["aau"][3] == pytest.approx(0.9 / 1.25) and rows["aau"][5] == pytest.approx(2)
    assert rows["% of die"][1] == pytest.approx(100 * 0.945 / 18)
