"""``ahasd specla verify CASE.json [--mode replay|factor|deferred]`` and ``ahasd specla bench``.

``verify`` reads one GDN verification case (format: :mod:`ahasd.sim.specla.case`) and prints the
node outputs and the committed state as one JSON object. ``bench`` prints the SpecLA cost model's
ratios beside the paper's and the end-to-end speedup over autoregressive decoding (with a plot).
"""

import json

from ahasd.errors import CliError
from ahasd.files import os_reason, output_dir

__all__ = ["register"]


def register(sub):
    p = sub.add_parser("specla", help="SpecLA: speculative decoding for Gated DeltaNet targets",
                       description="Verify GDN token trees and commit accepted paths "
                                   "(replay, rank-A factor commit, deferred commit).")
    verbs = p.add_subparsers(dest="specla_command", required=True, metavar="SUBCOMMAND")
    v = verbs.add_parser("verify", help="outputs and committed state of a JSON case")
    v.add_argument("case", help="case file (JSON; see ahasd.sim.specla.case)")
    v.add_argument("--mode", choices=("replay", "factor", "deferred"), default="factor")
    v.set_defaults(func=run_verify)
    b = verbs.add_parser("bench", help="cost-model ratios vs the paper, end-to-end speedup")
    b.add_argument("--json", action="store_true", help="print the figures as JSON")
    b.add_argument("--out", default="build/specla",
                   help="folder for the speedup plot (default build/specla)")
    b.add_argument("--rtl", action="store_true",
                   help="also run the state-commit RTL (Verilated) against the DRAM bound")
    b.add_argument("--quick", action="store_true", help="with --rtl: one small case")
    b.set_defaults(func=run_bench)


def run_verify(args):
    from ahasd.sim.specla.case import format_result, read_case, run_case

    try:
        case = read_case(args.case)
    except FileNotFoundError:
        raise CliError(f"no such case file: {args.case}") from None
    except OSError as e:
        raise CliError(f"cannot read {args.case}: {os_reason(e)}") from None
    except UnicodeDecodeError as e:
        raise CliError(f"{args.case}: not UTF-8 text ({e})") from None
    except ValueError as e:
        raise CliError(f"{args.case}: {e}") from None
    print(format_result(*run_case(case, args.mode)))
    return 0


def run_bench(args):
    from ahasd.bench.specla import bench  # the SpecLA models: slow to import, this verb only
    output_dir(args.out, "--out")                     # before any work
    figures = bench(json_output=args.json, out=args.out, echo=False)
    if args.rtl:
        from ahasd.bench.state_commit import bench as rtl_bench  # likewise
        figures["rtl"] = rtl_bench(json_output=args.json, quick=args.quick)
    else:
        figures["rtl"] = None           # one JSON shape with or without --rtl
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0
