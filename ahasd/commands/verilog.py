"""``ahasd verilog BLOCK|all -o DIR``: write the Verilog of a block (and lint it).

The export (write, lint, FuseSoC core) is :mod:`ahasd.synth.export`; this module parses, calls
and prints.
"""

from pathlib import Path

from ahasd.blockparams import add_options, list_params, resolve
from ahasd.errors import CliError
from ahasd.files import output_dir
from ahasd.hw.blocks import block_names
from ahasd.synth.export import write_core, write_verilog
from ahasd.synth.verilator import VerilatorError

__all__ = ["register", "run"]


def register(sub):
    p = sub.add_parser("verilog", help="write the Verilog of a block",
                       description="Write DIR/BLOCK.v for a block with its default parameters, "
                                   "then lint it with verilator --lint-only -Wall and the "
                                   "documented waivers (ahasd.synth.verilator.LINT_WAIVERS). "
                                   "Also writes DIR/ahasd_blocks.core, a FuseSoC core of the "
                                   "files written (a lint target per block).")
    p.add_argument("block", choices=block_names() + ["all"])
    p.add_argument("-o", "--output", default="build/verilog", type=Path, metavar="DIR")
    p.add_argument("--no-lint", action="store_true", help="skip the Verilator lint")
    add_options(p, listing=True)
    p.set_defaults(func=run)


def run(args):
    if args.list_params:
        return list_params(args.block)
    builds = resolve(args, args.block)                # before any work
    output_dir(args.output, "-o")
    for name, params, top in builds:
        try:
            path = write_verilog(name, args.output, lint=not args.no_lint, params=params, top=top)
        except VerilatorError as error:
            raise CliError(str(error), status=1) from None
        print(f"wrote {path}" + ("" if args.no_lint else " (lint clean)"))
    generated = {top: ", ".join(args.params) for _, params, top in builds if params}
    print(f"wrote {write_core([top for _, _, top in builds], args.output, generated)}")
