"""The Verilator wrapper: lint stays strict outside the documented waivers; the row-per-cycle
model (ahasd.cosim.model) on the harness."""

import pytest
from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.cosim.model import VerilatedModel
from ahasd.hw.blocks import port_list, to_verilog
from ahasd.synth.verilator import LINT_WAIVERS, VerilatorError, lint


def test_every_waiver_is_documented():
    assert all(len(reason) > 40 for reason in LINT_WAIVERS.values())


def test_lint_reports_a_warning_that_is_not_waived(tmp_path):
    source = tmp_path / "bad.v"
    source.write_text("module bad(input clk, input d, output reg q);\n"
                      "  always @(posedge clk) q = d;\n"      # blocking assignment: BLKSEQ
                      "endmodule\n")
    with pytest.raises(VerilatorError, match="BLKSEQ"):
        lint(source, "bad")


class Accumulator(wiring.Component):
    add: In(8)
    total: Out(16)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.total.eq(self.total + self.add)
        return m


def test_model_runs_and_steps():
    dut = Accumulator()
    inputs, outputs = port_list(dut)
    model = VerilatedModel(to_verilog(dut, "acc"), "acc", inputs, outputs)
    out = model.run([(1, 0)] + [(0, n) for n in range(1, 101)])
    # Outputs are sampled before each rising edge: cycle k shows the sum of the inputs before it.
    assert [o[0] for o in out[:4]] == [0, 0, 1, 3] and out[-1][0] == sum(range(1, 100))
    with model:
        assert model.step((1, 0)) == (0,)
        assert model.step((0, 7)) == (0,)
        assert model.step((0, 0)) == (7,)


class WideRegister(wiring.Component):
    """A 100-bit register and its value plus one (ports wider than 64 bits)."""
    d: In(100)
    q: Out(100)
    q1: Out(101)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.q.eq(self.d)
        m.d.comb += self.q1.eq(self.q + 1)
        return m


def test_model_handles_ports_wider_than_64_bits():
    dut = WideRegister()
    inputs, outputs = port_list(dut)
    model = VerilatedModel(to_verilog(dut, "wide"), "wide", inputs, outputs)
    value = (1 << 100) - 1
    out = model.run([(1, 0), (0, value), (0, 5 << 70), (0, 0)])
    assert out[2] == (value, 1 << 100) and out[3] == (5 << 70, (5 << 70) + 1)


def test_model_rejects_a_value_wider_than_its_port():
    dut = Accumulator()
    inputs, outputs = port_list(dut)
    model = VerilatedModel(to_verilog(dut, "acc"), "acc", inputs, outputs)
    with pytest.raises(RuntimeError, match=r"value 100 does not fit port add \(8 bits\)"):
        model.run([(0, 0x100)])
