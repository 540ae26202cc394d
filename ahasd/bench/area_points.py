"""The points of an area sweep: which block parameters a point may set, the default grid, the
``--axis BLOCK.PARAM=V1,V2,...`` syntax and the check of a point (:mod:`ahasd.bench.area_sweep`
runs them, :mod:`ahasd.bench.area_plots` draws them).

A point is a flat dict such as ``{"block": "edc", "history_depth": 8, "bucket_bits": 3,
"llr_bits": 3}``. :data:`DEFAULT_GRID` is the default grid: EDC over PHT entries
(``2 ** (2 * bucket_bits + llr_bits)``) and history depth, the queues over their depths, the
GEMV over its burst width (its lane count).
"""

import itertools

__all__ = ["SWEPT", "DEFAULT_GRID", "parse_axis", "grid_of_axes", "check_point"]

#: block -> the parameters a point may set (all integers)
SWEPT = {
    "edc": ("history_depth", "bucket_bits", "llr_bits", "counter_bits", "fifo_depth_log2"),
    "queues": ("draft_depth", "feedback_depth", "preverify_depth"),
    "gemv": ("burst_bytes", "max_n"),
}

DEFAULT_GRID = (
    [{"block": "edc", "history_depth": d, "bucket_bits": b, "llr_bits": llr}
     for d in (4, 8, 16) for b, llr in ((2, 2), (3, 3), (4, 3))]
    + [{"block": "queues", "draft_depth": d, "feedback_depth": d // 2} for d in (16, 32, 64, 128)]
    + [{"block": "gemv", "burst_bytes": b} for b in (16, 32, 64)]
)


def parse_axis(text):
    """``"BLOCK.PARAM=V1,V2,..."`` -> ``(block, param, [ints])``; ValueError names a bad part."""
    name, eq, raw = text.partition("=")
    name = name.strip()
    if not eq or "." not in name:
        raise ValueError(f"an area sweep axis is BLOCK.PARAM=V1,V2,..., not {text!r}")
    block, param = name.split(".", 1)
    if block not in SWEPT:
        raise ValueError(f"unknown block {block!r} in axis {name} (area sweeps: "
                         f"{', '.join(SWEPT)})")
    if param not in SWEPT[block]:
        raise ValueError(f"{block} has no sweep parameter {param!r} (known: "
                         f"{', '.join(SWEPT[block])})")
    values = [v.strip() for v in raw.split(",") if v.strip()]
    if not values:
        raise ValueError(f"sweep axis {name} has no values")
    out = []
    for v in values:
        try:
            if len(v) > 25:                 # int() of a huge string is slow
                raise ValueError
            out.append(int(v, 10))
        except ValueError:
            raise ValueError(f"{name} values must be integers, not {v!r}") from None
    if len(set(out)) != len(out):
        raise ValueError(f"sweep axis {name} repeats a value: {raw.strip()}")
    return block, param, out


def grid_of_axes(axes):
    """Points of parsed axes: per block, the cartesian product of that block's axes (blocks in
    the order they first appear); a parameter given twice is an error."""
    by_block = {}
    for block, param, values in axes:
        params = by_block.setdefault(block, {})
        if param in params:
            raise ValueError(f"axis {block}.{param} is given twice")
        params[param] = values
    points = []
    for block, params in by_block.items():
        names = list(params)
        for combo in itertools.product(*(params[n] for n in names)):
            points.append({"block": block, **dict(zip(names, combo))})
    return points


def _params(block, point):
    unknown = sorted(set(point) - set(SWEPT[block]))
    if unknown:
        raise ValueError(f"{block} points take {', '.join(SWEPT[block])}; not "
                         f"{', '.join(unknown)}")
    if block != "gemv":
        return dict(point)
    from ahasd.spec.dram import DRAMConfig
    params = {k: v for k, v in point.items() if k != "burst_bytes"}
    if "burst_bytes" in point:
        params["config"] = DRAMConfig(burst_bytes=point["burst_bytes"])
    return params


def check_point(point):
    """Validate ``point`` without synthesising (the block's constructor checks its values);
    return the block's constructor parameters."""
    if not isinstance(point, dict) or point.get("block") not in SWEPT:
        raise ValueError(f"a point is a dict whose 'block' is one of {', '.join(SWEPT)}, not "
                         f"{point!r}")
    block = point["block"]
    params = _params(block, {k: v for k, v in point.items() if k != "block"})
    if block == "edc":
        from ahasd.sim.blocks.edc import EDCParams
        EDCParams(**params)
    else:
        _construct(block, params)
    return params


def _construct(block, params):
    """Build the block (its constructor validates the parameters) and drop it unelaborated:
    Amaranth warns about that when the object and its parts are collected, which here is on
    purpose, so the collection happens now, with that one warning ignored."""
    import gc
    import warnings

    from amaranth.hdl import UnusedElaboratable

    from ahasd.hw.blocks import make_block
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        try:
            make_block(block, **params)
        finally:
            gc.collect()
