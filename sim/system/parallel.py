"""Run many independent simulator cells: in this process, on local processes, or on dask.

Every cell is a dict of :func:`ahasd.sim.system.runner.simulate` keyword arguments; the result of
a cell is its :meth:`SimResult.as_dict` without the ``config`` (the same for every cell, stored
once by the callers). Results come back in the cells' order whatever ran them, and a cell's result
depends only on its arguments, so local processes, dask and a single process give identical output.
Synchronous systems whose decoding provably does not depend on timing (no EDC, no TVC, and a
policy other than BanditSpec, whose costs are the system's) share one decoding per (pair, policy,
tokens, seed): see :func:`run_cell`.
"""

__all__ = ["run_cell", "run_cells"]


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


def run_cells(cells, *, jobs=1, scheduler=None, progress=None):
    """Results of ``cells`` in order. ``jobs`` local processes (1: this process), or a dask
    scheduler address (``scheduler``; ``"inproc"`` objects: a ``distributed.Client``)."""
    cells = list(cells)
    out = [None] * len(cells)
    if scheduler is not None:
        from distributed import Client, as_completed
        client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
        try:
            futures = {client.submit(run_cell, c, pure=False): i for i, c in enumerate(cells)}
            for fut in as_completed(futures):
                out[futures[fut]] = fut.result()
                if progress:
                    progress()
        finally:
            if client is not scheduler:
                client.close()
        return out
    if jobs <= 1:
        for i, c in enumerate(cells):
            out[i] = run_cell(c)
            if progress:
                progress()
        return out
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed as done
    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("fork")) as ex:
        futures = {ex.submit(run_cell, c): i for i, c in enumerate(cells)}
        for fut in done(futures):
            out[futures[fut]] = fut.result()
            if progress:
                progress()
    return out
