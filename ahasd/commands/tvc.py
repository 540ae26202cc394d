"""``ahasd tvc replay TRACE [--rtl]``: run TVC transactions through the golden model or the RTL.

Two streaming passes over the trace (check every line, then run and print), so a malformed trace
prints nothing on standard output and memory does not grow with the trace.
"""

import sys

from ahasd.args import integer
from ahasd.errors import CliError
from ahasd.files import checked_trace
from ahasd.progress import progress

__all__ = ["register", "replay"]

_CHUNK = 4096


def register(sub):
    p = sub.add_parser("tvc", help="TVC tools (replay a trace through the golden model or RTL)")
    verbs = p.add_subparsers(dest="tvc_command", required=True, metavar="VERB")
    r = verbs.add_parser(
        "replay", help="replay a TVC transaction trace and print one decision per decide",
        description="Read JSON lines {\"op\":\"config\",\"freq_ratio\":<UQ2.14>}, "
                    "{\"op\":\"preset\",\"table\":\"nvct|pdct|pvct\",\"ratio\":<UQ24.8>}, "
                    "{\"op\":\"record\",\"table\":...,\"cycles\":<int>,\"length\":<int>}, "
                    "{\"op\":\"decide\",\"kv_len\":<int>,\"now\":<int>,\"pending\":<int>} and "
                    "print {\"insert\": <bool>, \"length\": <int>} for each decide. The tables "
                    "start at 0 and freq_ratio at 0.8 (13107). A malformed line is reported "
                    "with its line number (exit status 2) and nothing is printed.")
    r.add_argument("trace", help="trace file (JSON lines), or - for standard input")
    r.add_argument("--rtl", action="store_true",
                   help="run the Verilated TVC RTL (on the batched harness) instead of the golden model")
    r.add_argument("--depth", type=integer(1, 64), default=4,
                   help="entries per table, a power of two in 1..64 (default 4)")
    r.add_argument("--ratio-bits", type=integer(9, 40), default=32,
                   help="bits of a table entry, UQ(n-8).8, 9..40 (default 32)")
    r.add_argument("--max-preverify-len", type=integer(1, 64), default=8,
                   help="longest pre-verification, 1..64 (default 8)")
    r.set_defaults(func=replay)


def _reader(params):
    """The checked transactions of a binary trace file, for :func:`ahasd.files.checked_trace`."""
    from ahasd.sim.traces.tvc import iter_trace
    return lambda f: iter_trace(f, params)


def _counted(items, update):
    """``items``, reporting progress every ``_CHUNK`` of them."""
    for n, item in enumerate(items, start=1):
        yield item
        if not n % _CHUNK:
            update(n)


def _golden(trace, params, update):
    from dataclasses import asdict

    from ahasd.sim.blocks.tvc import TVC
    from ahasd.sim.traces.tvc import apply
    model = TVC(**asdict(params))
    for item in _counted(trace.items(), update):
        decision = apply(model, item)
        if decision is not None:
            yield decision


def replay(args):
    from ahasd.sim.blocks.tvc import TVCParams
    try:
        params = TVCParams(depth=args.depth, ratio_bits=args.ratio_bits,
                           max_preverify_len=args.max_preverify_len)
    except ValueError as error:        # "depth must be ...": name the option
        option = str(error).split()[0].replace("_", "-")
        raise CliError(f"argument --{option}: {error}") from None
    with checked_trace(args.trace, _reader(params)) as trace:
        if args.rtl and trace.count == 0:
            return 0                            # nothing to run: no decisions to print
        out = sys.stdout
        rtl = " on the RTL" if args.rtl else ""
        with progress(f"replaying {trace.name}{rtl}", trace.count) as update:
            if args.rtl:
                from ahasd.cosim.tvc import iter_replay_rtl
                decisions = iter_replay_rtl(_counted(trace.items(), update), params)
            else:
                decisions = _golden(trace, params, update)
            lines = []
            for d in decisions:
                lines.append('{"insert": %s, "length": %d}\n' % (
                    "true" if d.insert else "false", d.length))
                if len(lines) == _CHUNK:
                    out.write("".join(lines))
                    lines.clear()
            out.write("".join(lines))
    return 0
