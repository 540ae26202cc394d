"""Area sweeps: synthesised area over block parameters, on the simulator's sweep framework.

``ahasd sweep area`` runs its points as cells of :func:`ahasd.sim.system.parallel.run_cells`
(this process, local processes or a dask scheduler) with :func:`evaluate_cell` as the named cell
evaluator, and writes them with :func:`ahasd.sim.system.sweep.write_rows` (``sweep.csv``,
``sweep.json``), as the simulator sweep does; plots come from :mod:`ahasd.bench.area_plots`.

A point is a flat dict such as ``{"block": "edc", "history_depth": 8, "bucket_bits": 3,
"llr_bits": 3}``; :func:`area_point` synthesises that block with those parameters
(:func:`ahasd.synth.area_report.area_report`, SRAM macros as in ``ahasd area``). The points,
their axes and :data:`DEFAULT_GRID` are :mod:`ahasd.bench.area_points` (re-exported here). An EDC point
also gets its prediction accuracy: the golden EDC (:class:`ahasd.sim.blocks.edc.EDC`, committed
variant) at the point's parameters replays the EDC events of recorded golden decoding traces
(:func:`record_traces`), and a decision is right when drafting continued and the batch was fully
accepted, or stopped and it was not (:func:`ahasd.sim.blocks.edc.score_events`).
"""

import hashlib
import json
import time
from pathlib import Path

from ahasd.bench.area_plots import plot_area, plot_edc_tradeoff
from ahasd.bench.area_points import DEFAULT_GRID, SWEPT, check_point, grid_of_axes, parse_axis
from ahasd.synth import area_report as area_flow

__all__ = ["SWEPT", "DEFAULT_GRID", "FIGURES", "TRACE_PAIRS", "parse_axis", "grid_of_axes",
           "check_point", "area_point", "evaluate_cell", "record_traces", "file_trace",
           "run_area_sweep", "EVALUATOR"]

#: The synthesis figures of a row (the deterministic ones; wall and CPU time go apart).
FIGURES = ("cells", "ff_bits", "memory_bits", "sram_bits", "area_ge", "ff_area_ge",
           "logic_depth", "logic_mm2", "sram_mm2", "total_mm2", "die_percent")

#: Golden pairs recorded for the EDC's accuracy by default (acceptance about 0.47 and 0.69).
TRACE_PAIRS = ("ngram3-5", "ngram4-5")

#: The cell evaluator's name for :func:`ahasd.sim.system.parallel.run_cells`.
EVALUATOR = "ahasd.bench.area_sweep:evaluate_cell"


def area_point(point, *, build_dir="build/sweep/area", timing=False):
    """Area figures of one design ``point`` (see the module docstring) as a flat dict: the
    point, the derived ``pht_entries`` for the EDC, and ``cells``, ``ff_bits``, ``memory_bits``,
    ``sram_bits``, ``area_ge``, ``logic_depth`` (``delay_depth`` with ``timing``),
    ``logic_mm2``, ``sram_mm2``, ``total_mm2``, ``die_percent``, ``seconds``, ``cpu_seconds``."""
    params = check_point(point)
    block = point["block"]
    key = hashlib.sha1(json.dumps(point, sort_keys=True).encode()).hexdigest()[:12]
    report = area_flow.area_report(block, Path(build_dir) / f"{block}-{key}", params=params,
                         timing=timing)
    row = dict(point)
    if block == "edc":
        from ahasd.sim.blocks.edc import EDCParams
        row["pht_entries"] = EDCParams(**params).pht_entries
    figures = report.as_dict()
    for name in ("cell_counts", "sram_macros", "shared_modules", "block"):
        figures.pop(name)
    row.update(figures)
    return row


def evaluate_cell(cell):
    """The sweep's cell evaluator: ``{"point", "build_dir", "traces"}`` -> the point's row
    (:func:`area_point`; for an EDC point also ``edc_accuracy`` and ``edc_continue_rate``
    pooled over ``traces``, a list of ``[name, events]``, and ``accuracy_<name>`` per trace),
    or the point with ``error`` when synthesis fails."""
    from ahasd.synth.yosys import YosysError
    point = cell["point"]
    try:
        row = area_point(point, build_dir=cell["build_dir"])
    except (YosysError, ValueError) as error:
        return {**point, "error": f"{point['block']} {_label(point)}: {error}"}
    if point["block"] == "edc" and cell.get("traces"):
        row.update(_accuracy({k: v for k, v in point.items() if k != "block"},
                             cell["traces"]))
    return row


def _accuracy(params, traces):
    from ahasd.sim.blocks.edc import EDC, score_events
    out, correct, scored, continues, drafts = {}, 0, 0, 0, 0
    for name, events in traces:
        _, score = score_events(EDC(variant="committed", **params), events)
        out[f"accuracy_{name}"] = round(score.accuracy, 6)
        correct, scored = correct + score.correct, scored + score.scored
        continues, drafts = continues + score.continues, drafts + score.drafts
    out["edc_accuracy"] = round(correct / scored, 6) if scored else None
    out["edc_continue_rate"] = round(continues / drafts, 6) if drafts else None
    return out


def _label(point):
    return ", ".join(f"{k}={v}" for k, v in point.items() if k != "block")


class _Always:
    """A constant predictor in the EDC's interface (for the floor of :func:`_trace_summary`)."""

    def __init__(self, cont):
        from ahasd.sim.blocks.edc import Decision
        self._decision = Decision(cont, 0)

    def draft(self, entropy_nats):
        return self._decision

    def verify(self, full):
        pass


def _trace_summary(name, events, source):
    """What a trace offers the EDC: scored decisions (verifies of a pending draft), the fraction
    fully accepted, and the accuracy of the best constant predictor (always continue or always
    stop), the floor an EDC must beat to have learnt anything."""
    from ahasd.sim.blocks.edc import score_events
    _, score = score_events(_Always(True), events)
    full = score.correct / score.scored if score.scored else 0.0
    return {"name": name, **source, "events": len(events), "drafts": score.drafts,
            "scored": score.scored, "fully_accepted": score.correct,
            "full_accept_rate": round(full, 6),
            "constant_accuracy": round(max(full, 1 - full), 6)}


def record_traces(folder, *, pairs=TRACE_PAIRS, tokens=4000, seed=0, progress=None):
    """Record one golden decoding trace per pair into ``folder/<pair>.jsonl`` (fixed draft
    length 4, up to 4 look-ahead batches, no EDC gating, so that every draft is a decision to
    score); return ``[(name, events, summary)]``. ``progress(tokens done)`` is called as the
    decoders commit tokens (all pairs counted together)."""
    import numpy as np

    from ahasd.sim.decoding import golden
    from ahasd.sim.decoding.lookahead import decode
    from ahasd.sim.decoding.pairs import load_named_pair
    from ahasd.sim.traces import decoding as trace
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for n, name in enumerate(pairs):
        pair = load_named_pair(name)
        done = (lambda k, base=n * tokens: progress(base + k)) if progress else None
        result = decode(pair.draft, pair.target, pair.tokenizer.encode(golden.PROMPTS[0]),
                        n_tokens=tokens, policy=golden.build_policy("fixed", pair, seed=seed),
                        rng=np.random.default_rng(seed), progress=done,
                        meta={"pair": name, "edc": "off", "seed": seed})
        path = folder / f"{name}.jsonl"
        trace.write(result.records, path)
        events = trace.edc_events(result.records)
        source = {"file": str(path), "pair": name, "tokens": tokens, "seed": seed,
                  "acceptance_rate": round(result.acceptance_rate, 6)}
        out.append((name, events, _trace_summary(name, events, source)))
    return out


def file_trace(path, name):
    """A recorded trace file (ahasd-trace format) -> ``(name, events, summary)``."""
    from ahasd.sim.traces.decoding import edc_events
    events = edc_events(path)
    return name, events, _trace_summary(name, events, {"file": str(path)})


def columns_of(points, trace_names):
    """The CSV columns: block, every swept parameter in use, the EDC's PHT entries, the figures,
    the accuracy columns (when there are EDC points and traces) and ``error``."""
    params = []
    for p in points:
        params += [k for k in p if k != "block" and k not in params]
    cols = ["block"] + params
    edc = any(p["block"] == "edc" for p in points)
    if edc:
        cols.append("pht_entries")
    cols += list(FIGURES)
    if edc and trace_names:
        cols += ["edc_accuracy", "edc_continue_rate"] + [f"accuracy_{n}" for n in trace_names]
    return cols + ["error"]


def run_area_sweep(points, out, *, traces=(), build_dir="build/sweep", jobs=1, scheduler=None,
                   progress=None, plots=True):
    """Synthesise ``points`` (validated first) as sweep cells and write ``out``: ``sweep.csv``,
    ``sweep.json`` (deterministic: identical whatever ran the cells), ``traces.json`` (the
    traces' summaries), ``timing.json`` (wall and CPU seconds per point and in all) and, with
    ``plots``, ``sweep.png`` and ``edc_area_accuracy.png``. ``traces`` is
    ``[(name, events, summary)]``. Returns the rows."""
    from ahasd.sim.system.parallel import run_cells
    from ahasd.sim.system.sweep import write_rows
    points = [dict(p) for p in points]
    for p in points:
        check_point(p)
    names = [t[0] for t in traces]
    if len(set(names)) != len(names):
        raise ValueError(f"two traces share a name: {', '.join(names)}")
    build = Path(build_dir).resolve()       # workers may run elsewhere in this file system
    events = [[name, ev] for name, ev, _ in traces]
    cells = [{"point": p, "build_dir": str(build),
              "traces": events if p["block"] == "edc" else []} for p in points]
    start = time.monotonic()
    rows = run_cells(cells, jobs=jobs, scheduler=scheduler, progress=progress,
                     evaluate=EVALUATOR)
    wall = time.monotonic() - start
    out = Path(out)
    write_rows(out, columns_of(points, names), rows)
    (out / "traces.json").write_text(json.dumps([t[2] for t in traces], indent=1) + "\n")
    (out / "timing.json").write_text(json.dumps({
        "wall_s": round(wall, 1), "jobs": jobs, "scheduler": scheduler is not None,
        "cpu_s": round(sum(r.get("cpu_seconds", 0) for r in rows), 1),
        "points": [{"point": p, "seconds": r.get("seconds"), "cpu_seconds": r.get("cpu_seconds")}
                   for p, r in zip(points, rows)]}, indent=1) + "\n")
    if plots:
        plot_area(rows, out / "sweep.png")
        if any(r.get("edc_accuracy") is not None for r in rows):
            plot_edc_tradeoff(rows, [t[2] for t in traces], out / "edc_area_accuracy.png")
    return rows
