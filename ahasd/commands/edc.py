"""``ahasd edc replay TRACE [--variant committed|anchor] [--rtl] [--stats]``.

The trace is read twice, streaming: a first pass checks every line (a malformed trace prints
nothing on standard output), a second runs the events and prints each decision as it is made.
Memory does not grow with the trace (standard input is spooled to a temporary file first).
The scoring is :class:`ahasd.sim.blocks.edc.EDCScorer`'s (that of
:func:`ahasd.sim.blocks.edc.score_events`, one event at a time).
"""

import sys

from ahasd.errors import CliError
from ahasd.files import checked_trace
from ahasd.progress import progress
from ahasd.sim.blocks.edc import EDC, VARIANTS, EDCScorer, run_events
from ahasd.sim.traces.edc import iter_events

__all__ = ["register", "replay"]

#: Decisions written per ``write`` call.
_CHUNK = 4096


def register(sub):
    p = sub.add_parser("edc", help="EDC tools (replay a trace through the golden model or RTL)")
    verbs = p.add_subparsers(dest="edc_command", required=True, metavar="VERB")
    r = verbs.add_parser(
        "replay", help="replay an EDC event trace and print one decision per draft",
        description="Read JSON lines {\"op\": \"draft\", \"entropy\": <nats >= 0>} / {\"op\": "
                    "\"verify\", \"full\": <bool>} (or an ahasd-trace file; docs/trace-format.md) "
                    "and print, for each draft, {\"continue\": <bool>, \"index\": <int>}. A "
                    "malformed line is reported with its line number (exit status 2) and nothing "
                    "is printed.")
    r.add_argument("trace", help="trace file (JSON lines), or - for standard input")
    r.add_argument("--variant", choices=VARIANTS, default="committed")
    r.add_argument("--rtl", action="store_true",
                   help="run the Verilated EDC RTL (variant committed) instead of the golden model")
    r.add_argument("--stats", action="store_true",
                   help="also print continue rate, suppression rate and prediction accuracy "
                        "to standard error")
    r.set_defaults(func=replay)


def _read(f):
    return iter_events(f)


def _counted(items, update):
    """``items``, reporting progress every ``_CHUNK`` of them."""
    for n, item in enumerate(items, start=1):
        yield item
        if not n % _CHUNK:
            update(n)


def _golden(trace, variant, scorer, update):
    return run_events(EDC(variant=variant), _counted(trace.items(), update), scorer)


def _rtl(trace, scorer, update):
    """The RTL's decisions, scored against the events read a second time beside them."""
    from ahasd.cosim.edc import VerilatedEDC
    rtl = VerilatedEDC()
    decisions = rtl.iter_events(trace.items())     # one batch at a time: bounded memory
    try:
        for n, (op, value) in enumerate(trace.items(), start=1):
            if op == "draft":
                decision = next(decisions)
                scorer.draft(decision)
                yield decision
            else:
                scorer.verify(value)
            if not n % _CHUNK:
                update(n)
        if next(decisions, None) is not None:      # also runs the model's end-of-run checks
            raise RuntimeError("the EDC RTL gave more decisions than the trace has drafts")
    finally:
        decisions.close()
        rtl.close()


def replay(args):
    if args.rtl and args.variant != "committed":
        raise CliError("--rtl runs the RTL, which implements the committed variant only")
    with checked_trace(args.trace, _read) as trace:
        scorer = EDCScorer()
        out = sys.stdout
        with progress(f"replaying {trace.name}", trace.count) as update:
            decisions = _rtl(trace, scorer, update) if args.rtl else _golden(
                trace, args.variant, scorer, update)
            lines = []          # formatted by hand (as json.dumps would): the hot loop
            for d in decisions:
                lines.append('{"continue": %s, "index": %d}\n' % (
                    "true" if d.cont else "false", d.index))
                if len(lines) == _CHUNK:
                    out.write("".join(lines))
                    lines.clear()
            out.write("".join(lines))
    if args.stats:
        s = scorer.score.as_dict()
        print(f"drafts {s['drafts']}, verifies {s['verifies']}, continue rate "
              f"{s['continue_rate']:.3f}, suppression rate {s['suppression_rate']:.3f}, "
              f"accuracy {s['accuracy']:.3f} over {s['scored']} verified batches",
              file=sys.stderr)
