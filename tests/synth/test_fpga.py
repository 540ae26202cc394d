"""FPGA flow: the iCE40 port wrapper, place and route with Fmax, "does not fit", the CLI."""

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.blocks import to_verilog
from ahasd.synth.fpga import fpga_of_verilog, serial_wrapper, verilog_ports


class Counter(wiring.Component):
    step: In(8)
    count: Out(16)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.count.eq(self.count + self.step)
        return m


N_MUL = 24


class Multipliers(wiring.Component):
    """24 registered 16 x 16 products: three times the UP5K's eight DSPs, and more than its
    5280 LUTs when built from LUTs."""
    a: In(16 * N_MUL)
    b: In(16 * N_MUL)
    y: Out(32 * N_MUL)

    def elaborate(self, platform):
        m = Module()
        for i in range(N_MUL):
            m.d.sync += self.y[32 * i:32 * i + 32].eq(self.a[16 * i:16 * i + 16] *
                                                      self.b[16 * i:16 * i + 16])
        return m


def test_wrapper_shifts_every_port_through_four_pins():
    text = to_verilog(Counter(), "counter")
    assert sorted(verilog_ports(text, "counter")) == [
        ("input", "clk", 1), ("input", "rst", 1), ("input", "step", 8), ("output", "count", 16)]
    wrapper = serial_wrapper(text, "counter")
    assert "module fpga_top(input clk, input si, input ld, output so);" in wrapper
    assert "reg [8:0] shift_in" in wrapper and "reg [15:0] shift_out" in wrapper
    assert ".clk(clk)" in wrapper and ".rst(held[0:0])" in wrapper


@pytest.mark.slow
@pytest.mark.parametrize("family", ["ice40", "ecp5"])
def test_place_and_route_reports_fmax(family, tmp_path):
    path = tmp_path / "counter.v"
    path.write_text(to_verilog(Counter(), "counter"))
    report = fpga_of_verilog(path, "counter", family, tmp_path / family)
    assert report.fits and report.fmax_mhz > 20 and report.luts >= 16
    assert report.ffs >= 16 and report.note == ""


@pytest.mark.regress      # two syntheses of 24 multipliers: minutes
def test_a_block_that_does_not_fit_says_what_it_needs(tmp_path):
    path = tmp_path / "mul.v"
    path.write_text(to_verilog(Multipliers(), "mul"))
    report = fpga_of_verilog(path, "mul", "ice40", tmp_path / "ice40")
    assert not report.fits and report.fmax_mhz is None
    assert report.dsps == 0 and report.luts > 5280
    assert report.note.startswith(f"multipliers in LUTs (as DSPs: {N_MUL} > 8); does not fit: "
                                  f"needs {report.luts} LUTs / 0 DSPs")


class FewMultipliers(wiring.Component):
    """Nine registered 8 x 8 products: one more than the UP5K's eight DSPs."""
    a: In(8 * 9)
    b: In(8 * 9)
    y: Out(16 * 9)

    def elaborate(self, platform):
        m = Module()
        for i in range(9):
            m.d.sync += self.y[16 * i:16 * i + 16].eq(self.a[8 * i:8 * i + 8] *
                                                      self.b[8 * i:8 * i + 8])
        return m


@pytest.mark.slow
def test_lut_fallback_past_its_budget_reports_the_dsp_need(tmp_path):
    path = tmp_path / "mul.v"
    path.write_text(to_verilog(FewMultipliers(), "mul"))
    report = fpga_of_verilog(path, "mul", "ice40", tmp_path / "ice40", lut_fallback_cpu_s=0.01)
    assert not report.fits and report.fmax_mhz is None and report.dsps == 9
    assert report.note == (f"does not fit: needs 9 DSPs "
                           f"(8 on {report.part}) besides {report.luts} LUTs; with the "
                           f"multipliers in LUTs, synthesis did not finish in 0.01 s of CPU")


def test_unknown_family_is_an_error(tmp_path):
    with pytest.raises(ValueError, match=r"unknown FPGA family 'xilinx'; known: ecp5, ice40"):
        fpga_of_verilog(tmp_path / "x.v", "x", "xilinx", tmp_path)


DISTRIBUTED = """\
module lutram(clk, we, wa, ra, wd, rd);
  input clk;
  input we;
  input [3:0] wa;
  input [3:0] ra;
  input [7:0] wd;
  output [7:0] rd;
  (* ram_style = "distributed" *)
  reg [7:0] storage [0:15];
  always @(posedge clk) if (we) storage[wa] <= wd;
  assign rd = storage[ra];
endmodule
"""


@pytest.mark.slow
def test_a_storage_marked_distributed_maps_on_ice40(tmp_path):
    # iCE40 has no LUT RAM: with the hint kept, yosys's memory_libmap fails ("no valid mapping
    # found"), as it did for the controller's draft FIFO; the flow drops the hint there.
    path = tmp_path / "lutram.v"
    path.write_text(DISTRIBUTED)
    report = fpga_of_verilog(path, "lutram", "ice40", tmp_path / "ice40")
    assert report.fits and report.ffs >= 8
    assert 'ram_style = "distributed"' not in (tmp_path / "ice40" / "design.v").read_text()
    assert 'ram_style = "distributed"' in path.read_text()


def test_placement_failure_classifies_nextpnr_logs():
    from ahasd.synth.fpga import placement_failure
    over_full = "Info: \t         ICESTORM_LC:    5867/   5280   111%\nERROR: Unable to place cell"
    assert placement_failure(over_full) == {"ICESTORM_LC": (5867, 5280)}
    # The iCE40 analytic placer's legalisation failure below 100 % (the EDC at 79 % of the LCs).
    legalise = ("Info: \t         ICESTORM_LC:    4199/   5280    79%\n"
                "ERROR: Unable to find legal placement for all cells, design is probably at "
                "utilisation limit.")
    assert placement_failure(legalise) == {}
    assert placement_failure("ERROR: cannot open file netlist.json") is None


def test_part_names_and_speed_grades():
    from ahasd.synth.fpga import check_speed, part_name
    assert (check_speed("ecp5", None), check_speed("ice40", None)) == (6, None)
    assert [part_name("ecp5", s) for s in (None, 6, 7, 8)] == [
        "LFE5U-25F", "LFE5U-25F", "LFE5U-25F-7", "LFE5U-25F-8"]
    assert part_name("ice40") == "iCE40UP5K-SG48"
    for family, speed in (("ecp5", 5), ("ecp5", True), ("ice40", 6)):
        with pytest.raises(ValueError, match="speed grade"):
            check_speed(family, speed)
