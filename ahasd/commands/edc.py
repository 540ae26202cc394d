"""``ahasd edc replay TRACE [--variant committed|anchor] [--rtl] [--stats]``."""

import json
import sys

__all__ = ["register"]


def register(sub):
    p = sub.add_parser("edc", help="EDC tools (replay a trace through the golden model or RTL)")
    verbs = p.add_subparsers(dest="edc_command", required=True, metavar="VERB")
    r = verbs.add_parser(
        "replay", help="replay an EDC event trace and print one decision per draft",
        description="Read JSON lines {\"op\": \"draft\", \"entropy\": <nats>} / {\"op\": "
                    "\"verify\", \"full\": <bool>} (or an ahasd-trace file) and print, for each "
                    "draft, {\"continue\": <bool>, \"index\": <int>}. A malformed line is "
                    "reported with its line number (exit status 2) and nothing is printed.")
    r.add_argument("trace", help="trace file (JSON lines), or - for standard input")
    r.add_argument("--variant", choices=["committed", "anchor"], default="committed")
    r.add_argument("--rtl", action="store_true",
                   help="run the Verilated EDC RTL (variant committed) instead of the golden model")
    r.add_argument("--stats", action="store_true",
                   help="also print continue rate, suppression rate and prediction accuracy "
                        "to standard error")
    r.set_defaults(func=replay)


def replay(args):
    from ahasd.cli import CliError
    from ahasd.sim.blocks.edc import EDC, score_events
    from ahasd.sim.traces.edc import TraceFormatError, parse_events, read_events
    try:
        events = parse_events(sys.stdin) if args.trace == "-" else read_events(args.trace)
    except OSError as error:
        raise CliError(f"cannot read {args.trace}: {error.strerror}") from None
    except TraceFormatError as error:
        raise CliError(f"{args.trace}: {error}") from None
    if args.rtl and args.variant != "committed":
        raise CliError("--rtl runs the RTL, which implements the committed variant only")
    decisions, score = score_events(EDC(variant=args.variant), events)
    if args.rtl:
        from ahasd.cosim.edc import VerilatedEDC
        decisions = VerilatedEDC().run_events(events)
    out = sys.stdout
    for d in decisions:
        out.write(json.dumps({"continue": d.cont, "index": d.index}) + "\n")
    if args.stats:
        s = score.as_dict()
        print(f"drafts {s['drafts']}, verifies {s['verifies']}, continue rate "
              f"{s['continue_rate']:.3f}, suppression rate {s['suppression_rate']:.3f}, "
              f"accuracy {s['accuracy']:.3f} over {s['scored']} verified batches",
              file=sys.stderr)
