"""Run many independent simulator cells: in this process, on local processes, or on dask.

Every cell is a dict of :func:`ahasd.sim.system.runner.simulate` keyword arguments; the result of
a cell is its :meth:`SimResult.as_dict` without the ``config`` (the same for every cell, stored
once by the callers). Results come back in the cells' order whatever ran them, and a cell's result
depends only on its arguments, so local processes, dask and a single process give identical output.
Synchronous systems, whose decoding provably does not depend on timing (no look-ahead, EDC or
TVC; a policy other than BanditSpec, whose costs are the system's), share one decoding per golden
pair, policy, token count and seed (:func:`decoding_key`): such cells run as one task, so the
worker records the decoding once and replays it (``ahasd.sim.system.runner``).

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
    return (cell.get("acceptance_pair", "ngram3-5"), "fixed8" if system == "specpim" else policy,
            cell.get("tokens"), cell.get("seed"), cell.get("max_files"), cell.get("greedy"))


def resolve_evaluator(name):
    """``"package.module:function"`` -> the function (imported here, or in a worker)."""
    module, sep, attr = name.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"a cell evaluator is named 'package.module:function', not {name!r}")
    fn = getattr(importlib.import_module(module), attr, None)
    if not callable(fn):
        raise ValueError(f"cell evaluator {name} is not a function of {module}")
    return fn


def _groups(cells, evaluate=DEFAULT_EVALUATOR):
    """Index groups: cells sharing a decoding together (so one worker records and replays),
    largest first; one cell per group for any other evaluator, in the cells' order."""
    if evaluate != DEFAULT_EVALUATOR:
        return [[i] for i in range(len(cells))]
    by_key, singles = {}, []
    for i, c in enumerate(cells):
        k = decoding_key(c)
        if k is None:
            singles.append([i])
        else:
            by_key.setdefault(k, []).append(i)
    return sorted(by_key.values(), key=len, reverse=True) + singles


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
            groups = _groups(cells, evaluate)
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
    groups = _groups(cells, evaluate)
    if jobs <= 1:
        for g in groups:
            for i in g:
                out[i] = fn(cells[i])
                if progress:
                    progress()
        return out
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed as done
    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("fork")) as ex:
        futures = {ex.submit(_run_group, [cells[i] for i in g], evaluate): g for g in groups}
        for fut in done(futures):
            for i, r in zip(futures[fut], fut.result()):
                out[i] = r
                if progress:
                    progress()
    return out
