"""Where each of the paper's claims can hold: the simulator over a grid of the parameters that
decide them (``ahasd claims``).

A *claim* is one of the paper's headlines (:data:`CLAIMS`; the paper's figure is
:data:`ahasd.sim.system.report.PAPER`'s, the one source ``reproduce`` uses too), computed by
:func:`ahasd.sim.system.report.headlines` from the runs of one grid *point* exactly as
``reproduce`` computes it from its grid: per seed, then its mean and 95 % t-interval over the
seeds. A claim *holds* at a point when our interval reaches the paper's figure (:func:`holds`):
``ci95_high >= paper`` for a higher-is-better ratio, ``ci95_low <= paper`` for energy per token.

The grid (:data:`AXES`): per-token acceptance (a synthetic decoding,
:class:`ahasd.sim.system.sources.AcceptanceSource`; the shipped point decodes with the golden
n-gram pairs), the PIM's GEMV units, the LPDDR5's off-chip bandwidth, the laptop GPU's bandwidth
and its memory (whether the pair fits it). It is run as

* one line per axis through the shipped point (the others shipped): :func:`least_change` finds
  along it the smallest move at which a claim holds;
* one 2-D grid over the two heatmap axes (default acceptance x PIM units), shared by every claim:
  one heatmap per claim (:func:`heatmap_figure`).

Runs are shared wherever they are provably the same run: a point's cells are built per system
with only the axes that system reads (:data:`READS`; tested), so a GPU-only run serves every PIM
point and an AHASD run every GPU point, and one run serves every claim that uses it. The cells run
through :func:`ahasd.sim.system.parallel.run_cells` (this process, local processes or dask).
"""

import json
import math
from dataclasses import dataclass
from typing import Any

from ahasd.sim.system import report
from ahasd.sim.system.config import ConfigError, load_config
from ahasd.sim.system.seeds import seed_list

__all__ = ["Axis", "Claim", "AXES", "CLAIMS", "READS", "QUICK", "holds", "least_change",
           "parse_axis", "plan_points", "point_cells", "evaluate_point", "run_claims",
           "sentence", "heatmap_data", "heatmap_figure", "summary_markdown", "SYNTHETIC",
           "sentence_lines", "check_document"]

#: ``acceptance_pair`` label of a point's rows in :func:`report.headlines`
SYNTHETIC = "point"


@dataclass(frozen=True)
class Axis:
    """A parameter of the grid: its name (``acceptance`` or a ``SECTION.KEY``), default grid
    values (in grid order, ascending), a label with its unit."""
    name: str
    values: tuple
    label: str


@dataclass(frozen=True)
class Claim:
    """A paper headline: its figure's path in :data:`report.PAPER` and in the headlines of
    :func:`report.headlines`, whether higher is better, the systems it compares."""
    name: str
    label: str
    paper_path: tuple
    path: tuple
    higher: bool
    systems: tuple


AXES = {a.name: a for a in (
    Axis("acceptance", (0.4, 0.5, 0.6, 0.7, 0.8, 0.9), "per-token acceptance (fraction)"),
    Axis("pim.units", (16, 32, 64, 128, 256), "PIM GEMV units (count)"),
    Axis("pim.offchip_bw_gbps", (51.2, 102.4, 153.6, 204.8), "off-chip bandwidth (GB/s)"),
    Axis("gpu.mem_bw_gbps", (256.0, 448.0, 672.0, 896.0), "GPU bandwidth (GB/s)"),
    Axis("gpu.mem_gb", (8.0, 16.0, 32.0, 80.0), "GPU memory (GB; OPT fits 16, LLaMA2 32, "
                                                 "PaLM 80)"),
)}

_TVC = ("ahasd", "tvc")
CLAIMS = {c.name: c for c in (
    Claim("throughput_vs_gpu", "throughput vs GPU-only (max)", ("throughput_vs_gpu_max",),
          ("vs_gpu", "throughput", "max"), True, (_TVC, ("gpu", None))),
    Claim("energy_vs_gpu", "energy efficiency vs GPU-only (max)", ("energy_vs_gpu_max",),
          ("vs_gpu", "energy_efficiency", "max"), True, (_TVC, ("gpu", None))),
    Claim("throughput_vs_specpim", "throughput vs SpecPIM (max)", ("throughput_vs_specpim_max",),
          ("vs_specpim", "throughput", "max"), True, (_TVC, ("specpim", None))),
    Claim("energy_vs_specpim", "energy efficiency vs SpecPIM (mean)", ("energy_vs_specpim_mean",),
          ("vs_specpim", "energy_efficiency", "mean"), True, (_TVC, ("specpim", None))),
    Claim("throughput_vs_npu_lpddr5", "throughput vs NPU + LPDDR5 (mean)",
          ("throughput_vs_npu_lpddr5",), ("vs_npu-lpddr5", "throughput", "mean"), True,
          (_TVC, ("npu-lpddr5", None))),
    Claim("energy_per_token_vs_npu_lpddr5", "energy per token vs NPU + LPDDR5 (mean)",
          ("energy_per_token_vs_npu_lpddr5",), ("energy_per_token_vs_npu-lpddr5",), False,
          (_TVC, ("npu-lpddr5", None))),
    *(Claim(f"ablation_{abl}", f"ablation step {abl}: throughput vs GPU-only (mean)",
            ("ablation_throughput", abl), ("ablation_vs_gpu", abl, "throughput"), True,
            (("ahasd", abl), ("gpu", None))) for abl in ("async", "aau", "edc", "tvc")),
)}

#: The axes each system's run reads (the others cannot change it: tested by running it).
READS = {"gpu": {"acceptance", "gpu.mem_bw_gbps", "gpu.mem_gb"},
         "specpim": {"acceptance", "gpu.mem_bw_gbps", "gpu.mem_gb"},
         "npu-lpddr5": {"acceptance", "pim.offchip_bw_gbps"},
         "ahasd": {"acceptance", "pim.units", "pim.offchip_bw_gbps"}}

#: ``--quick``: a small grid for tests (one pair, 64 tokens, 2 seeds, two values per axis).
QUICK: dict[str, Any] = {"pairs": ("opt",), "tokens": 64, "seeds": 2,
         "axes": {"acceptance": (0.5, 0.9), "pim.units": (16, 64),
                  "pim.offchip_bw_gbps": (51.2, 204.8), "gpu.mem_bw_gbps": (256.0, 896.0),
                  "gpu.mem_gb": (16.0, 80.0)}}
DEFAULTS: dict[str, Any] = {"pairs": report.PAPER_PAIRS, "policies": ("adaedl",), "tokens": 512, "seeds": 3}


def paper_figure(claim):
    """The paper's figure of ``claim`` (from :data:`report.PAPER`)."""
    node: Any = report.PAPER
    for k in claim.paper_path:
        node = node[k]
    return float(node)


def holds(iv, paper, higher):
    """The holding rule: our interval ``iv`` (an interval dict) reaches ``paper``:
    ``ci95_high >= paper`` (higher is better) or ``ci95_low <= paper`` (lower is better). Without
    an interval (one seed) the mean stands for both bounds; no value never holds."""
    bound = iv.get("ci95_high" if higher else "ci95_low")
    if bound is None:
        bound = iv.get("mean")
    if bound is None:
        return False
    return bound >= paper if higher else bound <= paper


def least_change(values, shipped, holding):
    """The smallest move from ``shipped`` along one axis at which a claim holds.

    ``values``: the axis's grid values; ``holding``: value -> bool (the claim holds at that
    value, the other axes shipped; values missing count as not holding). ``shipped`` need not
    be a grid value (the golden pairs' measured acceptance is not). Up: the grid values above
    ``shipped`` in ascending order; down: those below, descending; a move's ``steps`` is its
    rank in that order (1 = the nearest grid value). The least change is the holding value of
    fewest steps, then of smallest relative change ``|v - shipped| / shipped``, then up.

    Returns ``None`` if no grid value holds; else ``{"value", "shipped", "direction" ("up" or
    "down"), "steps", "up", "down"}`` (``up``/``down``: the nearest holding value in that
    direction, or None).
    """
    up = sorted(v for v in values if v > shipped)
    down = sorted((v for v in values if v < shipped), reverse=True)
    first = {}
    for name, seq in (("up", up), ("down", down)):
        first[name] = next(((i + 1, v) for i, v in enumerate(seq) if holding.get(v)), None)
    found = [(steps, abs(v - shipped) / abs(shipped) if shipped else abs(v), d != "up", v, d)
             for d, hit in first.items() if hit is not None for steps, v in [hit]]
    if not found:
        return None
    steps, _, _, value, direction = min(found)
    return {"value": value, "shipped": shipped, "direction": direction, "steps": steps,
            "up": first["up"][1] if first["up"] else None,
            "down": first["down"][1] if first["down"] else None}


def parse_axis(text):
    """``"NAME=V1,V2,..."`` -> ``(name, values)`` (ascending), every value checked: acceptance
    in [0, 1], a configuration key through :func:`load_config`."""
    if "=" not in text:
        raise ConfigError(f"--axis needs NAME=V1,V2,..., not {text!r}")
    name, raw = (s.strip() for s in text.split("=", 1))
    if name not in AXES:
        raise ConfigError(f"unknown axis {name!r} (axes: {', '.join(AXES)})")
    values = []
    for v in (x.strip() for x in raw.split(",")):
        if not v:
            continue
        try:
            x = float(v)
        except ValueError:
            raise ConfigError(f"axis {name}: {v!r} is not a number") from None
        if name == "acceptance":
            if not 0 <= x <= 1:
                raise ConfigError(f"axis acceptance: values must be in [0, 1], not {v}")
        else:
            x = int(x) if name == "pim.units" and x == int(x) else x
            section, key = name.split(".", 1)
            load_config([(section, key, x)])
        values.append(x)
    if not values:
        raise ConfigError(f"axis {name} has no values")
    return name, tuple(sorted(set(values)))


def shipped_values(cfg):
    """The shipped value of every axis but acceptance (the golden pairs' decoding)."""
    return {"pim.units": cfg.pim.units, "pim.offchip_bw_gbps": cfg.pim.offchip_bw_gbps,
            "gpu.mem_bw_gbps": cfg.gpu.mem_bw_gbps, "gpu.mem_gb": cfg.gpu.mem_gb}


def _norm(point, shipped):
    """A point without the axes at their shipped value (so equal points compare equal)."""
    return {k: v for k, v in sorted(point.items()) if shipped.get(k, object()) != v}


def plan_points(axes, heatmap, shipped):
    """The points to run: the shipped point ``{}``, each axis's line through it, the 2-D grid
    of the ``heatmap`` axes; each point a dict of the axes not at their shipped value, listed
    once."""
    pts: list[dict] = [{}]
    x, y = heatmap
    cands = [{name: v} for name, values in axes.items() for v in values]
    cands += [{x: vx, y: vy} for vx in axes[x] for vy in axes[y]]
    for p in cands:
        p = _norm(p, shipped)
        if p not in pts:
            pts.append(p)
    return pts


def point_cells(point, systems, *, pairs, policies, seeds, tokens, overrides=(), max_files=None):
    """The cells of ``point`` as ``[(row cell, run cell)]``: the row cell names the system,
    pair, policy and seed for :func:`report.headlines`; the run cell is what
    :func:`ahasd.sim.system.runner.simulate` runs, with only the axes the system reads
    (:data:`READS`), so equal runs of different points are equal cells."""
    out = []
    for system, abl in systems:
        reads = {k: v for k, v in point.items() if k in READS[system]}
        extra = tuple((*k.split(".", 1), v) for k, v in sorted(reads.items())
                      if k != "acceptance")
        for pair in pairs:
            for policy in policies:
                for s in seeds:
                    run = {"system": system, "ablation": abl or "tvc", "pair": pair,
                           "policy": policy, "tokens": tokens, "seed": s, "offload": True,
                           "overrides": tuple(overrides) + extra}
                    if "acceptance" in reads:
                        run["acceptance"] = reads["acceptance"]
                    if max_files is not None:
                        run["max_files"] = max_files
                    row = {"system": system, "ablation": abl or "tvc", "pair": pair,
                           "policy": policy, "seed": s, "acceptance_pair": SYNTHETIC}
                    out.append((row, run))
    return out


def run_key(cell):
    """A hashable identity of a run cell."""
    return json.dumps(cell, sort_keys=True, default=list)


def _walk(tree, path):
    node: Any = tree
    for k in path:
        if not isinstance(node, dict) or k not in node:
            return None
        node = node[k]
    return node


def evaluate_point(rows, claims, *, pairs, policies):
    """Every claim's value at one point from its rows (``{"cell": row cell, ...run}``):
    ``{"claims": {name: interval dict}, "acceptance_rate": AHASD's mean, "errors": [...]}``."""
    h = report.headlines(rows, pairs=pairs, policies=policies, acceptance_pairs=(SYNTHETIC,))
    out = {}
    for c in claims:
        iv = _walk(h.get("intervals", {}), c.path)
        if not (isinstance(iv, dict) and "n_seeds" in iv):
            iv = {"mean": _walk(h, c.path), "ci95_low": None, "ci95_high": None,
                  "n_seeds": h.get("n_seeds", 1)}
        out[c.name] = iv
    accs = [r["acceptance_rate"] for r in rows if "error" not in r
            and r["cell"]["system"] == "ahasd"]
    return {"claims": out, "acceptance_rate": sum(accs) / len(accs) if accs else None,
            "errors": h["errors"]}


def _fmt(x):
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def _ci(iv):
    if iv.get("mean") is None:
        return "n/a"
    if iv.get("ci95_low") is None:
        return f"{iv['mean']:.2f}"
    return f"{iv['mean']:.2f} [{iv['ci95_low']:.2f}, {iv['ci95_high']:.2f}]"


def _describe(point):
    return ", ".join(f"{k} = {_fmt(v)}" for k, v in point.items()) or "the shipped point"


def sentence(entry):
    """One sentence for a claim's entry of ``claims.json``: "holds ..." or "cannot hold here
    because ..."."""
    label, paper = entry["label"], entry["paper"]
    ours = _ci(entry["ours_shipped"])
    if entry["holds_at_shipped"]:
        return (f"{label} (paper {paper:g}): holds at the shipped configuration (ours {ours}).")
    moves = [f"{axis} is {_fmt(lc['value'])} instead of {_fmt(lc['shipped'])}"
             for axis, lc in entry["least_change"].items() if lc is not None]
    if moves:
        return (f"{label} (paper {paper:g}; ours {ours} shipped): holds if "
                + ", or if ".join(moves) + " (the others shipped).")
    grid = entry.get("heatmap_holds")
    if grid:
        return (f"{label} (paper {paper:g}; ours {ours} shipped): holds only if "
                f"{_describe(grid['point'])} together (ours {_ci(grid['ours'])}); no single "
                f"change does.")
    best = entry["best"]
    bound = "ci95_high" if entry["higher_is_better"] else "ci95_low"
    reach = best["ours"].get(bound)
    reach = best["ours"].get("mean") if reach is None else reach
    side = "below" if entry["higher_is_better"] else "above"
    return (f"{label} (paper {paper:g}; ours {ours} shipped): cannot hold here because no point "
            f"of the grid reaches it: the best, {_describe(best['point'])}, gives "
            f"{_ci(best['ours'])}, whose {bound} {reach:.2f} is {side} {paper:g}.")


def _value_at(results, point, name):
    return results[run_key(point)]["claims"][name]


def claim_entry(claim, results, axes, heatmap, shipped):
    """A claim's entry of ``claims.json`` from every point's :func:`evaluate_point` result
    (``results``: :func:`run_key` of the point -> result)."""
    paper = paper_figure(claim)
    here = _value_at(results, {}, claim.name)
    entry: dict[str, Any] = {"label": claim.label, "paper": paper,
                             "higher_is_better": claim.higher, "ours_shipped": here,
                             "holds_at_shipped": holds(here, paper, claim.higher),
                             "least_change": {}}
    for name, values in axes.items():
        s = shipped[name]
        holding = {v: holds(_value_at(results, _norm({name: v}, shipped), claim.name), paper,
                            claim.higher) for v in values}
        lc = least_change(values, s, holding)
        if lc is not None:
            lc["ours"] = _value_at(results, _norm({name: lc["value"]}, shipped), claim.name)
        if entry["holds_at_shipped"]:
            lc = {"value": s, "shipped": s, "direction": None, "steps": 0,
                  "up": lc and lc["up"], "down": lc and lc["down"], "ours": here}
        entry["least_change"][name] = lc
    entry["heatmap_holds"] = _nearest_holding(claim, results, axes, heatmap, shipped, paper)
    entry["best"] = _best(claim, results, paper)
    entry["sentence"] = sentence(entry)
    return entry


def _nearest_holding(claim, results, axes, heatmap, shipped, paper):
    """The 2-D grid's holding point nearest the shipped one (fewest grid steps), or None."""
    x, y = heatmap
    best = None
    for vx in axes[x]:
        for vy in axes[y]:
            p = _norm({x: vx, y: vy}, shipped)
            iv = _value_at(results, p, claim.name)
            if not holds(iv, paper, claim.higher):
                continue
            steps = sum(abs(_pos(axes[a], v) - _pos(axes[a], shipped[a]))
                        for a, v in ((x, vx), (y, vy)))
            if best is None or steps < best[0]:
                best = (steps, {"point": p, "ours": iv})
    return best and best[1]


def _best(claim, results, paper):
    """The point whose interval comes nearest the paper's figure (highest upper bound, or
    lowest lower bound)."""
    def reach(iv):
        b = iv.get("ci95_high" if claim.higher else "ci95_low")
        b = iv.get("mean") if b is None else b
        return -math.inf if b is None else (b if claim.higher else -b)
    key, res = max(results.items(), key=lambda kv: reach(kv[1]["claims"][claim.name]))
    return {"point": res["point"], "ours": res["claims"][claim.name]}


def _pos(values, v):
    """``v``'s position on an axis of ``values`` in index units (interpolated between grid
    values, clipped at the ends)."""
    import numpy as np
    vs = sorted(values)
    return float(np.interp(v, vs, range(len(vs))))


def _settings(quick, axes, pairs, policies, tokens, seeds):
    base = QUICK if quick else DEFAULTS
    grid: dict[str, tuple] = {name: a.values for name, a in AXES.items()}
    if quick:
        grid.update(QUICK["axes"])
    grid.update(axes or {})
    return (grid, tuple(pairs or base.get("pairs", DEFAULTS["pairs"])),
            tuple(policies or DEFAULTS["policies"]), tokens or base["tokens"],
            seeds or base["seeds"])


def run_claims(out=None, *, claims=None, axes=None, heatmap=("acceptance", "pim.units"),
               quick=False, pairs=None, policies=None, tokens=None, seeds=None, seed=0,
               jobs=2, scheduler=None, overrides=(), progress=None, plots=True, max_files=None):
    """Run the grid; return the ``claims.json`` dict (and write it, ``summary.md`` and one
    ``heatmap_<claim>.png`` per claim into folder ``out`` when given).

    ``claims``: names of :data:`CLAIMS` (default all); ``axes``: axis name -> grid values
    replacing :data:`AXES`' (or :data:`QUICK`'s); ``heatmap``: the two axes of the 2-D grid;
    ``pairs``, ``policies``, ``tokens``, ``seeds`` (decoding seeds per cell, ``seed`` on): the
    cells of each point (default :data:`DEFAULTS`, or :data:`QUICK` with ``quick``).
    ``progress``: None, or ``progress(description, total)``, a context manager yielding a
    callable called once per finished run."""
    chosen = [CLAIMS[n] for n in (claims or CLAIMS)]
    grid, pairs, policies, tokens, n_seeds = _settings(quick, axes, pairs, policies, tokens,
                                                       seeds)
    if len(set(heatmap)) != 2 or any(h not in grid for h in heatmap):
        raise ConfigError(f"the heatmap needs two different axes of {', '.join(grid)}, not "
                          f"{', '.join(heatmap)}")
    cfg = load_config(overrides)
    shipped: dict[str, Any] = shipped_values(cfg)
    systems = sorted({s for c in chosen for s in c.systems}, key=lambda s: (s[0], s[1] or ""))
    seeds_ = seed_list(seed, n_seeds)
    points = plan_points(grid, heatmap, shipped)
    kw = {"pairs": pairs, "policies": policies, "seeds": seeds_, "tokens": tokens,
          "overrides": tuple(overrides), "max_files": max_files}
    per_point = [point_cells(p, systems, **kw) for p in points]
    unique: dict[str, dict] = {}
    for cells in per_point:
        for _, run in cells:
            unique.setdefault(run_key(run), run)
    runs = _run(list(unique.values()), jobs, scheduler, progress, len(points))
    by_key = dict(zip(unique, runs))
    results = {}
    for p, cells in zip(points, per_point):
        rows = [{**by_key[run_key(run)], "cell": row} for row, run in cells]
        res = evaluate_point(rows, chosen, pairs=pairs, policies=policies)
        results[run_key(p)] = {"point": p, **res}
    shipped["acceptance"] = results[run_key({})]["acceptance_rate"]
    doc = _document(chosen, results, grid, heatmap, shipped, cfg,
                    {"pairs": list(pairs), "policies": list(policies), "tokens": tokens,
                     "seeds": seeds_, "overrides": list(overrides), "runs": len(unique),
                     "points": len(points)})
    if out is not None:
        _write(out, doc, chosen, plots)
    return doc


def _run(cells, jobs, scheduler, progress, n_points):
    from ahasd.sim.system.parallel import run_cells
    if progress is None:
        return run_cells(cells, jobs=jobs, scheduler=scheduler)
    with progress(f"{n_points} points, {len(cells)} runs", len(cells)) as step:
        return run_cells(cells, jobs=jobs, scheduler=scheduler, progress=step)


RULE = ("a claim holds at a point when our 95 % interval reaches the paper's figure: "
        "ci95_high >= paper for a higher-is-better ratio, ci95_low <= paper for energy per token")


def _document(chosen, results, grid, heatmap, shipped, cfg, cells):
    entries = {c.name: claim_entry(c, results, grid, heatmap, shipped) for c in chosen}
    for name in entries:
        entries[name]["heatmap"] = f"heatmap_{name}.png"
    return {"rule": RULE,
            "grid": {"axes": {k: list(v) for k, v in grid.items()},
                     "shipped": shipped, "shipped_acceptance": "the golden pairs' decoding "
                     "(models.toml [acceptance]); its value is AHASD's measured acceptance",
                     "heatmap_axes": list(heatmap), **cells,
                     "results": [{"point": r["point"], "acceptance_rate": r["acceptance_rate"],
                                  "claims": r["claims"], "errors": r["errors"]}
                                 for r in results.values()]},
            "claims": entries}


def _write(out, doc, chosen, plots):
    out.mkdir(parents=True, exist_ok=True)
    (out / "claims.json").write_text(json.dumps(doc, indent=1, sort_keys=True,
                                                allow_nan=False) + "\n")
    (out / "summary.md").write_text(summary_markdown(doc))
    if plots:
        from ahasd.sim.system.plots import _plt, _save  # matplotlib lives there
        plt = _plt()
        for c in chosen:
            _save(plt, heatmap_figure(plt, heatmap_data(doc, c.name)), out,
                  doc["claims"][c.name]["heatmap"])


def summary_markdown(doc):
    """``summary.md``: one sentence per claim, then the table (ours at shipped, paper, holds,
    the least change per axis)."""
    g = doc["grid"]
    lines = ["# Where each of the paper's claims can hold", "",
             f"Rule: {doc['rule']}. Cells per point: pairs {', '.join(g['pairs'])}; policies "
             f"{', '.join(g['policies'])}; {g['tokens']} tokens; {len(g['seeds'])} decoding "
             f"seeds ({', '.join(map(str, g['seeds']))}); {g['points']} points, {g['runs']} "
             f"runs. Shipped: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in g["shipped"].items())
             + " (acceptance: the golden pairs, measured).", ""]
    lines += [f"* {e['sentence']}" for e in doc["claims"].values()]
    axes = list(g["axes"])
    lines += ["", "| claim | paper | ours (shipped) | holds | " + " | ".join(axes) + " |",
              "|---|---|---|---|" + "---|" * len(axes)]
    for e in doc["claims"].values():
        cols = [("-" if lc is None else _fmt(lc["value"])) for lc in
                (e["least_change"][a] for a in axes)]
        lines.append(f"| {e['label']} | {e['paper']:g} | {_ci(e['ours_shipped'])} | "
                     f"{'yes' if e['holds_at_shipped'] else 'no'} | " + " | ".join(cols) + " |")
    lines += ["", "A column gives the least change of that parameter (the others shipped) at "
              "which the claim holds, '-' where no grid value does."]
    return "\n".join(lines) + "\n"


def heatmap_data(doc, name):
    """What a claim's heatmap draws: the axes, their values, the matrix of our means and of
    "holds" (``[iy][ix]``), and the shipped point's position in index units."""
    g, e = doc["grid"], doc["claims"][name]
    x, y = g["heatmap_axes"]
    xs, ys = g["axes"][x], g["axes"][y]
    shipped = g["shipped"]
    by = {run_key(r["point"]): r["claims"][name] for r in g["results"]}
    means, hold = [], []
    for vy in ys:
        row_m, row_h = [], []
        for vx in xs:
            iv = by[run_key(_norm({x: vx, y: vy}, shipped))]
            row_m.append(iv["mean"])
            row_h.append(holds(iv, e["paper"], e["higher_is_better"]))
        means.append(row_m)
        hold.append(row_h)
    return {"claim": name, "label": e["label"], "paper": e["paper"], "x": x, "y": y,
            "x_values": xs, "y_values": ys, "means": means, "holds": hold,
            "shipped": (_pos(xs, shipped[x]), _pos(ys, shipped[y])),
            "shipped_values": (shipped[x], shipped[y])}


def heatmap_figure(plt, data):
    """One claim's heatmap: our mean per cell (annotated; "holds" cells outlined), the shipped
    point a star."""
    import numpy as np
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    m = np.array([[np.nan if v is None else v for v in row] for row in data["means"]], float)
    im = ax.imshow(m, origin="lower", aspect="auto", cmap="viridis")
    fig.colorbar(im, ax=ax, label="ours (x, mean over seeds)")
    for iy, row in enumerate(data["means"]):
        for ix, v in enumerate(row):
            ok = data["holds"][iy][ix]
            ax.text(ix, iy, "n/a" if v is None else f"{v:.2f}" + ("\nholds" if ok else ""),
                    ha="center", va="center", fontsize=8,
                    color="k" if ok else "w")
            if ok:
                ax.add_patch(plt.Rectangle((ix - 0.5, iy - 0.5), 1, 1, fill=False,
                                           ec="tab:red", lw=2))
    ax.set_xticks(range(len(data["x_values"])), [_fmt(v) for v in data["x_values"]])
    ax.set_yticks(range(len(data["y_values"])), [_fmt(v) for v in data["y_values"]])
    ax.set_xlabel(_axis_label(data["x"]))
    ax.set_ylabel(_axis_label(data["y"]))
    sx, sy = data["shipped"]
    ax.plot([sx], [sy], "*", color="tab:red", ms=16, mec="w", label="shipped")
    ax.set_title(f"{data['label']}: paper {data['paper']:g}x; star: shipped; others shipped",
                 fontsize=10)
    ax.tick_params(labelsize=9)
    return fig


def _axis_label(name):
    label = AXES[name].label if name in AXES else name
    if name == "acceptance":
        label = "per-token acceptance (fraction; synthetic decoding, star: golden pairs)"
    return label


def check_document(doc, where):
    """``doc`` if it is a ``claims.json`` (a dict with ``claims``, each entry with a
    ``sentence``); else a :class:`ConfigError` naming ``where``."""
    entries = doc.get("claims") if isinstance(doc, dict) else None
    if not isinstance(entries, dict) or not entries or not all(
            isinstance(e, dict) and isinstance(e.get("sentence"), str) for e in entries.values()):
        raise ConfigError(f"{where} is not the claims.json of `ahasd claims` (no claims with "
                          f"sentences)")
    return doc


def sentence_lines(doc):
    """The section of ``reproduce``'s ``summary.md`` that ``--claims FILE`` adds: one sentence
    per claim of a saved ``claims.json``, in :data:`CLAIMS` order."""
    g = doc.get("grid", {})
    order = [n for n in CLAIMS if n in doc["claims"]] + [n for n in doc["claims"]
                                                         if n not in CLAIMS]
    head = (f"From `ahasd claims` ({', '.join(g.get('pairs', []))}; "
            f"{', '.join(g.get('policies', []))}; {g.get('tokens', '?')} tokens; "
            f"{len(g.get('seeds', []))} seeds; {g.get('points', '?')} points). ")
    return (["", "## Where each claim can hold", "", head + doc.get("rule", "").capitalize()
             + ".", ""] + [f"* {doc['claims'][n]['sentence']}" for n in order])
