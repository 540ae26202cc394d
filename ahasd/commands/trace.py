"""``ahasd trace stats FILE``: summary figures of a speculative-decoding trace.

Two streaming passes (:func:`ahasd.files.checked_trace`, as the replays): the first checks every
line, so a malformed trace prints nothing on standard output; the second gathers the figures.
Standard input is spooled to a temporary file first. Memory does not grow with the trace.
"""

import json

from ahasd.args import BINS_MAX, integer
from ahasd.files import checked_trace

__all__ = ["register", "run_stats"]


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
    from rich.markup import escape
    from rich.table import Table
    table = Table(title=escape(f"{name} ({figures['policy']}, EDC {figures['edc']})"))
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key in ("output_tokens", "batches_drafted", "verifications", "squashed"):
        table.add_row(key.replace("_", " "), str(figures[key]))
    for key in ("acceptance_rate", "accepted_per_verification", "tokens_per_verification",
                "full_accept_rate", "mean_draft_length", "mean_entropy"):
        table.add_row(key.replace("_", " "), f"{figures[key]:.3f}")
    console = Console()
    console.print(table)
    hist = figures["entropy_histogram"]
    total = max(1, sum(hist["counts"]))
    width = 40
    console.print("draft entropy per token (nats), histogram:")
    for lo, hi, c in zip(hist["edges"], hist["edges"][1:], hist["counts"]):
        bar = "#" * round(width * c / total)
        console.print(f"  [{lo:4.1f}, {hi:4.1f})  {c:7d}  {bar}", markup=False, highlight=False)
    return 0
