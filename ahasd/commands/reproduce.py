"""``ahasd reproduce --out DIR``: the whole paper grid, tables, plots and the headline summary."""

from pathlib import Path

__all__ = ["register", "run", "CSV_FIELDS"]

CSV_FIELDS = ["acceptance_pair", "pair", "policy", "system", "ablation", "label", "tokens",
              "time_s", "throughput_tok_s", "energy_mj", "tokens_per_mj", "acceptance_rate",
              "mean_accepted_len", "mean_draft_len", "bound_tok_s", "preverifies", "squashed",
              "edc_suppressed", "tvc_saturated_records", "offloaded"]


def register(sub):
    from ahasd.args import TOKENS_MAX, integer
    p = sub.add_parser(
        "reproduce", help="run the paper's grid and write tables, plots and the summary",
        description="Every pair x policy x system and AHASD ablation step (plus an acceptance "
                    "sweep), written as CSV/JSON, PNG plots, summary.json and summary.md beside "
                    "the paper's headlines.")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.add_argument("--tokens", type=integer(1, TOKENS_MAX), default=1024,
                   help=f"tokens per cell, 1..{TOKENS_MAX:,} (default 1024)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2, help="local worker processes (1: none)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the cells on a dask.distributed scheduler")
    p.add_argument("--quick", action="store_true",
                   help="a reduced grid (one pair, two policies, 128 tokens) for smoke tests")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.set_defaults(func=run)


def reproduce(out, *, tokens=1024, seed=0, jobs=2, scheduler=None, quick=False, overrides=(),
              plots=True, show_progress=True, max_files=None):
    """Run the grid into folder ``out``; return (headlines dict, wall seconds)."""
    import csv
    import json
    import time

    from ahasd.sim.system import report
    from ahasd.sim.system.config import load_config
    from ahasd.sim.system.parallel import run_cells

    cfg = load_config(overrides)  # validates --set before any work
    pairs = ("opt",) if quick else report.PAPER_PAIRS
    policies = ("adaedl", "banditspec") if quick else report.GRID_POLICIES
    tokens = 128 if quick else tokens
    cells = report.grid_cells(pairs=pairs, policies=policies, tokens=tokens, seed=seed,
                              overrides=overrides, max_files=max_files)
    # The activity-timeline run (one AHASD cell again, with its timeline kept) runs among the
    # grid's cells rather than after them.
    timeline_cell = {"system": "ahasd", "pair": pairs[0], "policy": "adaedl", "tokens": tokens,
                     "seed": seed, "offload": True, "overrides": tuple(overrides),
                     "keep_timeline": True, **({"max_files": max_files} if max_files else {})}
    extra = [timeline_cell] if plots else []
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    if show_progress:
        from rich.progress import Progress
        with Progress(transient=True) as bar:
            task = bar.add_task(f"{len(cells)} cells", total=len(cells) + len(extra))
            rows = run_cells(cells + extra, jobs=jobs, scheduler=scheduler,
                             progress=lambda: bar.advance(task))
    else:
        rows = run_cells(cells + extra, jobs=jobs, scheduler=scheduler)
    rows, tl = rows[:len(cells)], (rows[len(cells)] if extra else None)
    wall = time.perf_counter() - t0
    with open(out / "grid.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for r in rows:
            c = r["cell"]
            if "error" in r:
                w.writerow([c["acceptance_pair"], c["pair"], c["policy"], c["system"],
                            c["ablation"], "error: " + r["error"]] + [""] * 14)
                continue
            w.writerow([c["acceptance_pair"]] + [r[k] if k != "offloaded" else
                                                 "; ".join(r[k]) for k in CSV_FIELDS[1:]])
    (out / "grid.json").write_text(json.dumps({"config": cfg.as_dict(), "rows": rows},
                                              indent=1, sort_keys=True) + "\n")
    h = report.headlines(rows, pairs=pairs, policies=policies)
    summary = {"grid": {"pairs": list(pairs), "policies": list(policies), "tokens": tokens,
                        "seed": seed, "cells": len(cells), "overrides": list(overrides)},
               "headlines": h, "paper": report.PAPER}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    (out / "summary.md").write_text(report.summary_markdown(h))
    if plots:
        from ahasd.sim.system.plots import write_plots
        write_plots(rows, out, pairs=pairs, policies=policies,
                    acceptance_pair=report.ACCEPTANCE_PAIRS[0], timeline_run=tl)
    return h, wall


def run(args):
    import time

    from ahasd.cli import CliError
    if args.tokens < 1:
        raise CliError(f"--tokens must be a positive integer, not {args.tokens}")
    if args.jobs < 1:
        raise CliError(f"--jobs must be a positive integer, not {args.jobs}")
    t0, cpu0 = time.perf_counter(), _cpu_s()
    try:
        h, wall = reproduce(args.out, tokens=args.tokens, seed=args.seed, jobs=args.jobs,
                            scheduler=args.scheduler, quick=args.quick, overrides=args.overrides,
                            plots=not args.no_plots)
    except ValueError as e:
        raise CliError(str(e)) from None
    total, cpu = time.perf_counter() - t0, _cpu_s() - cpu0
    print((args.out / "summary.md").read_text())
    print(f"grid: {wall:.1f} s of simulation, {total:.1f} s in all (wall time; a first run "
          f"includes training the language models), {cpu:.1f} s of CPU in this process and its "
          f"workers; written to {args.out}")
    return 0


def _cpu_s():
    """User + system CPU seconds of this process and its finished child processes."""
    import os
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
