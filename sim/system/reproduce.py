"""The paper's grid run into a folder: ``grid.csv``, ``grid.json``, ``summary.json``,
``summary.md`` and the plots (what ``ahasd reproduce`` writes).

The cells are :func:`ahasd.sim.system.report.grid_cells` (with ``quick``: one pair, two policies,
128 tokens) plus, with the plots, one AHASD cell again with its activity timeline kept; they run
through :func:`ahasd.sim.system.parallel.run_cells` (this process, local processes or dask), and
:func:`ahasd.sim.system.report.headlines` sets the results beside the paper's.
"""

import csv
import json
import time

from ahasd.sim.system import report
from ahasd.sim.system.config import load_config
from ahasd.sim.system.parallel import run_cells

__all__ = ["reproduce", "CSV_FIELDS"]

CSV_FIELDS = ["acceptance_pair", "pair", "policy", "system", "ablation", "label", "tokens",
              "time_s", "throughput_tok_s", "energy_mj", "tokens_per_mj", "acceptance_rate",
              "mean_accepted_len", "mean_draft_len", "bound_tok_s", "preverifies", "squashed",
              "edc_suppressed", "tvc_saturated_records", "offloaded"]


def reproduce(out, *, tokens=1024, seed=0, jobs=2, scheduler=None, quick=False, overrides=(),
              plots=True, progress=None, max_files=None, window=None):
    """Run the grid into folder ``out``; return (headlines dict, wall seconds).

    ``window``: ``(start, end)`` seconds of the timeline run drawn in ``timeline.png`` (default
    the whole run).

    ``progress``: None, or ``progress(description, total)``, a context manager that yields a
    callable called once per finished cell (``ahasd reproduce`` passes a progress bar).
    """
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
    from ahasd.sim.system.plots import sensitivity_cells  # matplotlib only when drawing
    extra = ([timeline_cell] + sensitivity_cells(pairs[0], tokens=tokens, seed=seed,
                                                 overrides=overrides, max_files=max_files)
             if plots else [])
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    if progress is not None:
        with progress(f"{len(cells)} cells", len(cells) + len(extra)) as step:
            rows = run_cells(cells + extra, jobs=jobs, scheduler=scheduler, progress=step)
    else:
        rows = run_cells(cells + extra, jobs=jobs, scheduler=scheduler)
    rows, tl, sens = (rows[:len(cells)], rows[len(cells)] if extra else None,
                      rows[len(cells) + 1:])
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
        from ahasd.sim.system.plots import write_plots  # matplotlib
        write_plots(rows, out, pairs=pairs, policies=policies,
                    acceptance_pair=report.ACCEPTANCE_PAIRS[0], timeline_run=tl,
                    window=window, sensitivity_rows=sens)
    return h, wall
