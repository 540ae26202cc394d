"""``ahasd claims --out DIR``: where each of the paper's claims can hold.

The run is :func:`ahasd.sim.system.claims.run_claims`; this module parses, calls and prints.
"""

import os
import time
from pathlib import Path

from ahasd.args import TOKENS_MAX, integer
from ahasd.errors import CliError, grid_errors
from ahasd.files import fresh_output_dir
from ahasd.readme import check_readme, update_section

__all__ = ["register", "run"]


def register(sub):
    p = sub.add_parser(
        "claims", help="where each of the paper's headline claims can hold (a grid of the "
                       "parameters that decide them)",
        description="Evaluate each paper headline over a grid of per-token acceptance, PIM "
                    "units, off-chip bandwidth, GPU bandwidth and GPU memory; write "
                    "claims.json (ours at the shipped configuration with its 95 % interval, "
                    "holds_at_shipped, the least change of each parameter at which the claim "
                    "holds), summary.md and one heatmap per claim.")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.add_argument("--force", action="store_true",
                   help="write into --out even if it already holds files")
    p.add_argument("--quick", action="store_true",
                   help="a small grid (OPT, 64 tokens, 2 seeds, two values per axis) for tests")
    p.add_argument("--claim", action="append", default=None, metavar="NAME",
                   help="evaluate this claim only (repeatable; default all)")
    p.add_argument("--axis", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="replace an axis's grid values (acceptance, pim.units, "
                        "pim.offchip_bw_gbps, gpu.mem_bw_gbps, gpu.mem_gb)")
    p.add_argument("--heatmap", default="acceptance,pim.units", metavar="X,Y",
                   help="the two axes of the 2-D grid and the heatmaps "
                        "(default acceptance,pim.units)")
    p.add_argument("--tokens", type=integer(1, TOKENS_MAX), default=None,
                   help=f"tokens per run, 1..{TOKENS_MAX:,} (default 512; 64 with --quick)")
    p.add_argument("--seed", type=int, default=0, help="the first decoding seed (default 0)")
    p.add_argument("--seeds", type=integer(1, 100), default=None, metavar="N",
                   help="decoding seeds per cell (default 3; 2 with --quick)")
    p.add_argument("--jobs", type=int, default=2, help="local worker processes (1: none)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the cells on a dask.distributed scheduler")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE", help="change the shipped configuration")
    p.add_argument("--no-plots", action="store_true", help="skip the heatmaps")
    p.add_argument("--readme", type=Path, default=None, metavar="FILE",
                   help="also rewrite the generated section 'claims' of FILE (the README) with "
                        "one sentence per claim")
    p.set_defaults(func=run)


def _parse(args):
    from ahasd.sim.system import claims
    names = args.claim or list(claims.CLAIMS)
    for n in names:
        if n not in claims.CLAIMS:
            raise CliError(f"--claim: unknown claim {n!r} (claims: {', '.join(claims.CLAIMS)})")
    try:
        axes = dict(claims.parse_axis(a) for a in args.axis)
    except ValueError as e:
        raise CliError(str(e)) from None
    heat = tuple(s.strip() for s in args.heatmap.split(","))
    if len(heat) != 2 or heat[0] == heat[1] or any(h not in claims.AXES for h in heat):
        raise CliError(f"--heatmap needs two different axes X,Y of {', '.join(claims.AXES)}, "
                       f"not {args.heatmap!r}")
    if args.jobs < 1:
        raise CliError(f"--jobs must be a positive integer, not {args.jobs}")
    return names, axes, heat


def run(args):
    from ahasd.progress import progress
    from ahasd.sim.system.claims import run_claims
    names, axes, heat = _parse(args)
    if args.readme is not None:
        check_readme(args.readme, ["claims"])
    fresh_output_dir(args.out, "--out", force=args.force)    # before any work
    t0, cpu0 = time.perf_counter(), _cpu_s()

    def bar(description, total):
        return _steps(progress(description, total))
    with grid_errors(args.scheduler):
        doc = run_claims(args.out, claims=names, axes=axes, heatmap=heat, quick=args.quick,
                         tokens=args.tokens, seeds=args.seeds, seed=args.seed, jobs=args.jobs,
                         scheduler=args.scheduler, overrides=args.overrides, progress=bar,
                         plots=not args.no_plots)
    print((args.out / "summary.md").read_text())
    if args.readme is not None:
        from ahasd.sim.system.claims import sentence_lines
        update_section(args.readme, "claims", "\n".join(sentence_lines(doc)[3:]))
    print(f"claims: {time.perf_counter() - t0:.1f} s of wall time, {_cpu_s() - cpu0:.1f} s of "
          f"CPU in this process and its workers; written to {args.out}")
    return 0


class _steps:
    """:func:`ahasd.progress.progress` (``update(completed)``) as the per-run callback
    ``run_cells`` calls."""

    def __init__(self, ctx):
        self.ctx, self.done = ctx, 0

    def __enter__(self):
        update = self.ctx.__enter__()

        def step():
            self.done += 1
            update(self.done)
        return step

    def __exit__(self, *exc):
        return self.ctx.__exit__(*exc)


def _cpu_s():
    """User + system CPU seconds of this process and its finished child processes."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
