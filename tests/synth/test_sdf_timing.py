"""ahasd.synth.sdf_timing: endpoint arrivals from an SDF, by hand on a small delay file and
against nextpnr's own critical path on a routed block."""

import pytest

from ahasd.synth.sdf_timing import (
    Endpoint,
    clocks_of_flip_flops,
    endpoints,
    late_counts,
    register_group,
    worst_groups,
)

# Two flip-flops, a LUT between them (two inputs, different delays) and a second path from the
# first flip-flop straight into the second one's clock enable; all delays in ps.
SDF = r"""(DELAYFILE
  (SDFVERSION "3.0")
  (DIVIDER /)
  (TIMESCALE 1ps)
  (CELL
    (CELLTYPE "top")
    (INSTANCE )
    (DELAY
      (ABSOLUTE
        (INTERCONNECT a_TRELLIS_FF_Q/Q lut/A (100:150:200) (100:150:200))
        (INTERCONNECT a_TRELLIS_FF_Q/Q lut/B (300:400:500) (300:400:500))
        (INTERCONNECT lut/F b_TRELLIS_FF_Q_3/DI (50:60:70) (50:60:70))
        (INTERCONNECT a_TRELLIS_FF_Q/Q b_TRELLIS_FF_Q_3/CE (10:20:900) (10:20:900))
      )
    )
  )
  (CELL
    (CELLTYPE "TRELLIS_FF")
    (INSTANCE a_TRELLIS_FF_Q)
    (DELAY
      (ABSOLUTE
        (IOPATH CLK Q (400:450:525) (400:450:525))
      )
    )
  )
  (CELL
    (CELLTYPE "TRELLIS_COMB")
    (INSTANCE lut)
    (DELAY
      (ABSOLUTE
        (IOPATH A F (200:218:236) (200:218:236))
        (IOPATH B F (200:218:236) (200:218:236))
      )
    )
  )
  (CELL
    (CELLTYPE "TRELLIS_FF")
    (INSTANCE b_TRELLIS_FF_Q_3)
    (DELAY
      (ABSOLUTE
        (IOPATH CLK Q (400:450:525) (400:450:525))
      )
    )
    (TIMINGCHECK
      (SETUPHOLD (posedge DI) (posedge CLK) (0:0:30) (267:285:303))
      (SETUPHOLD (posedge CE) (posedge CLK) (0:0:100) (0:0:0))
    )
  )
)
"""


def test_arrivals_by_hand():
    found = {e.pin: e for e in endpoints(SDF, {"b_TRELLIS_FF_Q_3": "clk"})}
    # DI: clock-to-Q 525 + the slower LUT input's wire 500 + LUT 236 + wire 70 + setup 30.
    assert found["DI"] == Endpoint("clk", "b_TRELLIS_FF_Q_3", "DI", 1.361, "a_TRELLIS_FF_Q")
    # CE: 525 + 900 + setup 100.
    assert found["CE"].arrival_ns == pytest.approx(1.525)
    assert late_counts(found.values(), 1.4) == {"clk": (1, 2)}
    assert late_counts(found.values(), 1.6) == {"clk": (0, 2)}
    assert worst_groups(found.values(), 1.3) == [("a", "b", "CE", 1.525, 1), ("a", "b", "DI", 1.361, 1)]
    assert register_group("tvc.avg_nvct_TRELLIS_FF_Q_12") == "tvc.avg_nvct"


def test_clocks_named_as_nextpnr_names_them(tmp_path):
    """A clock net is named by its top-level port, not by another name of the same net (a
    submodule's alias, even a shorter one); a cell yosys writes with a leading backslash (a
    ``$`` name of the Verilog it read) is keyed as the SDF names it; a block RAM has a clock per
    port, which its pins take by their port letter; a LUT RAM's packed parts take their cell's."""
    import json
    netlist = {"modules": {"top": {
        "attributes": {"top": 1},
        "ports": {"pim_clk": {"bits": [2]}, "npu_clk": {"bits": [3]}},
        "netnames": {"q.pim_clk": {"bits": [2], "hide_name": 0},
                     "pim_clk": {"bits": [2], "hide_name": 0},
                     "c": {"bits": [3], "hide_name": 0},
                     "npu_clk": {"bits": [3], "hide_name": 0},
                     "$auto$7": {"bits": [4], "hide_name": 1},
                     "x.local_clk": {"bits": [4], "hide_name": 0}},
        "cells": {"\\$signature__addr$137_TRELLIS_FF_Q": {"type": "TRELLIS_FF",
                                                             "connections": {"CLK": [2]}},
                  "ram": {"type": "DP16KD", "connections": {"CLKA": [2], "CLKB": [3]}},
                  "lutram": {"type": "TRELLIS_DPR16X4", "connections": {"WCK": [4]}},
                  "lut": {"type": "LUT4", "connections": {"Z": [5]}}}}}}
    (tmp_path / "netlist.json").write_text(json.dumps(netlist))
    clocks = clocks_of_flip_flops(tmp_path / "netlist.json")
    assert clocks == {"$signature__addr$137_TRELLIS_FF_Q": "pim_clk", ("ram", "A"): "pim_clk",
                      ("ram", "B"): "npu_clk", "lutram": "x.local_clk"}
    sdf = SDF.replace("b_TRELLIS_FF_Q_3", "ram").replace("(posedge DI)", "(posedge DIA3)")
    sdf = sdf.replace("(posedge CE)", "(posedge ADB10)").replace("ram/DI ", "ram/DIA3 ")
    sdf = sdf.replace("ram/CE ", "ram/ADB10 ")
    assert {e.pin: e.clock for e in endpoints(sdf, clocks)} == {"DIA3": "pim_clk",
                                                                 "ADB10": "npu_clk"}
    sdf = SDF.replace("b_TRELLIS_FF_Q_3", "lutram$DPRAM_COMB0")
    assert {e.clock for e in endpoints(sdf, clocks)} == {"x.local_clk"}


def test_a_block_ram_output_launches_a_path():
    """A block RAM's clock-to-output (``IOPATH CLKB DOB0``) starts a path as a flip-flop's
    clock-to-Q does: the arrival counts it (a path from a RAM's unregistered output)."""
    sdf = SDF.replace('(CELLTYPE "TRELLIS_FF")\n    (INSTANCE a_TRELLIS_FF_Q)',
                      '(CELLTYPE "DP16KD")\n    (INSTANCE a_TRELLIS_FF_Q)')
    sdf = sdf.replace("(IOPATH CLK Q (400:450:525) (400:450:525))\n      )\n    )\n  )\n"
                      "  (CELL\n    (CELLTYPE \"TRELLIS_COMB\")",
                      "(IOPATH CLKB DOB0 (5795:5812:5830) (5795:5812:5830))\n      )\n    )\n"
                      "  )\n  (CELL\n    (CELLTYPE \"TRELLIS_COMB\")", 1)
    sdf = sdf.replace("a_TRELLIS_FF_Q/Q", "a_TRELLIS_FF_Q/DOB0")
    assert "CLKB DOB0" in sdf and "CLK Q (400" in sdf      # the capturing flip-flop's stays
    found = {e.pin: e for e in endpoints(sdf, {"b_TRELLIS_FF_Q_3": "clk"})}
    # DI: the RAM's clock-to-output 5830 + 500 + 236 + 70 + setup 30.
    assert found["DI"] == Endpoint("clk", "b_TRELLIS_FF_Q_3", "DI", 6.666, "a_TRELLIS_FF_Q")


def test_a_loop_and_a_non_sdf_are_errors():
    looped = SDF.replace("(INTERCONNECT lut/F b_TRELLIS_FF_Q_3/DI",
                         "(INTERCONNECT lut/F lut/A (1:1:1) (1:1:1))\n        (INTERCONNECT lut/F b_TRELLIS_FF_Q_3/DI")
    with pytest.raises(ValueError, match="combinational loops"):
        endpoints(looped)
    with pytest.raises(ValueError, match="not an SDF file"):
        endpoints("module x; endmodule")


@pytest.mark.slow
def test_worst_arrival_is_nextpnrs_critical_path(tmp_path):
    """On a routed ECP5 block the worst arrival per clock is the period of nextpnr's Fmax."""
    from ahasd.hw.blocks import to_verilog
    from ahasd.hw.gts import GTS
    from ahasd.synth.fpga import fpga_of_verilog
    from ahasd.synth.sdf_timing import clocks_of_flip_flops
    path = tmp_path / "gts.v"
    path.write_text(to_verilog(GTS(), "gts"))
    report = fpga_of_verilog(path, "gts", "ecp5", tmp_path / "ecp5", freq_mhz=400)
    found = endpoints((tmp_path / "ecp5" / "routed.sdf").read_text(),
                      clocks_of_flip_flops(tmp_path / "ecp5" / "netlist.json"))
    worst = max(e.arrival_ns for e in found if e.clock == "clk")
    assert worst == pytest.approx(1000 / report.fmax_by_clock["clk"], abs=0.005)
    late, total = report.late_endpoints["clk"]
    assert total == len(found) and late == sum(e.arrival_ns > 2.5 for e in found) > 0
    assert report.worst_late[0][3] == pytest.approx(worst)
