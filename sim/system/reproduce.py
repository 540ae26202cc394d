"""The paper's grid run into a folder: ``grid.csv``, ``grid.json``, ``summary.json``,
``summary.md`` and the plots (what ``ahasd reproduce`` writes).

The cells are :func:`ahasd.sim.system.report.grid_cells` (with ``quick``: one pair, two policies,
128 tokens), each run once per decoding seed (``seeds`` of them from ``seed`` on: 5 by default,
3 with ``quick``), plus, with the plots, one AHASD cell again (the first seed) with its activity
timeline kept; they run through :func:`ahasd.sim.system.parallel.run_cells` (this process, local
processes or dask), and :func:`ahasd.sim.system.report.headlines` sets the results beside the
paper's, each headline the mean over the seeds with its 95 % t-interval
(:mod:`ahasd.sim.system.seeds`).

``grid.csv`` has one line per run (cell and seed); ``grid.json``'s ``rows`` one per cell, every
figure the mean over the seeds (:func:`ahasd.sim.system.seeds.aggregate_runs`: ``n_seeds``,
``seeds``, ``intervals`` beside, and ``per_seed`` values of the figures the plots and ratios
use); the plots are drawn from those rows.
"""

import csv
import json
import time

from ahasd.sim.system import report
from ahasd.sim.system.config import load_config
from ahasd.sim.system.parallel import run_cells
from ahasd.sim.system.seeds import aggregate_runs, seed_list

__all__ = ["reproduce", "CSV_FIELDS", "SEEDS", "QUICK_SEEDS", "PER_SEED_KEYS"]

#: decoding seeds per cell: the full grid, the quick grid
SEEDS, QUICK_SEEDS = 5, 3
#: figures whose per-seed values a grid row keeps (``per_seed``), for ratios paired by seed
PER_SEED_KEYS = ("time_s", "throughput_tok_s", "energy_mj", "tokens_per_mj", "acceptance_rate",
                 "bound_tok_s")

CSV_FIELDS = ["acceptance_pair", "pair", "policy", "system", "ablation", "seed", "label",
              "tokens", "time_s", "throughput_tok_s", "energy_mj", "tokens_per_mj",
              "acceptance_rate", "mean_accepted_len", "mean_draft_len", "bound_tok_s",
              "preverifies", "squashed", "edc_suppressed", "tvc_saturated_records", "offloaded"]


def reproduce(out, *, tokens=1024, seed=0, seeds=None, jobs=2, scheduler=None, quick=False,
              overrides=(), plots=True, progress=None, max_files=None, window=None,
              claims=None):
    """Run the grid into folder ``out``; return (headlines dict, wall seconds).

    ``seeds``: decoding seeds per cell, ``seed``, ``seed + 1``, ... (default :data:`SEEDS`,
    :data:`QUICK_SEEDS` with ``quick``). ``window``: ``(start, end)`` seconds of the timeline
    run drawn in ``timeline.png`` (default the whole run). ``progress``: None, or
    ``progress(description, total)``, a context manager that yields a callable called once per
    finished run (``ahasd reproduce`` passes a progress bar). ``claims``: a saved claims.json
    (dict): summary.md ends with its sentences (:func:`.claims.sentence_lines`).
    """
    cfg = load_config(overrides)  # validates --set before any work
    seed_values = seed_list(seed, (QUICK_SEEDS if quick else SEEDS) if seeds is None else seeds)
    pairs = ("opt",) if quick else report.PAPER_PAIRS
    policies = ("adaedl", "banditspec") if quick else report.GRID_POLICIES
    tokens = 128 if quick else tokens
    base = report.grid_cells(pairs=pairs, policies=policies, tokens=tokens, seed=seed,
                             overrides=overrides, max_files=max_files)
    cells = [{**c, "seed": s} for s in seed_values for c in base]
    # The activity-timeline run (one AHASD cell again, with its timeline kept) runs among the
    # grid's cells rather than after them.
    timeline_cell = {"system": "ahasd", "pair": pairs[0], "policy": "adaedl", "tokens": tokens,
                     "seed": seed, "offload": True, "overrides": tuple(overrides),
                     "keep_timeline": True, **({"max_files": max_files} if max_files else {})}
    from ahasd.sim.system.plots import sensitivity_cells  # matplotlib only when drawing
    extra = ([timeline_cell] + sensitivity_cells(pairs[0], tokens=tokens, seed=seed,
                                                 overrides=overrides, max_files=max_files)
             if plots else [])
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    if progress is not None:
        with progress(f"{len(base)} cells x {len(seed_values)} seeds",
                      len(cells) + len(extra)) as step:
            runs = run_cells(cells + extra, jobs=jobs, scheduler=scheduler, progress=step)
    else:
        runs = run_cells(cells + extra, jobs=jobs, scheduler=scheduler)
    runs, tl, sens = (runs[:len(cells)], runs[len(cells)] if extra else None,
                      runs[len(cells) + 1:])
    wall = time.perf_counter() - t0
    _write_csv(out / "grid.csv", runs)
    rows = [_cell_row(c, [runs[j * len(base) + i] for j in range(len(seed_values))], seed_values)
            for i, c in enumerate(base)]
    (out / "grid.json").write_text(json.dumps({"config": cfg.as_dict(), "seeds": seed_values,
                                               "rows": rows}, indent=1, sort_keys=True) + "\n")
    h = report.headlines(runs, pairs=pairs, policies=policies)
    summary = {"grid": {"pairs": list(pairs), "policies": list(policies), "tokens": tokens,
                        "seed": seed, "seeds": seed_values, "cells": len(base),
                        "overrides": list(overrides)},
               "headlines": h, "paper": report.PAPER}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    (out / "summary.md").write_text(report.summary_markdown(h, policies=policies)
                                    + _claims_section(claims))
    if plots:
        from ahasd.sim.system.plots import write_plots  # matplotlib
        write_plots(rows, out, pairs=pairs, policies=policies,
                    acceptance_pair=report.ACCEPTANCE_PAIRS[0], timeline_run=tl,
                    window=window, sensitivity_rows=sens)
    return h, wall


def _claims_section(claims):
    """The sentences of a saved claims.json for summary.md (none without one)."""
    if claims is None:
        return ""
    from ahasd.sim.system.claims import sentence_lines
    return "\n".join(sentence_lines(claims)) + "\n"


def _write_csv(path, runs):
    """One line per run (cell and seed)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for r in runs:
            c = r["cell"]
            head = [c["acceptance_pair"], c["pair"], c["policy"], c["system"], c["ablation"],
                    c["seed"]]
            if "error" in r:
                w.writerow(head + ["error: " + r["error"]] + [""] * (len(CSV_FIELDS) - 7))
                continue
            w.writerow(head + [r[k] if k != "offloaded" else "; ".join(r[k])
                               for k in CSV_FIELDS[6:]])


def _cell_row(cell, runs, seeds):
    """One cell's runs over ``seeds`` as one row: every figure the mean over the seeds
    (:func:`~ahasd.sim.system.seeds.aggregate_runs`), ``per_seed`` values of
    :data:`PER_SEED_KEYS`; the first error if a seed failed."""
    c = {k: v for k, v in cell.items() if k != "seed"}
    c["seeds"] = list(seeds)
    failed = [r for r in runs if "error" in r]
    if failed:
        return {"cell": c, "error": failed[0]["error"], "n_seeds": len(seeds),
                "seeds": list(seeds)}
    row = aggregate_runs(runs, seeds)
    row["per_seed"] = {k: [r[k] for r in runs] for k in PER_SEED_KEYS}
    row["cell"] = c
    return row
