"""``ahasd sweep``: sweep configuration figures, EDC parameters and the acceptance level."""

from pathlib import Path

__all__ = ["register", "run"]


def register(sub):
    from ahasd.args import TOKENS_MAX, integer
    p = sub.add_parser(
        "sweep", help="sweep parameters of the system simulator (local processes or dask)",
        description="Run the cartesian product of the --axis value lists and write sweep.csv, "
                    "sweep.json and sweep.png. Axes: any SECTION.KEY of the configuration (e.g. "
                    "pim.internal_bw_gbps, npu.int8_tops, controller.max_lookahead_batches), "
                    "edc.h_max_nats / edc.bucket_bits / edc.llr_bits (PHT size), acceptance_pair.")
    p.add_argument("--axis", action="append", required=True, metavar="KEY=V1,V2,...")
    p.add_argument("--system", default="ahasd")
    p.add_argument("--pair", default="opt")
    p.add_argument("--policy", default="adaedl")
    p.add_argument("--tokens", type=integer(1, TOKENS_MAX), default=256,
                   help=f"tokens per point, 1..{TOKENS_MAX:,} (default 256)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2, help="local worker processes (1: none)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="a dask.distributed scheduler address (tcp://host:port)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.set_defaults(func=run)


def run(args):
    from ahasd.cli import CliError
    from ahasd.commands.simulate import PAIRS, POLICIES, SYSTEMS, _choice
    from ahasd.sim.system.sweep import parse_axis, run_sweep

    _choice("system", args.system, SYSTEMS)
    _choice("pair", args.pair, PAIRS)
    _choice("policy", args.policy, POLICIES)
    if args.tokens < 1:
        raise CliError(f"--tokens must be a positive integer, not {args.tokens}")
    if args.jobs < 1:
        raise CliError(f"--jobs must be a positive integer, not {args.jobs}")
    try:
        axes = [parse_axis(a) for a in args.axis]
        rows = run_sweep(axes, args.out, jobs=args.jobs, scheduler=args.scheduler,
                         system=args.system, pair=args.pair, policy=args.policy,
                         tokens=args.tokens, seed=args.seed)
    except ValueError as e:
        raise CliError(str(e)) from None
    except OSError as e:  # e.g. an unreachable scheduler
        raise CliError(f"cannot reach scheduler {args.scheduler}: {e}") from None
    bad = [r["error"] for r in rows if "error" in r]
    print(f"{len(rows)} points written to {args.out}/sweep.csv"
          + (f"; {len(bad)} could not run: {bad[0]}" if bad else ""))
    return 0
