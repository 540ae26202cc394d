"""Timing at 28 nm (ahasd.synth.sta over the area flow's mapped netlist): the flow's critical
path of an inverter chain and of a 32-bit ripple-carry adder against hand calculations from the
figures docs/implementation.md states; bad input; the CPU-time budget of tool runs."""

import json
import subprocess
import sys

import pytest
from amaranth.hdl import Cat, ClockDomain, ClockSignal, Instance, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.cli import main
from ahasd.hw.blocks import to_verilog
from ahasd.synth.sta import Netlist, TimingError, analyse, read_liberty, read_netlist
from ahasd.synth.yosys import (
    LIBERTY,
    CpuBudgetExceeded,
    area_liberty,
    area_of_verilog,
    run_with_cpu_budget,
)

# The calibrated figures as docs/implementation.md states them (not read from the liberty).
FO4_PS = 14.0
TAU = FO4_PS / 5                 # logical effort: FO4 = tau * (p_inv 1 + 4)
CQ_PS, SETUP_PS = 58.0, 25.0     # DFF clock-to-Q (intrinsic) and setup
WIRE = 0.5                       # wire load per driven pin, in unit-inverter inputs
# (parasitic delay p in tau, input load g in unit-inverter inputs)
P = {"INV": 1, "XOR2": 4, "MUX2_data": 6, "MUX2_select": 9}
G = {"INV": 1, "DFF": 1, "XOR2": 4, "MUX2_data": 2, "MUX2_select": 3}


def stage(p, *loads):
    """Delay of one X1 cell (ps): tau * (p + load), the load in unit-inverter inputs."""
    return TAU * (p + sum(loads) + WIRE * len(loads))


def clock_to_q(*loads):
    return CQ_PS + TAU * (sum(loads) + WIRE * len(loads))


class Chain(wiring.Component):
    """A register, ``n`` inverters (each also driving ``fanout - 1`` side inverters, whose
    outputs are ports so that synthesis keeps them), a register; reset-less registers, so
    nothing but the chain sits between them."""

    def __init__(self, n, fanout=1):
        self.n, self.fanout = n, fanout
        super().__init__({"a": In(1), "y": Out(1), "side": Out(max(1, n * (fanout - 1)))})

    def elaborate(self, platform):
        m = Module()
        first = Signal(name="first", reset_less=True)
        last = Signal(name="last", reset_less=True)
        m.d.sync += first.eq(self.a)
        x, side = first, []
        for i in range(self.n):
            out = Signal(name=f"n{i}")
            m.submodules[f"inv{i}"] = Instance("INV", i_A=x, o_Y=out)
            for j in range(self.fanout - 1):
                side.append(Signal(name=f"side{i}_{j}"))
                m.submodules[f"side{i}_{j}"] = Instance("INV", i_A=out, o_Y=side[-1])
            x = out
        m.d.sync += last.eq(x)
        m.d.comb += [self.y.eq(last), self.side.eq(Cat(*side))]
        return m


class RippleAdder(wiring.Component):
    """Registered 32-bit ripple-carry adder of gates.lib cells: p = a ^ b (XOR2),
    carry out = p ? carry in : a (MUX2), sum = p ^ carry in (XOR2); bit 0's carry is a & b."""
    a: In(32)
    b: In(32)
    s: Out(33)

    def elaborate(self, platform):
        m = Module()
        ra = Signal(32, name="ra", reset_less=True)
        rb = Signal(32, name="rb", reset_less=True)
        rs = Signal(33, name="rs", reset_less=True)
        m.d.sync += [ra.eq(self.a), rb.eq(self.b)]
        carry, bits = None, []
        for i in range(32):
            p, s, c = Signal(name=f"p{i}"), Signal(name=f"s{i}"), Signal(name=f"c{i + 1}")
            m.submodules[f"x{i}"] = Instance("XOR2", i_A=ra[i], i_B=rb[i], o_Y=p)
            if carry is None:
                m.submodules[f"g{i}"] = Instance("AND2", i_A=ra[i], i_B=rb[i], o_Y=c)
                m.d.comb += s.eq(p)
            else:
                m.submodules[f"sx{i}"] = Instance("XOR2", i_A=p, i_B=carry, o_Y=s)
                m.submodules[f"m{i}"] = Instance("MUX2", i_A=ra[i], i_B=carry, i_S=p, o_Y=c)
            bits.append(s)
            carry = c
        m.d.sync += rs.eq(Cat(*bits, carry))
        m.d.comb += self.s.eq(rs)
        return m


def timing_of(component, name, tmp_path):
    path = tmp_path / f"{name}.v"
    path.write_text(to_verilog(component, name))
    area_of_verilog(path, name, tmp_path / name, timing=False)
    netlist = read_netlist(tmp_path / name / "mapped.json", name)
    return analyse(netlist, read_liberty(LIBERTY), block=name)


@pytest.mark.parametrize("n, fanout", [(40, 1), (30, 4)])
def test_inverter_chain_matches_the_hand_calculation(tmp_path, n, fanout):
    report = timing_of(Chain(n, fanout), "chain", tmp_path)
    # The first register drives inv0; each inverter drives the next (the last: the register)
    # and fanout - 1 side inverters. With side inverters, the longest path ends through one of
    # the last stage's into an output port (which drives a flip-flop outside).
    loads = [G["INV"]] * fanout
    hand = (clock_to_q(G["INV"]) + (n - 1) * stage(P["INV"], *loads)
            + stage(P["INV"], G["DFF"], *loads[1:])
            + (stage(P["INV"], G["DFF"]) if fanout > 1 else 0) + SETUP_PS) / 1e3
    if fanout == 4:      # an FO4 inverter without wire is 14 ps: the figure the model starts at
        assert TAU * (P["INV"] + 4) == pytest.approx(FO4_PS)
    assert report.critical_ns == pytest.approx(hand, rel=0.05)
    assert report.logic_depth == n + (fanout > 1)
    assert report.start == "reg first"
    # `last` drives port y directly: mapping names the register after the port.
    assert report.end == "reg y" if fanout == 1 else report.end.startswith("output side[")
    assert [step["cell"] for step in report.path[1:n + 1]] == [f"inv{i}" for i in range(n)]


def test_ripple_carry_adder_matches_the_hand_calculation(tmp_path):
    report = timing_of(RippleAdder(), "rca", tmp_path)
    # Critical path: ra[1] -> x1 (XOR2) -> p1 -> m1 select -> c2 -> m2..m31 data -> rs[32].
    hand = (clock_to_q(G["XOR2"], G["MUX2_data"])                     # ra[1]: x1.A, m1.A
            + stage(P["XOR2"], G["XOR2"], G["MUX2_select"])           # p1: sx1.A, m1.S
            + stage(P["MUX2_select"], G["XOR2"], G["MUX2_data"])      # c2: sx2.B, m2.B
            + 29 * stage(P["MUX2_data"], G["XOR2"], G["MUX2_data"])   # c3..c31
            + stage(P["MUX2_data"], G["DFF"])                         # c32: rs[32]
            + SETUP_PS) / 1e3
    assert report.critical_ns == pytest.approx(hand, rel=0.05)
    assert report.fmax_mhz == pytest.approx(1e3 / hand, rel=0.05)
    assert report.logic_depth == 32
    assert report.end == "reg s[32]"            # rs drives port s
    assert report.start in ("reg ra[1]", "reg rb[1]")
    assert not report.meets_target          # 1.26 ns: slower than 800 MHz (1.25 ns)


class Fanout(wiring.Component):
    """A register driving ``n`` inverters, whose outputs are ports."""

    def __init__(self, n):
        self.n = n
        super().__init__({"a": In(1), "y": Out(n)})

    def elaborate(self, platform):
        m = Module()
        q = Signal(name="q", reset_less=True)
        m.d.sync += q.eq(self.a)
        for i in range(self.n):
            m.submodules[f"inv{i}"] = Instance("INV", i_A=q, o_Y=self.y[i])
        return m


def test_a_high_fanout_net_is_timed_through_a_fanout_4_tree(tmp_path):
    report = timing_of(Fanout(64), "fan", tmp_path)
    pin = G["INV"] + WIRE
    # Directly, q would drive 64 pins: tau * 96 = 269 ps. Through a tree: the flip-flop drives
    # four pins, then log4(64 / 4) = 2 levels of inverters driving four pins each.
    direct = TAU * 64 * pin
    tree = TAU * 4 * pin + 2 * TAU * (P["INV"] + 4 * pin)
    assert tree < direct
    hand = (CQ_PS + tree + stage(P["INV"], G["DFF"]) + SETUP_PS) / 1e3
    assert report.critical_ns == pytest.approx(hand, rel=0.05)
    assert report.start == "reg q" and report.logic_depth == 1


class Crossing(wiring.Component):
    """Register ``a`` (domain ``one``) -> 20 inverters -> register ``b`` (domain ``two``), and
    register ``b`` -> 2 inverters -> register ``c`` (domain ``two``)."""

    def __init__(self):
        super().__init__({"d": In(1), "y": Out(1), "one_clk": In(1), "two_clk": In(1)})

    def elaborate(self, platform):
        m = Module()
        m.domains.one = ClockDomain("one", reset_less=True)
        m.domains.two = ClockDomain("two", reset_less=True)
        m.d.comb += [ClockSignal("one").eq(self.one_clk), ClockSignal("two").eq(self.two_clk)]
        a, b, c = (Signal(name=n, reset_less=True) for n in "abc")

        def chain(x, n, tag):
            for i in range(n):
                out = Signal(name=f"{tag}{i}")
                m.submodules[f"{tag}{i}"] = Instance("INV", i_A=x, o_Y=out)
                x = out
            return x
        m.d.one += a.eq(self.d)
        m.d.two += [b.eq(chain(a, 20, "long")), c.eq(chain(b, 2, "short"))]
        m.d.comb += self.y.eq(c)
        return m


def test_a_path_between_clock_domains_is_not_timed(tmp_path):
    report = timing_of(Crossing(), "cdc", tmp_path)
    assert report.logic_depth == 2 and report.start == "reg b"
    hand = (clock_to_q(G["INV"]) + stage(P["INV"], G["INV"]) + stage(P["INV"], G["DFF"])
            + SETUP_PS) / 1e3
    assert report.critical_ns == pytest.approx(hand, rel=0.05)
    assert set(report.critical_ns_by_clock) == {"one_clk", "two_clk"}


def test_area_flow_reads_the_liberty_without_its_timing():
    view = area_liberty()
    assert "timing()" not in view and "capacitance :" not in view
    lib = read_liberty(LIBERTY)
    for cell in lib.cells:
        assert f"cell({cell})" in view
    assert lib["INV"].arcs[("A", "Y")][0] == pytest.approx(TAU * P["INV"] / 1e3)


def test_bad_input(tmp_path):
    netlist = Netlist(cells=[("u1", "INV", [("A", 1)], [("Y", 2)]),
                             ("u2", "INV", [("A", 2)], [("Y", 1)])],
                      inputs=[], outputs=[], names={}, nets=3)
    lib = read_liberty(LIBERTY)
    with pytest.raises(TimingError, match="combinational loop through cell u"):
        analyse(netlist, lib)
    odd = Netlist(cells=[("u1", "AOI21", [("A", 1)], [("Y", 2)])], inputs=[], outputs=[],
                  names={}, nets=3)
    with pytest.raises(TimingError, match="cell u1 has type 'AOI21', which is not in the "
                                          "liberty"):
        analyse(odd, lib)
    with pytest.raises(ValueError, match="target_mhz must be a positive number, not 0"):
        analyse(netlist, lib, target_mhz=0)
    with pytest.raises(ValueError, match=r"wire_pf must be a finite number >= 0, not -1"):
        analyse(netlist, lib, wire_pf=-1)
    (tmp_path / "n.json").write_text('{"modules": {}}')
    with pytest.raises(TimingError, match="has no module 'top'"):
        read_netlist(tmp_path / "n.json", "top")


def test_cli_bad_input(tmp_path, capsys):
    assert main(["timing", "nosuch"]) == 2
    assert "invalid choice: 'nosuch'" in capsys.readouterr().err
    assert main(["timing", "gts", "--target-mhz", "0"]) == 2
    assert "--target-mhz must be a positive number, not 0" in capsys.readouterr().err
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n")
    assert main(["timing", "all", "--readme", str(readme), "--build-dir",
                 str(tmp_path / "b")]) == 2
    assert "needs exactly one '<!-- timing: begin ... -->' line" in capsys.readouterr().err
    assert not (tmp_path / "b" / "edc").exists()          # failed before any work


BURN = [sys.executable, "-c", "while True: pass"]
SLEEP = [sys.executable, "-c", "import time; time.sleep(1.5); print('slept')"]


def test_a_process_that_burns_cpu_is_stopped_at_its_cpu_budget():
    with pytest.raises(CpuBudgetExceeded, match="used more than 0.3 s of CPU"):
        run_with_cpu_budget(BURN, 0.3)


def test_a_process_that_sleeps_is_not_stopped_by_wall_time():
    # 1.5 s of wall clock against a 0.5 s CPU budget: a wall-clock budget would stop it.
    result = run_with_cpu_budget(SLEEP, 0.5)
    assert result.returncode == 0 and result.stdout == "slept\n"


def test_the_wall_clock_limit_still_applies():
    with pytest.raises(subprocess.TimeoutExpired):
        run_with_cpu_budget(SLEEP, None, timeout=0.2)
    with pytest.raises(ValueError, match="cpu_s must be a positive number, not 0"):
        run_with_cpu_budget(SLEEP, 0)


@pytest.mark.slow
def test_cli_reuses_the_area_flows_netlist(tmp_path, capsys):
    from ahasd.synth.timing_report import timing_report
    build = tmp_path / "area"
    assert main(["area", "gts", "--no-timing", "--json", "--build-dir", str(build)]) == 0
    capsys.readouterr()
    mapped = build / "gts" / "mapped.json"
    before = mapped.stat().st_mtime_ns
    assert main(["timing", "gts", "--json", "--build-dir", str(build)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["blocks"]
    assert mapped.stat().st_mtime_ns == before                   # not synthesised again
    assert row["block"] == "gts" and row["fmax_mhz"] == pytest.approx(1e3 / row["critical_ns"],
                                                                      rel=1e-3)
    assert row["path"][0]["type"] == "start" and len(row["path"]) == row["logic_depth"] + 1
    arrivals = [step["arrival_ns"] for step in row["path"]]
    assert arrivals == sorted(arrivals) and arrivals[-1] < row["critical_ns"]
    (build / "gts" / "mapped.key").write_text("stale\n")         # another design's netlist
    report, reused = timing_report("gts", build)
    assert not reused and report.critical_ns == row["critical_ns"]
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- timing: begin (generated) -->\nold\n<!-- timing: end -->\nb\n")
    assert main(["timing", "gts", "--build-dir", str(build), "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert "old" not in text and "| gts | " in text and text.endswith("<!-- timing: end -->\nb\n")
