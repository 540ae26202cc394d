"""``ahasd timing BLOCK|all [--json]``: critical path and Fmax at 28 nm from the area flow's
mapped netlist (:mod:`ahasd.synth.sta`; the report is :mod:`ahasd.synth.timing_report`)."""

import json
from pathlib import Path

from ahasd.args import add_block_arguments
from ahasd.synth.timing_report import columns, markdown_timing, timing_report

__all__ = ["register", "run", "print_timing", "TERMINAL_HEADER"]

#: ``ahasd timing --help``'s description (argparse reflows it).
DESCRIPTION = """\
Static timing of a block's netlist as the area flow maps it onto synth/gates.lib (a netlist
already under --build-dir from `ahasd area` is reused when it is of the same design; otherwise
the area flow runs): the longest register-to-register path with the liberty's 28 nm cell delays
(logical effort, FO4 = 14 ps) and a fanout-based wire load, its start and end registers and
logic depth, Fmax, and whether the block meets the target clock. The figures and their sources:
docs/implementation.md."""


def register(sub):
    from ahasd.synth import sta
    p = sub.add_parser("timing", help="critical path and Fmax of a block at 28 nm (from the mapped netlist)",
                       description=DESCRIPTION)
    add_block_arguments(p, json_help="print the figures as JSON (with the critical path cell by cell)",
                        build_dir="build/area", build_help="where the area flow's netlists are (and go)")
    p.add_argument("--target-mhz", type=float, default=sta.TARGET_MHZ, metavar="MHZ",
                   help=f"clock to check against (default {sta.TARGET_MHZ:g}, the paper's "
                        f"PIM clock)")
    p.add_argument("--wire-ff", type=float, default=sta.WIRE_PF_PER_FANOUT * 1e3, metavar="FF",
                   help=f"wire capacitance per driven pin in fF (default "
                        f"{sta.WIRE_PF_PER_FANOUT * 1e3:g})")
    p.add_argument("--readme", type=Path, default=None, metavar="FILE",
                   help="also rewrite the generated timing table of FILE (section 'timing')")
    p.set_defaults(func=run)


#: The terminal table's columns (units in brackets; the README's are :data:`ahasd.synth.timing_report.HEADER`).
TERMINAL_HEADER = ("block", "critical path [ns]", "Fmax [MHz]", "meets {target:g} MHz",
                   "depth [gates]", "late end points", "from", "to")


def print_timing(reports, target_mhz, wire_ff, console=None):
    """Print the timing table: a table when it fits the console, else one ``key: value`` block
    per block (:func:`ahasd.tables.print_table`)."""
    from ahasd.tables import print_table
    print_table(f"Timing at 28 nm (synth/gates.lib delays, FO4 14 ps; wire {wire_ff:g} fF per "
                f"fanout; target {target_mhz:g} MHz)",
                [h.format(target=target_mhz) for h in TERMINAL_HEADER],
                [columns(r) for r in reports], console=console, left=("block", "from", "to"))


def run(args):
    from rich.console import Console

    from ahasd.errors import CliError
    from ahasd.files import output_dir
    from ahasd.hw.blocks import block_names
    from ahasd.readme import check_readme
    from ahasd.spec.params import check_positive, check_real
    from ahasd.synth.sta import TimingError
    from ahasd.synth.yosys import YosysError
    try:
        check_positive("--target-mhz", args.target_mhz)
        check_real("--wire-ff", args.wire_ff, 0)
    except ValueError as error:
        raise CliError(str(error)) from None
    names = block_names() if args.block == "all" else [args.block]
    if args.readme is not None:
        check_readme(args.readme, ["timing"])
    output_dir(args.build_dir, "--build-dir")
    status = Console(stderr=True)
    reports = []
    try:
        for n, name in enumerate(names, start=1):
            with status.status(f"timing {name} ({n}/{len(names)})"):
                report, _ = timing_report(name, args.build_dir, target_mhz=args.target_mhz,
                                          wire_pf=args.wire_ff * 1e-3)
                reports.append(report)
    except YosysError as error:
        raise CliError(str(error), status=1) from None
    except TimingError as error:
        raise CliError(str(error), status=1) from None
    if args.json:
        # one shape whatever the arguments (docs/implementation.md, "JSON output")
        data = {"blocks": [r.as_dict() for r in reports], "anchors": None}
        print(json.dumps(data, indent=2, allow_nan=False))
    else:
        print_timing(reports, args.target_mhz, args.wire_ff)
    if args.readme is not None:
        from ahasd.readme import update_section
        update_section(args.readme, "timing", markdown_timing(reports))
