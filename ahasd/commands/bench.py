"""``ahasd bench NAME|all [--json] [--quick]``: benchmarks that print measured figures.

Benchmarks measure and print (cycles, ratios, events/s, tokens/s); they never assert timing.
Each entry of :data:`BENCHES` names a function ``bench(json_output: bool, quick: bool) -> dict``
that runs the measurement, prints a table (or nothing when ``json_output``), and returns the
figures; the command prints the returned dict as strict JSON with ``--json`` (a figure that is
not finite, such as a rate over an unmeasurably short time, becomes null).
"""

import importlib
import json
import math

__all__ = ["BENCHES", "register", "finite_or_null"]

#: name -> "module:function". Add one line per benchmark.
BENCHES = {
    "edc": "ahasd.bench.edc:bench",
    "gemv": "ahasd.bench.gemv:bench",
    "decode": "ahasd.bench.decode:bench",
    "queues": "ahasd.bench.queues:bench",
    "tvc": "ahasd.bench.tvc:bench",
    "system": "ahasd.bench.system:bench",
    "acceptance": "ahasd.bench.acceptance:bench",
    "rtl-timing": "ahasd.bench.rtl_timing:bench",
}


def register(sub):
    p = sub.add_parser("bench", help="run a benchmark and print its figures")
    p.add_argument("name", choices=list(BENCHES) + ["all"])
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--quick", action="store_true", help="smaller problem sizes (for smoke tests)")
    p.set_defaults(func=run)


def run(args):
    names = list(BENCHES) if args.name == "all" else [args.name]
    figures = {}
    for name in names:
        module_name, _, func = BENCHES[name].partition(":")
        bench = getattr(importlib.import_module(module_name), func)
        figures[name] = bench(json_output=args.json, quick=args.quick)
    if args.json:
        data = finite_or_null(figures if args.name == "all" else figures[args.name])
        print(json.dumps(data, indent=2, allow_nan=False))


def finite_or_null(value):
    """``value`` with every NaN or infinite float replaced by None (JSON null): a rate over a
    time too short to measure is unknown, and JSON has no Infinity."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_null(v) for v in value]
    return value
