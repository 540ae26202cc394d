"""Area of one design point, for design-space sweeps (``ahasd sweep`` runs the grid).

:func:`area_point` takes one point, a flat dict such as ``{"block": "edc", "history_depth": 8,
"bucket_bits": 3, "llr_bits": 3}``, synthesises that block with those parameters
(:func:`ahasd.commands.area.area_report`, SRAM macros as in ``ahasd area``) and returns the
point with its figures. :data:`DEFAULT_GRID` is the default grid: EDC over PHT entries
(``2 ** (2 * bucket_bits + llr_bits)``) and history depth, the queues over their depths, the
GEMV over its burst width (its lane count); about 5 minutes of CPU with the YoWASP cache warm.
"""

import hashlib
import json
from pathlib import Path

__all__ = ["SWEPT", "DEFAULT_GRID", "area_point"]

#: block -> the parameters a point may set
SWEPT = {
    "edc": ("history_depth", "bucket_bits", "llr_bits", "counter_bits", "fifo_depth_log2"),
    "queues": ("draft_depth", "feedback_depth", "preverify_depth"),
    "gemv": ("burst_bytes", "max_n"),
}

DEFAULT_GRID = (
    [{"block": "edc", "history_depth": d, "bucket_bits": b, "llr_bits": l}
     for d in (4, 8, 16) for b, l in ((2, 2), (3, 3), (4, 3))]
    + [{"block": "queues", "draft_depth": d, "feedback_depth": d // 2} for d in (16, 32, 64, 128)]
    + [{"block": "gemv", "burst_bytes": b} for b in (16, 32, 64)]
)


def _params(block, point):
    unknown = sorted(set(point) - set(SWEPT[block]))
    if unknown:
        raise ValueError(f"{block} points take {', '.join(SWEPT[block])}; not "
                         f"{', '.join(unknown)}")
    if block != "gemv":
        return dict(point)
    from ahasd.sim.blocks.dram import DRAMConfig
    params = {k: v for k, v in point.items() if k != "burst_bytes"}
    if "burst_bytes" in point:
        params["config"] = DRAMConfig(burst_bytes=point["burst_bytes"])
    return params


def area_point(point, *, build_dir="build/sweep/area", timing=False):
    """Area figures of one design ``point`` (see the module docstring) as a flat dict: the
    point, the derived ``pht_entries`` for the EDC, and ``cells``, ``ff_bits``, ``memory_bits``,
    ``sram_bits``, ``area_ge``, ``logic_depth`` (``delay_depth`` with ``timing``),
    ``logic_mm2``, ``sram_mm2``, ``total_mm2``, ``die_percent``, ``seconds``, ``cpu_seconds``."""
    from ahasd.commands.area import area_report
    if not isinstance(point, dict) or point.get("block") not in SWEPT:
        raise ValueError(f"a point is a dict whose 'block' is one of {', '.join(SWEPT)}, not "
                         f"{point!r}")
    block = point["block"]
    rest = {k: v for k, v in point.items() if k != "block"}
    params = _params(block, rest)
    key = hashlib.sha1(json.dumps(point, sort_keys=True).encode()).hexdigest()[:12]
    report = area_report(block, Path(build_dir) / f"{block}-{key}", params=params,
                         timing=timing)
    row = dict(point)
    if block == "edc":
        from ahasd.sim.blocks.edc import EDCParams
        row["pht_entries"] = EDCParams(**{k: v for k, v in params.items()
                                          if k != "fifo_depth_log2"}).pht_entries
    figures = report.as_dict()
    for name in ("cell_counts", "sram_macros", "shared_modules", "block"):
        figures.pop(name)
    row.update(figures)
    return row
