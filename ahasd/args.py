"""Argument types and the documented limits of the ``ahasd`` options that size memory or time.

An out-of-range value is refused by argparse before any work starts, with a message naming the
option (``ahasd: error: decode: argument --tokens: ...``). :func:`check_choice` refuses a name
that is not in a registry once the arguments are parsed (``ahasd: error: --pair must be one of
...``).
"""

import argparse
import math
from pathlib import Path

from ahasd.errors import CliError
from ahasd.hw.blocks import block_names

__all__ = ["TOKENS_MAX", "BINS_MAX", "LEN_MAX", "COST_MAX", "SEED_MAX", "integer", "number",
           "seed", "check_choice", "add_block_arguments"]

#: Most tokens ``ahasd decode`` / ``ahasd demo`` generate (the trace is built in memory).
TOKENS_MAX = 100_000
#: Most entropy-histogram bins of ``ahasd trace stats``.
BINS_MAX = 1000
#: Longest draft batch (``--min-len``, ``--max-len``).
LEN_MAX = 256
#: Largest time per drafted token / per target pass (keeps every time finite).
COST_MAX = 1e6
#: Seeds are 64-bit.
SEED_MAX = (1 << 64) - 1


def integer(low, high):
    """An argparse type: a decimal integer in ``low..high``."""
    def parse(text):
        # Check the length first: int() of a huge string is slow and may hit Python's limit.
        if len(text) > 25:
            raise argparse.ArgumentTypeError(f"must be an integer in {low}..{high}, not "
                                             f"{text[:20]!r}... ({len(text)} characters)")
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be an integer in {low}..{high}, not {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be an integer in {low}..{high}, not {value}")
        return value
    parse.__name__ = "integer"
    return parse


def number(low, high, *, low_open=False):
    """An argparse type: a finite number in ``[low, high]`` (``(low, high]`` if ``low_open``)."""
    bounds = f"{'(' if low_open else '['}{low:g}, {high:g}]"

    def parse(text):
        try:
            value = float(text) if len(text) <= 60 else math.nan
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (low < value if low_open else low <= value)
                and value <= high):
            raise argparse.ArgumentTypeError(f"must be a finite number in {bounds}, not "
                                             f"{text[:60]!r}")
        return value
    parse.__name__ = "number"
    return parse


seed = integer(0, SEED_MAX)


def check_choice(name, value, choices):
    """Refuse option ``--name`` unless ``value`` is one of ``choices`` (a one-line
    :class:`ahasd.errors.CliError`)."""
    if value not in choices:
        raise CliError(f"--{name} must be one of {', '.join(choices)}, not {value!r}")


def add_block_arguments(parser, *, json_help, build_dir, build_help):
    """The block flows' shared options (``area``, ``timing``): the positional ``BLOCK|all``,
    ``--json`` (``json_help``) and ``--build-dir`` (default ``build_dir``; ``build_help``)."""
    parser.add_argument("block", choices=block_names() + ["all"])
    parser.add_argument("--json", action="store_true", help=json_help)
    parser.add_argument("--build-dir", type=Path, default=Path(build_dir), metavar="DIR",
                        help=f"{build_help} (default: {build_dir})")
