"""ahasd.synth.sdf_timing: endpoint arrivals from an SDF, by hand on a small delay file and
against nextpnr's own critical path on a routed block."""

import pytest

from ahasd.synth.sdf_timing import (
    Endpoint,
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
