"""``ahasd trace stats FILE``: summary figures of a speculative-decoding trace.

Two streaming passes (:func:`ahasd.files.checked_trace`, as the replays): the first checks every
line, so a malformed trace prints nothing on standard output; the second gathers the figures.
Standard input is spooled to a temporary file first. Memory does not grow with the trace.
"""

import json

from ahasd.args import BINS_MAX, integer
from ahasd.files import checked_trace

#: trace stats' table: (JSON key, row label with its unit, decimals or None for a count)
STATS_ROWS = (
    ("output_tokens", "output [tokens]", None),
    ("batches_drafted", "batches drafted", None),
    ("verifications", "verifications", None),
    ("squashed", "squashed [batches]", None),
    ("acceptance_rate", "acceptance rate [0..1]", 3),
    ("accepted_per_verification", "accepted per verification [tokens]", 3),
    ("tokens_per_verification", "output per verification [tokens]", 3),
    ("full_accept_rate", "full accept rate [0..1]", 3),
    ("mean_draft_length", "mean draft length [tokens]", 3),
    ("mean_entropy", "mean entropy [nats]", 3),
)


def stats_rows(figures):
    """The (label, value) cells of the table of ``figures`` (:data:`STATS_ROWS`)."""
    return [(label, f"{figures[key]:,}" if places is None else f"{figures[key]:.{places}f}")
            for key, label, places in STATS_ROWS]


__all__ = ["register", "run_stats", "STATS_ROWS", "stats_rows"]


def register(sub):
    p = sub.add_parser("trace", help="inspect speculative-decoding traces",
                       description="Tools for traces written by `ahasd decode` "
                                   "(format: docs/trace-format.md).")
    verbs = p.add_subparsers(dest="trace_command", required=True, metavar="SUBCOMMAND")
    s = verbs.add_parser("stats", help="acceptance, draft lengths and entropy histogram")
    s.add_argument("file", help="trace file, or - for standard input")
    s.add_argument("--json", action="store_true", help="print the figures as JSON")
    s.add_argument("--bins", type=integer(1, BINS_MAX), default=10,
                   help=f"entropy histogram bins over 0..10 nats, 1..{BINS_MAX} (default 10)")
    s.set_defaults(func=run_stats)


def run_stats(args):
    from ahasd.sim.traces import decoding as trace
    from ahasd.sim.traces.lines import json_lines

    with checked_trace(args.file, lambda f: trace.check_records(json_lines(f))) as checked:
        name = checked.name
        figures = trace.stats(checked.items(), bins=args.bins)
    if args.json:
        print(json.dumps(figures, indent=2, allow_nan=False))
        return 0
    from rich.console import Console

    from ahasd.tables import print_table
    console = Console()
    print_table(f"{name} ({figures['policy']}, EDC {figures['edc']})", ("figure", "value"),
                stats_rows(figures), console=console, left=("figure",))
    hist = figures["entropy_histogram"]
    total = max(1, sum(hist["counts"]))
    width = 40
    console.print("draft entropy per token (nats), histogram:")
    for lo, hi, c in zip(hist["edges"], hist["edges"][1:], hist["counts"]):
        bar = "#" * round(width * c / total)
        console.print(f"  [{lo:4.1f}, {hi:4.1f})  {c:7d}  {bar}", markup=False, highlight=False)
    return 0
