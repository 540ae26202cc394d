"""``ahasd trace stats FILE``: summary figures of a speculative-decoding trace."""

from pathlib import Path

__all__ = ["register", "run_stats"]


def register(sub):
    p = sub.add_parser("trace", help="inspect speculative-decoding traces",
                       description="Tools for traces written by `ahasd decode` "
                                   "(format: docs/trace-format.md).")
    verbs = p.add_subparsers(dest="trace_command", required=True, metavar="SUBCOMMAND")
    s = verbs.add_parser("stats", help="acceptance, draft lengths and entropy histogram")
    s.add_argument("file", type=Path)
    s.add_argument("--json", action="store_true", help="print the figures as JSON")
    s.add_argument("--bins", type=int, default=10, help="entropy histogram bins over 0..10 nats")
    s.set_defaults(func=run_stats)


def run_stats(args):
    import json

    from ahasd.cli import CliError
    from ahasd.sim.traces import decoding as trace

    if args.bins < 1:
        raise CliError(f"--bins must be a positive integer, not {args.bins}")
    try:
        figures = trace.stats(trace.read(args.file), bins=args.bins)
    except FileNotFoundError:
        raise CliError(f"no such trace file: {args.file}") from None
    except trace.TraceError as e:
        raise CliError(f"{args.file}: {e}") from None
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table
    table = Table(title=f"{args.file} ({figures['policy']}, EDC {figures['edc']})")
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
