"""``--param NAME=VALUE``, ``--name`` and ``--list-params`` of ``ahasd verilog|area|fpga``.

:func:`add_options` adds the options to a verb's parser; :func:`resolve` checks them before any
work (the block's own rules, through :func:`ahasd.synth.params.validate`) and returns
``[(block, params, top)]`` for the names the verb builds: a non-default build is named after its
parameters (``edc_history_depth16``) unless ``--name`` says otherwise.
"""

import re

from ahasd.errors import CliError
from ahasd.hw.blocks import block_names

__all__ = ["add_options", "resolve", "list_params"]


def add_options(p, *, listing=False):
    p.add_argument("--param", dest="params", action="append", default=[], metavar="NAME=VALUE",
                   help="a constructor parameter of the block (repeatable; nested ones dotted: "
                        "edc.history_depth=16 for the controller's EDC, config.n_banks=8 for a "
                        "DRAM configuration); the build is named after them unless --name")
    p.add_argument("--name", default=None, metavar="MODULE",
                   help="module and file name of the build (default: the block's, with the "
                        "--param values appended when there are any)")
    if listing:
        p.add_argument("--list-params", action="store_true",
                       help="list the block's parameters with type, default and range, and exit")


def resolve(args, block):
    """``[(block, params, top)]`` to build for ``args`` (see the module docstring)."""
    from ahasd.synth.params import parse_params, validate, variant_name
    names = block_names() if block == "all" else [block]
    if block == "all" and (args.params or args.name):
        raise CliError("--param and --name apply to one block, not to all")
    if args.name is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", args.name):
        raise CliError(f"--name {args.name!r}: not a Verilog module name (letters, digits, _)")
    if not args.params:
        return [(n, None, args.name or n) for n in names]
    try:
        params = validate(block, parse_params(block, args.params))
    except (ValueError, TypeError) as error:
        raise CliError(f"{block}: {error}") from None
    return [(block, params, args.name or variant_name(block, args.params))]


def list_params(block):
    """Print block ``block``'s parameters (name, type, default, range) as a table."""
    from ahasd.synth.params import param_specs
    from ahasd.tables import print_table
    if block == "all":
        raise CliError("--list-params lists one block's parameters, not all")
    print_table(f"{block}: constructor parameters (--param NAME=VALUE)",
                ("parameter", "type", "default", "range"),
                [(s.name, s.type, "-" if s.default is None else str(s.default), s.range)
                 for s in param_specs(block)], left=("parameter", "type", "range"))
