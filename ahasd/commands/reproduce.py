"""``ahasd reproduce --out DIR``: the whole paper grid, tables, plots and the headline summary.

The run is :func:`ahasd.sim.system.reproduce.reproduce`; this module parses, calls and prints.
"""

import contextlib
import os
import time
from pathlib import Path

from ahasd.args import TOKENS_MAX, integer
from ahasd.errors import CliError
from ahasd.files import fresh_output_dir

__all__ = ["register", "run"]


def register(sub):
    p = sub.add_parser(
        "reproduce", help="run the paper's grid and write tables, plots and the summary",
        description="Every pair x policy x system and AHASD ablation step (plus an acceptance "
                    "sweep), written as CSV/JSON, PNG plots, summary.json and summary.md beside "
                    "the paper's headlines, each the mean over decoding seeds with its 95 % "
                    "confidence interval.")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.add_argument("--force", action="store_true",
                   help="write into --out even if it already holds files (make reproduce passes it)")
    p.add_argument("--tokens", type=integer(1, TOKENS_MAX), default=1024,
                   help=f"tokens per cell, 1..{TOKENS_MAX:,} (default 1024)")
    p.add_argument("--seed", type=int, default=0, help="the first decoding seed (default 0)")
    p.add_argument("--seeds", type=integer(1, 100), default=None, metavar="N",
                   help="decoding seeds per cell, --seed on (default 5; 3 with --quick); "
                        "each headline is their mean with a 95 %% t-interval")
    p.add_argument("--jobs", type=int, default=2, help="local worker processes (1: none)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the cells on a dask.distributed scheduler")
    p.add_argument("--quick", action="store_true",
                   help="a reduced grid (one pair, two policies, 128 tokens, 3 seeds) for "
                        "smoke tests")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--claims", type=Path, default=None, metavar="FILE",
                   help="end summary.md with the sentence per claim of this saved claims.json "
                        "(`ahasd claims`)")
    p.add_argument("--window", default=None, metavar="START:END",
                   help="timeline.png shows these seconds of its run (default the whole run)")
    p.set_defaults(func=run)


@contextlib.contextmanager
def _bar(description, total):
    """A rich progress bar of ``total`` cells; yields the per-cell step."""
    from rich.progress import Progress
    with Progress(transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda: bar.advance(task)


def run(args):
    from ahasd.sim.system.reproduce import reproduce  # the grid machinery: this verb only
    if args.tokens < 1:
        raise CliError(f"--tokens must be a positive integer, not {args.tokens}")
    if args.jobs < 1:
        raise CliError(f"--jobs must be a positive integer, not {args.jobs}")
    window = None
    if args.window is not None:
        from ahasd.sim.system.plots import parse_window
        try:
            window = parse_window(args.window)
        except ValueError as e:
            raise CliError(str(e)) from None
    claims = _claims(args.claims) if args.claims is not None else None
    fresh_output_dir(args.out, "--out", force=args.force)    # before any work
    t0, cpu0 = time.perf_counter(), _cpu_s()
    try:
        h, wall = reproduce(args.out, tokens=args.tokens, seed=args.seed, seeds=args.seeds,
                            jobs=args.jobs,
                            scheduler=args.scheduler, quick=args.quick, overrides=args.overrides,
                            plots=not args.no_plots, progress=_bar, window=window,
                            claims=claims)
    except ValueError as e:
        raise CliError(str(e)) from None
    total, cpu = time.perf_counter() - t0, _cpu_s() - cpu0
    print((args.out / "summary.md").read_text())
    print(f"grid: {wall:.1f} s of simulation, {total:.1f} s in all (wall time; a first run "
          f"includes training the language models), {cpu:.1f} s of CPU in this process and its "
          f"workers; written to {args.out}")
    return 0


def _claims(path):
    """A saved claims.json, checked (one-line errors naming the file)."""
    import json

    from ahasd.files import os_reason
    from ahasd.sim.system.claims import check_document
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise CliError(f"--claims: cannot read {path}: {os_reason(e)}") from None
    except ValueError:
        raise CliError(f"--claims: {path} is not JSON") from None
    try:
        return check_document(doc, f"--claims: {path}")
    except ValueError as e:
        raise CliError(str(e)) from None


def _cpu_s():
    """User + system CPU seconds of this process and its finished child processes."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
