"""The equivalence flow on tiny designs: it proves an equivalent pair (renamed state, a changed
port list, restructured logic) and fails on pairs that differ in a cycle, in an output or in a
register's initial value."""

import pytest

from ahasd.synth.equiv import EquivalenceError, check_equivalent, main, top_ports

OLD = """\
module top(clk, rst, en, d, q);
  input clk;
  input rst;
  input en;
  input [3:0] d;
  output [3:0] q;
  reg [3:0] acc = 4'h0;
  always @(posedge clk) if (rst) acc <= 4'h0; else if (en) acc <= acc + d;
  assign q = acc;
endmodule
"""

# The same circuit: another register name, the operands swapped, the enable as a mux, the ports
# declared in the header.
SAME = """\
module top(input clk, input rst, input en, input [3:0] d, output [3:0] q);
  reg [3:0] total = 4'h0;
  wire [3:0] next = en ? d + total : total;
  always @(posedge clk) total <= rst ? 4'h0 : next;
  assign q = total;
endmodule
"""

# The enable and the data on one port, as a stream payload would carry them.
PACKED = """\
module top(clk, rst, i, q);
  input clk;
  input rst;
  input [4:0] i;
  output [3:0] q;
  reg [3:0] total = 4'h0;
  always @(posedge clk) if (rst) total <= 4'h0; else if (i[0]) total <= total + i[4:1];
  assign q = total;
endmodule
"""


def test_equivalent_pair_is_proved(tmp_path):
    summary = check_equivalent(OLD, SAME, "top", renames={"acc": "total"}, work=tmp_path)
    assert "proven" in summary or "Equivalence" in summary


def test_changed_port_list_is_bridged():
    check_equivalent(OLD, PACKED, "top", renames={"acc": "total"}, ports={"i": "{d, en}"})
    with pytest.raises(EquivalenceError):   # the fields in the wrong order
        check_equivalent(OLD, PACKED, "top", renames={"acc": "total"},
                         ports={"i": "{d[0], d[3:1], en}"})
    with pytest.raises(ValueError, match="'x' in the expression for 'i' is not a port"):
        check_equivalent(OLD, PACKED, "top", ports={"i": "{x, en}"})


@pytest.mark.parametrize("change", [
    ("acc + d", "acc + d + 4'h1"),        # a different next state
    ("assign q = acc", "assign q = ~acc"),  # a different output
    ("acc = 4'h0", "acc = 4'h5"),         # a different initial value
])
def test_different_pair_fails(change):
    new = OLD.replace(*change)
    assert new != OLD
    with pytest.raises(EquivalenceError, match="top: "):
        check_equivalent(OLD, new, "top")


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="seq must be an integer >= 1, not 0"):
        check_equivalent(OLD, OLD, "top", seq=0)
    with pytest.raises(ValueError, match="top 'nope' is not a module"):
        top_ports(OLD, "nope")
    assert top_ports(OLD, "top")[2:4] == [("input", "", "en"), ("input", "[3:0]", "d")]
    (tmp_path / "old.v").write_text(OLD)
    (tmp_path / "new.v").write_text(OLD.replace("acc + d", "acc - d"))
    assert main([str(tmp_path / "old.v"), str(tmp_path / "old.v"), "top"]) == 0
    assert main([str(tmp_path / "old.v"), str(tmp_path / "new.v"), "top"]) == 1
