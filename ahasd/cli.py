"""The ``ahasd`` command line.

Each verb lives in a module of :mod:`ahasd.commands` that defines ``register(subparsers)``; the
module adds its parser and sets ``func`` to a callable taking the parsed arguments and returning an
exit status. Heavy imports (Amaranth, numpy, Verilator) happen inside those callables so that
``ahasd --help`` stays fast.
"""

import argparse
import importlib
import sys

__all__ = ["main", "CliError", "COMMAND_MODULES"]

#: Modules that register a verb (see the module docstring). Add a line to add a verb.
COMMAND_MODULES = [
    "ahasd.commands.verilog",
    "ahasd.commands.area",
    "ahasd.commands.fpga",
    "ahasd.commands.edc",
    "ahasd.commands.tvc",
    "ahasd.commands.bench",
    "ahasd.commands.demo",
    "ahasd.commands.decode",
    "ahasd.commands.trace",
    "ahasd.commands.regs",
]


class CliError(Exception):
    """A user-facing error: printed as ``ahasd: error: ...`` with exit status ``status``."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


def build_parser():
    parser = argparse.ArgumentParser(
        prog="ahasd",
        description="AHASD: asynchronous NPU + PIM speculative decoding in Python HDL.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.func(args)
    except CliError as error:
        print(f"ahasd: error: {error}", file=sys.stderr)
        return error.status
    except BrokenPipeError:  # e.g. `ahasd edc replay t.jsonl | head`
        sys.stderr.close()
        return 0
    return 0 if status is None else status


if __name__ == "__main__":
    sys.exit(main())
