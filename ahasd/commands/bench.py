"""``ahasd bench NAME|all [--json] [--quick]``: benchmarks that print measured figures.

Benchmarks measure and print (cycles, ratios, events/s, tokens/s); they never assert timing.
Each entry of :data:`BENCHES` names a function ``bench(json_output: bool, quick: bool) -> dict``
that runs the measurement, prints a table (or nothing when ``json_output``), and returns the
figures. With ``--json`` the command prints one shape whatever the arguments (one bench or
``all``): ``{"benches": {NAME: figures, ...}, "cases": ...}``, the benches in the order they ran;
``cases`` is the GEMV bench's ``cases`` (a key users' scripts read from ``bench gemv --json``
since before the benches were nested), ``null`` when the GEMV bench did not run. The JSON is
strict: a figure that is not finite, such as a rate over an unmeasurably short time, becomes
null.
"""

import importlib
import json
import math
from pathlib import Path

from ahasd.errors import CliError
from ahasd.readme import check_readme, update_section

__all__ = ["BENCHES", "register", "finite_or_null", "json_document"]

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
    p.add_argument("--readme", type=Path, default=None, metavar="FILE",
                   help="also rewrite the bench's generated table of FILE (gemv: section 'gemv')")
    p.set_defaults(func=run)


def _module(name):
    module_name, _, func = BENCHES[name].partition(":")
    module = importlib.import_module(module_name)
    return module, getattr(module, func)


def run(args):
    names = list(BENCHES) if args.name == "all" else [args.name]
    if args.readme is not None:
        with_tables = [n for n in BENCHES if hasattr(_module(n)[0], "README_SECTION")]
        if args.name not in with_tables:
            raise CliError(f"--readme: bench {args.name} has no README table (benches with one: "
                           f"{', '.join(with_tables)})")
        module = _module(args.name)[0]
        check_readme(args.readme, [module.README_SECTION])
    figures = {}
    for name in names:
        figures[name] = _module(name)[1](json_output=args.json, quick=args.quick)
    if args.readme is not None:
        update_section(args.readme, module.README_SECTION, module.markdown_figures(figures[args.name]))
    if args.json:
        print(json.dumps(json_document(figures), indent=2, allow_nan=False))


def json_document(figures):
    """The one JSON shape of ``bench --json`` for the benches run (``figures``: name -> the
    bench's figures, in run order): ``{"benches": figures, "cases": gemv's cases or None}``."""
    figures = finite_or_null(figures)
    gemv = figures.get("gemv")
    return {"benches": figures, "cases": gemv["cases"] if gemv is not None else None}


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
