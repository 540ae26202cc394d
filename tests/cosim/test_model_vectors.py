"""ahasd.cosim.model.VerilatedModel on a one-register block: one output row per input row, in
both the open-loop run and the stepped mode (the harness's vector mode), sampled before the
edge, and ``rst`` driven as the first input."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.cosim.model import VerilatedModel
from ahasd.hw.blocks import port_list, to_verilog


class Register(wiring.Component):
    a: In(8)
    q: Out(8)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.q.eq(self.a + 1)
        return m


def model():
    dut = Register()
    inputs, outputs = port_list(dut)
    return VerilatedModel(to_verilog(dut, "reg8"), "reg8", inputs, outputs)


def test_one_output_row_per_input_row():
    rows = [(0, 10), (0, 20), (0, 30), (1, 40), (0, 50), (0, 60)]
    # q is a + 1 of the previous cycle, 0 after reset (a reset cycle clears it at its edge).
    expected = [(0,), (11,), (21,), (31,), (0,), (51,)]
    with model() as m:
        assert m.run(rows) == expected
        assert [m.step(r) for r in rows] == expected
