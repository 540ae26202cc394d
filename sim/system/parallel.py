"""Run many independent simulator cells: in this process, on local processes, or on dask.

Every cell is a dict of :func:`ahasd.sim.system.runner.simulate` keyword arguments; the result of
a cell is its :meth:`SimResult.as_dict` without the ``config`` (the same for every cell, stored
once by the callers). Results come back in the cells' order whatever ran them, and a cell's result
depends only on its arguments, so local processes, dask and a single process give identical output.
Synchronous systems, whose decoding provably does not depend on timing (no look-ahead, EDC or
TVC; a policy other than BanditSpec, whose costs are the system's), share one decoding per golden
pair, policy, token count and seed (:func:`decoding_key`): such cells run as one task, so the
worker records the decoding once and replays it (``ahasd.sim.system.runner``). Locally, cells of
one golden pair and policy also run in a row on one process (:func:`_affinity`), so its cache of
n-gram distributions (:class:`ahasd.sim.system.sources.DistCache`) serves the contexts they
share; the golden pairs are loaded before the workers fork, so they are loaded once.

Other kinds of cell (the application layer's area sweep, for one) name their own evaluator:
``run_cells(cells, evaluate="package.module:function")``. The evaluator is named, not passed, so
that this package imports nothing of the layer that defines it and every worker (a forked process
or a dask worker) imports it by name; it takes one cell and returns its result dict, the same for
the same cell wherever it runs.
"""

import importlib

__all__ = ["run_cell", "run_cells", "decoding_key", "resolve_evaluator", "DEFAULT_EVALUATOR"]

#: The simulator's cell evaluator (:func:`run_cell`).
DEFAULT_EVALUATOR = "ahasd.sim.system.parallel:run_cell"

_SYNC = ("gpu", "phone-gpu", "npu-lpddr5", "specpim")


def decoding_key(cell):
    """Cells with equal keys share one decoding (the runner replays it); None: not shareable."""
    system, policy = cell.get("system", "ahasd"), cell.get("policy", "adaedl")
    if system not in _SYNC or (system != "specpim" and policy == "banditspec") \
            or cell.get("trace") is not None:
        return None
    return (_golden(cell), "fixed8" if system == "specpim" else policy,
            cell.get("tokens"), cell.get("seed"), cell.get("max_files"), cell.get("greedy"),
            cell.get("acceptance"))


def _golden(cell):
    """The golden pair a cell decodes with (its model pair's default unless it names one); a bad
    name is kept as given (the cell itself reports it when it runs)."""
    from ahasd.sim.system.runner import acceptance_pair_of
    try:
        return acceptance_pair_of(cell)
    except ValueError:
        return cell.get("acceptance_pair")


def resolve_evaluator(name):
    """``"package.module:function"`` -> the function (imported here, or in a worker)."""
    module, sep, attr = name.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"a cell evaluator is named 'package.module:function', not {name!r}")
    fn = getattr(importlib.import_module(module), attr, None)
    if not callable(fn):
        raise ValueError(f"cell evaluator {name} is not a function of {module}")
    return fn


def _affinity(cell):
    """Cells that decode with the same golden pair, policy, length and seed: they revisit many of
    the same contexts, so one worker running them in a row reuses its cached distributions."""
    policy = "fixed8" if cell.get("system") == "specpim" else cell.get("policy", "adaedl")
    return (_golden(cell), policy, cell.get("tokens"),
            cell.get("seed"), cell.get("max_files"), cell.get("greedy"))


def _groups(cells, jobs=None, evaluate=DEFAULT_EVALUATOR):
    """Index groups: cells sharing a decoding together (so one worker records and replays),
    largest first. With ``jobs`` local processes, groups of one affinity (:func:`_affinity`) are
    also chained, up to ``len(cells) // (3 * jobs)`` cells a task (so every process still gets
    several tasks to balance). Any other evaluator: one cell per group, in the cells' order."""
    if evaluate != DEFAULT_EVALUATOR:
        return [[i] for i in range(len(cells))]
    by_key: dict[tuple, list[int]] = {}
    singles = []
    for i, c in enumerate(cells):
        k = decoding_key(c)
        if k is None:
            singles.append([i])
        else:
            by_key.setdefault(k, []).append(i)
    groups = sorted(by_key.values(), key=len, reverse=True) + singles
    if not jobs:
        return groups
    cap = max(1, len(cells) // (3 * jobs))
    by_affinity: dict[tuple, list[list[int]]] = {}
    for g in groups:
        by_affinity.setdefault(_affinity(cells[g[0]]), []).append(g)
    chained = []
    for members in by_affinity.values():
        task: list[int] = []
        for g in members:
            if task and len(task) + len(g) > cap:
                chained.append(task)
                task = []
            task = task + g
        chained.append(task)
    return sorted(chained, key=len, reverse=True)


def _warm(cells):
    """Load every golden pair the cells decode with (and SpecDec++'s predictor where a cell
    uses it) once, here, before the workers fork."""
    from ahasd.sim.system.runner import prepare
    need: dict[tuple, bool] = {}
    for c in cells:
        if c.get("trace") is not None:
            continue
        k = (_golden(c), c.get("seed"), c.get("max_files"))
        need[k] = need.get(k, False) or (c.get("policy", "adaedl") == "specdecpp"
                                         and c.get("seed") is not None)
    for (acc, seed, max_files), specdecpp in need.items():
        try:
            prepare(acc, seed=seed or 0, max_files=max_files, specdecpp=specdecpp)
        except ValueError:
            pass        # a bad name: the cell itself reports it


def _run_group(cells, evaluate=DEFAULT_EVALUATOR):
    fn = resolve_evaluator(evaluate)
    return [fn(c) for c in cells]


def run_cell(cell):
    """One cell -> its result dict (``config`` removed; ``error`` set if it could not run)."""
    from ahasd.sim.system.runner import simulate
    try:
        r = simulate(**cell).as_dict(timeline=cell.get("keep_timeline", False))
    except ValueError as e:
        return {"cell": cell, "error": str(e)}
    r.pop("config")
    r["cell"] = cell
    return r


def run_cells(cells, *, jobs=1, scheduler=None, progress=None, evaluate=DEFAULT_EVALUATOR):
    """Results of ``cells`` in order. ``jobs`` local processes (1: this process), or a dask
    scheduler address (``scheduler``; ``"inproc"`` objects: a ``distributed.Client``).
    ``evaluate`` names the cell evaluator (see the module docstring); ``progress()`` is called
    once per finished cell."""
    cells = list(cells)
    out = [None] * len(cells)
    fn = resolve_evaluator(evaluate)          # a bad name fails here, before any work
    if scheduler is not None:
        from distributed import Client, as_completed
        client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
        try:
            groups = _groups(cells, evaluate=evaluate)
            futures = {client.submit(_run_group, [cells[i] for i in g], evaluate, pure=False): g
                       for g in groups}
            for fut in as_completed(futures):
                for i, r in zip(futures[fut], fut.result()):
                    out[i] = r
                    if progress:
                        progress()
        finally:
            if client is not scheduler:
                client.close()
        return out
    if jobs <= 1:
        for g in _groups(cells, 1, evaluate):     # one golden pair and policy after the other
            for i in g:
                out[i] = fn(cells[i])
                if progress:
                    progress()
        return out
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures import as_completed as done
    if evaluate == DEFAULT_EVALUATOR:
        _warm(cells)    # the forked workers inherit what this process loaded
    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("fork")) as ex:
        submitted = {ex.submit(_run_group, [cells[i] for i in g], evaluate): g
                     for g in _groups(cells, jobs, evaluate)}
        for fut in done(submitted):
            for i, r in zip(submitted[fut], fut.result()):
                out[i] = r
                if progress:
                    progress()
    return out
