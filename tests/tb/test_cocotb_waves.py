"""AHASD_WAVES=1: a cocotb run writes build/waves/<test>.vcd, named after the pytest test."""

import pytest
from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.tb.cocotb_run import run_cocotb, waves_name
from ahasd.tb.paths import build_root

COCOTB_MODULE = '''\
import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles


@cocotb.test()
async def counts(dut):
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.en.value = 1
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 5)
    assert int(dut.count.value) in (4, 5)
'''


class Counter(wiring.Component):
    en: In(1)
    count: Out(8)

    def elaborate(self, platform):
        m = Module()
        value = Signal(8)
        with m.If(self.en):
            m.d.sync += value.eq(value + 1)
        m.d.comb += self.count.eq(value)
        return m


def test_waves_name_from_the_pytest_node(monkeypatch):
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/hw/test_edc_cocotb.py::test_edc[8-3] (call)")
    assert waves_name("edc", "cocotb_edc") == "test_edc_cocotb-test_edc_8-3"
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    assert waves_name("edc", "cocotb_edc") == "cocotb_edc-edc"


@pytest.mark.cocotb
def test_a_cocotb_run_writes_its_vcd(tmp_path, monkeypatch):
    (tmp_path / "cocotb_tiny_counter.py").write_text(COCOTB_MODULE)
    monkeypatch.setenv("AHASD_WAVES", "1")
    expected = build_root(tmp_path) / "waves" / f"{waves_name('tiny_counter', 'x')}.vcd"
    expected.unlink(missing_ok=True)
    run_cocotb(Counter(), "tiny_counter", "cocotb_tiny_counter", test_dir=tmp_path)
    assert expected.name == "test_cocotb_waves-test_a_cocotb_run_writes_its_vcd.vcd"
    text = expected.read_text()
    assert "$var" in text and " count " in text and " en " in text
