"""``ahasd verilog BLOCK|all -o DIR``: write the Verilog of a block (and lint it)."""

from pathlib import Path

__all__ = ["register", "write_verilog", "write_core"]


def register(sub):
    from ahasd.hw.blocks import block_names
    p = sub.add_parser("verilog", help="write the Verilog of a block",
                       description="Write DIR/BLOCK.v for a block with its default parameters, "
                                   "then lint it with verilator --lint-only -Wall and the "
                                   "documented waivers (ahasd.synth.verilator.LINT_WAIVERS). "
                                   "Also writes DIR/ahasd_blocks.core, a FuseSoC core of the "
                                   "files written (a lint target per block).")
    p.add_argument("block", choices=block_names() + ["all"])
    p.add_argument("-o", "--output", default="build/verilog", type=Path, metavar="DIR")
    p.add_argument("--no-lint", action="store_true", help="skip the Verilator lint")
    p.set_defaults(func=run)


def write_verilog(name, folder, lint=True):
    """Write ``folder/name.v`` for block ``name``; lint unless ``lint`` is false. Return the path."""
    from ahasd.hw.blocks import make_block, to_verilog
    from ahasd.synth import verilator
    from ahasd.files import atomic_write_text
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = atomic_write_text(folder / f"{name}.v", to_verilog(make_block(name), name))
    if lint:
        verilator.lint(path, name)
    return path


def write_core(names, folder):
    """Write the FuseSoC core describing ``folder/<name>.v`` for ``names`` and the blocks the
    folder's core already lists (:func:`ahasd.synth.fusesoc.core_blocks`); return its path."""
    from ahasd.synth.fusesoc import CORE_FILE, core_blocks, core_text
    path = Path(folder) / CORE_FILE
    path.write_text(core_text(core_blocks(folder, names)))
    return path


def run(args):
    from ahasd.cli import CliError
    from ahasd.hw.blocks import block_names
    from ahasd.synth.verilator import VerilatorError
    from ahasd.files import output_dir
    names = block_names() if args.block == "all" else [args.block]
    output_dir(args.output, "-o")                     # before any work
    for name in names:
        try:
            path = write_verilog(name, args.output, lint=not args.no_lint)
        except VerilatorError as error:
            raise CliError(str(error), status=1) from None
        print(f"wrote {path}" + ("" if args.no_lint else " (lint clean)"))
    print(f"wrote {write_core(names, args.output)}")
