"""``ahasd sweep [system|area]``: the one sweep framework (local processes or dask).

``system`` (the default kind, ``ahasd sweep --axis ...``) sweeps figures of the system
simulator's configuration, EDC parameters and the acceptance level
(:mod:`ahasd.sim.system.sweep`). ``area`` synthesises blocks over their parameters
(:mod:`ahasd.bench.area_sweep`) and scores each EDC point's prediction accuracy on recorded golden
decoding traces. Both run their points through :func:`ahasd.sim.system.parallel.run_cells`.
"""

import math
import time
from pathlib import Path

from ahasd.args import TOKENS_MAX, check_choice, integer, seed
from ahasd.errors import CliError, grid_errors
from ahasd.files import fresh_output_dir, os_reason, output_dir
from ahasd.progress import progress
from ahasd.sim.decoding.policies import policy_names
from ahasd.sim.system.config import pair_names
from ahasd.sim.system.systems import system_names
from ahasd.sim.traces.errors import TraceError

__all__ = ["register", "run"]

KINDS = ("system", "area")
#: Options of one kind only (dest -> kind), refused with the other.
_ONLY = {"system": "system", "pair": "system", "policy": "system", "area_json": "system",
         "trace": "area", "build_dir": "area"}
_SYSTEM_DEFAULTS = {"system": "ahasd", "pair": "opt", "policy": "adaedl"}
_TOKENS = {"system": 256, "area": 4000}


def register(sub):
    p = sub.add_parser(
        "sweep", help="sweep parameters of the system simulator or block areas (local "
                      "processes or dask)",
        description="system (default): run the cartesian product of the --axis value lists "
                    "through the system simulator. Axes: any SECTION.KEY of the configuration "
                    "(e.g. pim.internal_bw_gbps, npu.int8_tops, "
                    "controller.max_lookahead_batches), edc.h_max_nats / edc.bucket_bits / "
                    "edc.llr_bits (PHT size), acceptance_pair. "
                    "area: synthesise blocks over BLOCK.PARAM axes (edc.history_depth, "
                    "edc.bucket_bits, edc.llr_bits, edc.counter_bits, edc.fifo_depth_log2, "
                    "queues.draft_depth, queues.feedback_depth, queues.preverify_depth, "
                    "gemv.burst_bytes, gemv.max_n; per block the cartesian product of its axes; "
                    "without --axis the default grid of 16 points), and score each EDC point's "
                    "prediction accuracy on golden decoding traces (recorded for the n-gram "
                    "pairs ngram3-5 and ngram4-5, or --trace files). Both write sweep.csv, "
                    "sweep.json and sweep.png into --out; area also edc_area_accuracy.png, "
                    "traces.json and timing.json.")
    p.add_argument("kind", nargs="?", choices=KINDS, default="system",
                   help="what to sweep (default: system)")
    p.add_argument("--axis", action="append", metavar="KEY=V1,V2,...",
                   help="a swept parameter and its values (repeatable; system: required)")
    p.add_argument("--system", default=None, help="system: the simulated system (default ahasd)")
    p.add_argument("--pair", default=None, help="system: the model pair (default opt)")
    p.add_argument("--policy", default=None, help="system: the drafting policy (default adaedl)")
    p.add_argument("--area-json", type=Path, default=None, metavar="FILE",
                   help="system, with a pim.units axis: the GEMV unit's area from this saved "
                        "`ahasd area gemv --json` (default: the gemv row of the README's "
                        "generated area table, `make area`); adds the PIM's added area and "
                        "pim_units.png")
    p.add_argument("--tokens", type=integer(1, TOKENS_MAX), default=None,
                   help=f"system: tokens per point (default 256); area: tokens per recorded "
                        f"golden trace (default 4000); 1..{TOKENS_MAX:,}")
    p.add_argument("--seed", type=seed, default=0,
                   help="random seed of the decoding (system) or of the recorded traces "
                        "(area), 0..2**64-1 (default 0)")
    p.add_argument("--trace", action="append", type=Path, metavar="FILE",
                   help="area: score the EDC on this recorded ahasd-trace instead of recording "
                        "the golden pairs' traces (repeatable)")
    p.add_argument("--build-dir", type=Path, default=None, metavar="DIR",
                   help="area: where synthesis runs (default build/sweep)")
    p.add_argument("--jobs", type=int, default=2, help="local worker processes (1: none)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="a dask.distributed scheduler address (tcp://host:port)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.add_argument("--force", action="store_true",
                   help="write into --out even if it already holds files")
    p.set_defaults(func=run)


def run(args):
    for dest, kind in _ONLY.items():
        if getattr(args, dest) is not None and kind != args.kind:
            option = "--" + dest.replace("_", "-")
            raise CliError(f"{option} applies to the {kind} sweep, not to the {args.kind} sweep")
    if args.jobs < 1:
        raise CliError(f"--jobs must be a positive integer, not {args.jobs}")
    if args.tokens is None:
        args.tokens = _TOKENS[args.kind]
    if args.kind == "area":
        return _area(args)
    for dest, default in _SYSTEM_DEFAULTS.items():
        if getattr(args, dest) is None:
            setattr(args, dest, default)
    return _system(args)


def _counter(update):
    """``run_cells``' per-cell callback -> ``update(cells done)`` of :func:`ahasd.progress`."""
    done = [0]

    def step():
        done[0] += 1
        update(done[0])
    return step


def _system(args):
    from ahasd.sim.system.sweep import parse_axis, run_sweep  # the sweep machinery: this verb only

    if not args.axis:
        raise CliError("the system sweep needs at least one --axis KEY=V1,V2,...")
    check_choice("system", args.system, system_names())
    check_choice("pair", args.pair, pair_names())
    check_choice("policy", args.policy, policy_names())
    try:
        axes = [parse_axis(a) for a in args.axis]
    except ValueError as e:
        raise CliError(str(e)) from None
    gemv_mm2 = (_gemv_mm2(args.area_json) if any(n == "pim.units" for n, _ in axes)
                else None)
    fresh_output_dir(args.out, "--out", force=args.force)                       # before any work
    total = math.prod(len(values) for _, values in axes)
    with grid_errors(args.scheduler), progress(f"simulating {total} points", total) as update:
        rows = run_sweep(axes, args.out, jobs=args.jobs, scheduler=args.scheduler,
                         system=args.system, pair=args.pair, policy=args.policy,
                         tokens=args.tokens, seed=args.seed, progress=_counter(update),
                         gemv_mm2=gemv_mm2)
    bad = [r["error"] for r in rows if "error" in r]
    print(f"{len(rows)} points written to {args.out}/sweep.csv"
          + (f"; {len(bad)} could not run: {bad[0]}" if bad else ""))
    return 0


README = Path(__file__).resolve().parents[2] / "README.md"


def _gemv_mm2(path):
    """The GEMV unit's mm² (28 nm): from a saved ``ahasd area gemv --json`` (``path``), or the
    gemv row of the README's generated area table (the saved result of ``make area``)."""
    import json
    import re
    if path is not None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return next(float(b["total_mm2"]) for b in data["blocks"] if b["block"] == "gemv")
        except OSError as e:
            raise CliError(f"--area-json: cannot read {path}: {os_reason(e)}") from None
        except (ValueError, KeyError, TypeError, StopIteration):
            raise CliError(f"--area-json: {path} is not the JSON of `ahasd area gemv --json` "
                           "(no gemv block with total_mm2)") from None
    try:
        text = README.read_text(encoding="utf-8")
    except OSError:
        text = ""
    m = re.search(r"^\| gemv \|(?:[^|\n]*\|){5}\s*([0-9.]+)\s*\|", text, re.M)
    if m is None:
        raise CliError("a pim.units axis needs the GEMV unit's area: --area-json FILE (a saved "
                       "`ahasd area gemv --json`); the README has no generated area table")
    return float(m.group(1))


def _area(args):
    from ahasd.bench import area_sweep  # synthesis and plots: this verb only
    try:
        points = (area_sweep.grid_of_axes([area_sweep.parse_axis(a) for a in args.axis])
                  if args.axis else list(area_sweep.DEFAULT_GRID))
        for p in points:
            area_sweep.check_point(p)
    except ValueError as e:
        raise CliError(str(e)) from None
    if args.trace and not any(p["block"] == "edc" for p in points):
        raise CliError("--trace scores EDC points, and this sweep has none")
    out = fresh_output_dir(args.out, "--out", force=args.force)                 # before any work
    build = output_dir(args.build_dir or Path("build/sweep"), "--build-dir")
    start = time.monotonic()
    traces = []
    if any(p["block"] == "edc" for p in points):
        if args.trace:
            for path in args.trace:
                try:
                    traces.append(area_sweep.file_trace(path, path.stem))
                except TraceError as error:     # name the file, as every other reader does
                    raise CliError(f"{path}: {error}") from None
        else:
            pairs = area_sweep.TRACE_PAIRS
            with progress(f"recording golden traces ({', '.join(pairs)})",
                          len(pairs) * args.tokens) as update:
                traces = area_sweep.record_traces(out / "traces", pairs=pairs,
                                                  tokens=args.tokens, seed=args.seed,
                                                  progress=update)
    with progress(f"synthesising {len(points)} points", len(points)) as update:
        with grid_errors(args.scheduler, values=False):
            rows = area_sweep.run_area_sweep(points, out, traces=traces, build_dir=build,
                                             jobs=args.jobs, scheduler=args.scheduler,
                                             progress=_counter(update))
    bad = [r["error"] for r in rows if r.get("error")]
    print(f"{len(rows)} points written to {out}/sweep.csv in {time.monotonic() - start:.0f} s"
          + (f"; {len(bad)} failed: {bad[0]}" if bad else ""))
    return 1 if bad else 0
