"""``ahasd tvc replay TRACE [--rtl]``: run TVC transactions through the golden model or the RTL."""

import json
import sys

__all__ = ["register"]


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
                   help="run the Verilated TVC RTL (closed loop, each transaction held until "
                        "ready) instead of the golden model")
    r.add_argument("--depth", type=int, default=4, help="entries per table (default 4)")
    r.add_argument("--ratio-bits", type=int, default=32,
                   help="bits of a table entry, UQ(n-8).8 (default 32)")
    r.add_argument("--max-preverify-len", type=int, default=8,
                   help="longest pre-verification (default 8)")
    r.set_defaults(func=replay)


def replay(args):
    from dataclasses import asdict

    from ahasd.cli import CliError
    from ahasd.sim.blocks.tvc import TVC, TVCParams
    from ahasd.sim.traces.tvc import TraceError, apply, parse_trace
    try:
        params = TVCParams(depth=args.depth, ratio_bits=args.ratio_bits,
                           max_preverify_len=args.max_preverify_len)
    except ValueError as error:
        raise CliError(str(error)) from None
    try:
        if args.trace == "-":
            ops = parse_trace(sys.stdin, params)
        else:
            with open(args.trace) as lines:
                ops = parse_trace(lines, params)
    except OSError as error:
        raise CliError(f"cannot read {args.trace}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CliError(f"{args.trace}: not a UTF-8 text file") from None
    except TraceError as error:
        raise CliError(f"{args.trace}: {error}") from None
    if args.rtl:
        from ahasd.cosim.tvc import replay_rtl
        decisions = replay_rtl(ops, params).decisions
    else:
        model = TVC(**asdict(params))
        decisions = [d for d in (apply(model, item) for item in ops) if d is not None]
    out = sys.stdout
    for d in decisions:
        out.write(json.dumps({"insert": d.insert, "length": d.length}) + "\n")
