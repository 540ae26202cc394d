"""PNG plots of a reproduction grid (matplotlib, Agg backend; no display needed).

Every plot is drawn from a *data* function (plain numbers, tested on their own) by a *figure*
function; docs/system-simulator.md ("Reading the plots") says how to read each one.

* ``round_breakdown.png``: per pair and system, each device's time per verification round by
  what it spent it on (``breakdown_s`` of the run over its verifications).
* ``vs_npu_lpddr5.png``: AHASD over NPU + LPDDR5 per pair and policy (throughput and energy per
  token), with 95 % intervals when the rows carry them (:func:`ratio_interval`), the paper's
  3.10x and 0.48x as lines.
* ``energy_breakdown.png``: energy per token by term, per pair and system; the paper's AHASD
  (0.48 x our NPU + LPDDR5) as a marker.
* ``sensitivity.png``: AHASD / NPU + LPDDR5 throughput against the PIM's MAC rate
  (:func:`sensitivity_cells`) and against acceptance (the grid's golden pairs), shipped marked.
* ``timeline.png``: the device activity of one run, whole or a window, with accepts, rejects
  and squashes marked.
* ``ablation.png``: each AHASD step over the step before and over ``async``, linear.
* ``ahasd_vs_specpim.png``, ``idle.png``: as before.

Hatching marks a bar whose ratio compares an offloaded run with one that is not (weights
streamed over the host link on one side only); nowhere else.
"""

import math
import statistics

__all__ = ["write_plots", "figures", "write_timeline", "timeline_figure", "parse_window",
           "sensitivity_cells", "ratio_interval",
           "round_breakdown_data", "vs_npu_data", "energy_breakdown_data", "sensitivity_data",
           "ablation_data", "timeline_data", "SENSITIVITY_PIM", "TICK_PT"]

TICK_PT = 9          #: tick label size (points): legible at 100 % zoom at the plots' 100 dpi
#: the PIM-rate points of ``sensitivity.png`` beside the shipped configuration (``HALF``: half
#: the configured value): half the RTL's
#: efficiency (51 G MAC/s on 16 units), 32 units (204 G MAC/s) and 64 units (256 G MAC/s, the
#: internal bandwidth's cap); every other figure as configured
SENSITIVITY_PIM = ("pim.efficiency_raw=HALF", "pim.units=32", "pim.units=64")
#: t quantiles (0.975) for 1..30 degrees of freedom; beyond, the normal's 1.96
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
_STEPS = ("async", "aau", "edc", "tvc")
_PARTS = {  # breakdown_s keys: (legend label, colour), stacking order
    "verify_s": ("verify", "tab:blue"), "stall_memory_s": ("memory stall", "tab:purple"),
    "wait_redraft_s": ("wait: redraft after a rejection", "tab:red"),
    "wait_edc_s": ("wait: after an EDC stop", "tab:orange"), "other_s": ("other idle", "0.6"),
    "draft_useful_s": ("drafting, kept", "tab:green"),
    "draft_squashed_s": ("drafting, squashed", "tab:olive"),
    "preverify_s": ("pre-verification", "tab:cyan"), "idle_s": ("idle", "0.85")}


_NAMES = {"ahasd-async": "async", "ahasd-aau": "+AAU", "ahasd-edc": "+EDC",
          "ahasd-tvc": "AHASD", "npu-lpddr5": "NPU+\nLPDDR5", "phone-gpu": "phone GPU",
          "gpu": "GPU", "specpim": "SpecPIM"}
_DEV_COLOURS = {"npu": "tab:blue", "pim": "tab:green", "lpddr5": "tab:cyan", "gpu": "tab:gray",
                "phone-gpu": "tab:purple", "hbm-pim": "tab:olive"}


def _name(system_key):
    return _NAMES.get(system_key, system_key)


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _idx(rows):
    from ahasd.sim.system.report import key
    out = {}
    for r in rows:
        c = r["cell"]
        if "error" in r:
            continue
        k = key(c["system"], c["ablation"] if c["system"] == "ahasd" else None)
        out[(c["acceptance_pair"], c["pair"], c["policy"], k)] = r
    return out


def sensitivity_cells(pair, *, tokens, seed, overrides=(), max_files=None):
    """The AHASD cells of ``sensitivity.png``'s PIM-rate axis (AdaEDL, ``pair``, each of
    :data:`SENSITIVITY_PIM` after ``overrides``); the shipped point and the baseline are the
    grid's own cells."""
    from ahasd.sim.system.config import load_config
    half = repr(load_config(overrides).pim.efficiency_raw / 2)
    base = {"system": "ahasd", "pair": pair, "policy": "adaedl", "tokens": tokens, "seed": seed,
            "offload": True, **({"max_files": max_files} if max_files else {})}
    return [{**base, "overrides": (*overrides, extra.replace("HALF", half))}
            for extra in SENSITIVITY_PIM]


def figures(rows, *, pairs, policies, acceptance_pair, sensitivity_rows=()):
    """The grid's figures by file name (not saved; the caller closes them)."""
    from ahasd.sim.system.report import GRID_SYSTEMS, key
    plt = _plt()
    idx = _idx(rows)
    steps = [key(s, a) for s, a in GRID_SYSTEMS]
    grid = (idx, pairs, policies, acceptance_pair)
    policy0 = "adaedl" if "adaedl" in policies else policies[0]
    return {"ablation.png": _ablation_plot(plt, ablation_data(grid)),
            "ahasd_vs_specpim.png": _specpim_plot(plt, grid),
            "idle.png": _idle_plot(plt, grid, steps),
            "round_breakdown.png": _round_plot(plt, round_breakdown_data(idx, pairs, policy0,
                                                                         acceptance_pair, steps)),
            "vs_npu_lpddr5.png": _vs_npu_plot(plt, vs_npu_data(grid)),
            "energy_breakdown.png": _energy_plot(plt, energy_breakdown_data(
                idx, pairs, policy0, acceptance_pair, steps)),
            "sensitivity.png": _sensitivity_plot(plt, sensitivity_data(
                idx, pairs, acceptance_pair, sensitivity_rows))}


def write_plots(rows, out, *, pairs, policies, acceptance_pair, timeline_run=None,
                window=None, sensitivity_rows=()):
    """Write the plots into folder ``out``; return the file names.

    ``timeline_run``: a run with its timeline (``timeline.png``, the ``window`` ``(start,
    end)`` in seconds or the whole run); ``sensitivity_rows``: the results of
    :func:`sensitivity_cells` (without them ``sensitivity.png`` has the acceptance axis only).
    """
    plt = _plt()
    figs = figures(rows, pairs=pairs, policies=policies, acceptance_pair=acceptance_pair,
                   sensitivity_rows=sensitivity_rows)
    names = [_save(plt, fig, out, name) for name, fig in figs.items()]
    if timeline_run is not None:
        names.append(write_timeline(timeline_run, out / "timeline.png", window=window))
    return names


def _style(fig):
    """Tick text at :data:`TICK_PT` on every axis; the layout tightened."""
    for ax in fig.axes:
        ax.tick_params(labelsize=TICK_PT)
    fig.tight_layout()
    return fig


def _save(plt, fig, out, name):
    _style(fig)
    fig.savefig(out / name, dpi=100)
    plt.close(fig)
    return name


def _offload(*rs):
    return {bool(r["offloaded"]) for r in rs}


def _mixed(*rs):
    """The ratio of these runs compares an offloaded run with one that is not."""
    return len(_offload(*rs)) > 1


def _hatch(bars, mixed, ax):
    """Hatch the bars of ratios over a mixed offload (see the module docstring)."""
    for b, m in zip(bars, mixed):
        if m:
            b.set_hatch("//")
    if any(mixed):
        ax.text(0.99, 0.98, "hatched: one side offloaded", transform=ax.transAxes, ha="right",
                va="top", fontsize=8)


def _t975(n):
    return _T975[n - 2] if 2 <= n <= 31 else 1.96


def _per_seed(row, metric):
    """A row's per-seed values of ``metric``: ``per_seed[metric]`` (with ``seeds``) or
    ``<metric>_seeds``; None if it has neither."""
    values = (row.get("per_seed") or {}).get(metric)
    return values if values is not None else row.get(f"{metric}_seeds")


def _bounds(row, metric):
    """A row's 95 % bounds of ``metric``: ``intervals[metric]``'s ``ci95_low`` / ``ci95_high``
    or ``<metric>_ci95_low`` / ``<metric>_ci95_high``; None if it has neither (or they are
    None)."""
    iv = (row.get("intervals") or {}).get(metric)
    lo, hi = (iv.get("ci95_low"), iv.get("ci95_high")) if isinstance(iv, dict) else (
        row.get(f"{metric}_ci95_low"), row.get(f"{metric}_ci95_high"))
    return None if lo is None or hi is None else (lo, hi)


def ratio_interval(a, b, metric):
    """The 95 % interval of ``a[metric] / b[metric]`` from what the rows carry, or None.

    Rows with per-seed values (``per_seed[metric]``, or ``<metric>_seeds``; equal lengths,
    and equal ``seeds`` where the rows list them) give the t-interval of the per-seed ratios,
    seed by seed; rows with bounds (``intervals[metric]`` holding ``ci95_low`` and
    ``ci95_high``, or ``<metric>_ci95_low`` and ``<metric>_ci95_high``) give
    ``[a_low / b_high, a_high / b_low]`` (wider than the ratio's own interval: the two runs'
    noise is not paired); rows with neither, None.
    """
    sa, sb = _per_seed(a, metric), _per_seed(b, metric)
    if sa and sb and len(sa) == len(sb) >= 2 and a.get("seeds") == b.get("seeds"):
        ratios = [x / y for x, y in zip(sa, sb)]
        m, h = statistics.fmean(ratios), _t975(len(ratios)) * statistics.stdev(ratios)
        return m - h / math.sqrt(len(ratios)), m + h / math.sqrt(len(ratios))
    ba, bb = _bounds(a, metric), _bounds(b, metric)
    if ba and bb:
        return ba[0] / bb[1], ba[1] / bb[0]
    return None


# -- ablation ------------------------------------------------------------------------------

def ablation_data(grid):
    """Per metric and step after ``async``: the mean over pairs and policies of the step over the
    step before (``prev``) and over ``async`` (``async``), each cell's ratio, whether a ratio
    mixes offload, and the paper's (its ablation over GPU-only, divided the same way)."""
    from ahasd.sim.system.report import PAPER
    idx, pairs, policies, acc = grid
    out = {}
    for metric, paper in (("throughput_tok_s", PAPER["ablation_throughput"]),
                          ("tokens_per_mj", PAPER["ablation_energy"])):
        rows = []
        for i, step in enumerate(_STEPS[1:], 1):
            for ref_name, ref in (("prev", _STEPS[i - 1]), ("async", "async")):
                cells, mixed = [], False
                for p in pairs:
                    for q in policies:
                        a = idx.get((acc, p, q, f"ahasd-{step}"))
                        b = idx.get((acc, p, q, f"ahasd-{ref}"))
                        if a and b:
                            cells.append(a[metric] / b[metric])
                            mixed = mixed or _mixed(a, b)
                rows.append({"step": step, "over": ref_name, "reference": ref,
                             "mean": statistics.fmean(cells) if cells else math.nan,
                             "cells": cells, "mixed": mixed, "paper": paper[step] / paper[ref]})
        out[metric] = rows
    return out


def _ablation_plot(plt, data):
    """Grouped bars: each step over the step before and over async; cells as dots; the paper's
    as diamonds; 1.0 dashed."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (metric, title) in zip(axes, (("throughput_tok_s", "throughput"),
                                          ("tokens_per_mj", "energy efficiency (tokens/mJ)"))):
        rows = data[metric]
        steps = list(dict.fromkeys(r["step"] for r in rows))
        for j, (over, colour) in enumerate((("prev", "tab:blue"), ("async", "tab:orange"))):
            sel = [r for r in rows if r["over"] == over]
            xs = [steps.index(r["step"]) + (j - 0.5) * 0.38 for r in sel]
            bars = ax.bar(xs, [r["mean"] for r in sel], width=0.38, color=colour,
                          label="over the step before" if over == "prev" else "over async")
            _hatch(bars, [r["mixed"] for r in sel], ax)
            for x, r in zip(xs, sel):
                ax.plot([x] * len(r["cells"]), r["cells"], ".", color="k", ms=3)
            ax.plot(xs, [r["paper"] for r in sel], "D", color="tab:red", ms=6,
                    label="paper" if j == 0 else None)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xticks(range(len(steps)), [f"+{s.upper()}" for s in steps])
        ax.set_xlabel("AHASD step")
        ax.set_ylabel(f"{title} ratio (x)")
        ax.set_title(f"{title}: step / step before, step / async\n(bars: mean over pairs and "
                     f"policies; dots: cells)", fontsize=10)
        ax.legend(fontsize=8, loc="lower left")
    return fig


# -- AHASD vs SpecPIM, idle (unchanged plots) ----------------------------------------------

def _specpim_plot(plt, grid):
    """AHASD vs SpecPIM per pair and policy."""
    idx, pairs, policies, acceptance_pair = grid
    fig, ax = plt.subplots(figsize=(10, 4))
    labels, vals, mixed = [], [], []
    for p in pairs:
        for q in policies:
            a, s = idx.get((acceptance_pair, p, q, "ahasd-tvc")), idx.get((acceptance_pair, p, q,
                                                                           "specpim"))
            if a and s:
                labels.append(f"{p}\n{q}")
                vals.append(a["throughput_tok_s"] / s["throughput_tok_s"])
                mixed.append(_mixed(a, s))
    bars = ax.bar(range(len(vals)), vals, color="tab:orange")
    _hatch(bars, mixed, ax)
    ax.set_xticks(range(len(vals)), labels)
    ax.set_ylabel("AHASD / SpecPIM throughput (x)")
    ax.set_title("AHASD vs SpecPIM-like")
    return fig


def _idle_plot(plt, grid, steps):
    """Idle time per device, one pair and policy per system."""
    idx, pairs, policies, acceptance_pair = grid
    fig, ax = plt.subplots(figsize=(11, 4.5))
    p0, q0 = pairs[0], "adaedl" if "adaedl" in policies else policies[0]
    busy, idle, lab = [], [], []
    for s in steps:
        r = idx.get((acceptance_pair, p0, q0, s))
        if not r:
            continue
        for d, v in r["devices"].items():
            lab.append(f"{s}\n{d}")
            busy.append(v["busy_s"] / r["time_s"])
            idle.append(v["idle_s"] / r["time_s"])
    xs = range(len(lab))
    ax.bar(xs, busy, label="busy")
    ax.bar(xs, idle, bottom=busy, label="idle")
    ax.set_xticks(xs, lab, rotation=60, ha="right")
    ax.set_ylabel("share of the run's time (fraction)")
    ax.set_title(f"busy and idle time per device ({p0}, {q0}; round_breakdown.png says why)")
    ax.legend()
    return fig


# -- round breakdown -----------------------------------------------------------------------

def round_breakdown_data(idx, pairs, policy, acc, steps):
    """Per pair: ``[(system key, device, {part: ms per verification round})]`` in plot order
    (a run's ``breakdown_s`` over its ``verifications``)."""
    out = {}
    for p in pairs:
        bars = []
        for s in steps:
            r = idx.get((acc, p, policy, s))
            if not r or not r.get("verifications") or "breakdown_s" not in r:
                continue
            for dev, parts in r["breakdown_s"].items():
                bars.append((s, dev, {k: v / r["verifications"] * 1e3 for k, v in parts.items()}))
        out[p] = bars
    return out


def _round_plot(plt, data):
    """One panel per pair: a stacked bar per system and device; the legend above."""
    fig, axes = plt.subplots(len(data), 1, figsize=(13, 3.6 * len(data) + 0.6), squeeze=False)
    seen = {}
    for ax, (pair, bars) in zip(axes[:, 0], data.items()):
        top = 0.0
        for x, (_, _, parts) in enumerate(bars):
            bottom = 0.0
            for k in _PARTS:
                if k in parts:
                    lab, col = _PARTS[k]
                    seen[k] = ax.bar(x, parts[k], bottom=bottom, color=col, label=lab,
                                     edgecolor="k", linewidth=0.3)
                    bottom += parts[k]
            top = max(top, bottom)
        ax.set_xticks(range(len(bars)), [f"{_name(s)}\n{d}" for s, d, _ in bars])
        ax.set_ylabel("time per verification round (ms)")
        ax.set_ylim(0, top * 1.06 or 1.0)
        ax.set_title(f"{pair}: each device's time per verification round, by what it does",
                     fontsize=10)
    keys = [k for k in _PARTS if k in seen]
    axes[0, 0].legend([seen[k] for k in keys], [_PARTS[k][0] for k in keys], fontsize=8,
                      loc="lower center", bbox_to_anchor=(0.5, 1.12), ncol=5)
    return fig


# -- AHASD over NPU + LPDDR5 ---------------------------------------------------------------

def vs_npu_data(grid):
    """Per pair and policy: AHASD's throughput and energy per token over NPU + LPDDR5's, each
    with its 95 % interval or None (:func:`ratio_interval`; energy per token is the inverse of
    ``tokens_per_mj``'s ratio), and whether the two mix offload."""
    idx, pairs, policies, acc = grid
    out = []
    for p in pairs:
        for q in policies:
            a, b = idx.get((acc, p, q, "ahasd-tvc")), idx.get((acc, p, q, "npu-lpddr5"))
            if not (a and b):
                continue
            ci = ratio_interval(b, a, "tokens_per_mj")     # energy per token: b's eff / a's
            out.append({"pair": p, "policy": q,
                        "throughput": a["throughput_tok_s"] / b["throughput_tok_s"],
                        "throughput_ci": ratio_interval(a, b, "throughput_tok_s"),
                        "energy": b["tokens_per_mj"] / a["tokens_per_mj"],
                        "energy_ci": ci, "mixed": _mixed(a, b)})
    return out


def _vs_npu_plot(plt, data):
    from ahasd.sim.system.report import PAPER
    fig, axes = plt.subplots(2, 1, figsize=(12, 7.5))
    xs = range(len(data))
    for ax, what, paper, title in (
            (axes[0], "throughput", PAPER["throughput_vs_npu_lpddr5"], "throughput"),
            (axes[1], "energy", PAPER["energy_per_token_vs_npu_lpddr5"], "energy per token")):
        vals = [d[what] for d in data]
        bars = ax.bar(xs, vals, color="tab:blue" if what == "throughput" else "tab:green")
        _hatch(bars, [d["mixed"] for d in data], ax)
        cis = [d[f"{what}_ci"] for d in data]
        if any(c is not None for c in cis):
            lo = [v - c[0] if c else 0.0 for v, c in zip(vals, cis)]
            hi = [c[1] - v if c else 0.0 for v, c in zip(vals, cis)]
            ax.errorbar(xs, vals, yerr=[lo, hi], fmt="none", ecolor="k", capsize=3,
                        label="95 % interval")
        ax.axhline(paper, color="tab:red", ls="--", label=f"paper {paper:g}x")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(xs, [f"{d['pair']}\n{d['policy']}" for d in data])
        ax.set_ylabel(f"AHASD / NPU + LPDDR5 {title} (x)")
        ax.set_title(f"{title}: AHASD over NPU + LPDDR5"
                     + ("" if any(c is not None for c in cis) else " (one seed: no intervals)"),
                     fontsize=10)
        ax.legend(fontsize=8)
    return fig


# -- energy breakdown ----------------------------------------------------------------------

def _term_label(term):
    """``dynamic_npu`` -> ``dynamic: NPU``; ``background_lpddr5`` -> ``background: LPDDR5``."""
    kind, _, dev = term.partition("_")
    return f"{kind}: {dev.upper()}" if dev else term


def energy_breakdown_data(idx, pairs, policy, acc, steps):
    """Per pair: ``[(system key, {term: mJ per token})]`` from each run's
    ``energy_breakdown_mj``, and the paper's AHASD energy per token (0.48 x our NPU + LPDDR5's)
    or None."""
    from ahasd.sim.system.report import PAPER
    out = {}
    for p in pairs:
        bars = []
        for s in steps:
            r = idx.get((acc, p, policy, s))
            if r:
                bars.append((s, {k: v / r["tokens"] for k, v in r["energy_breakdown_mj"].items()}))
        base = dict(bars).get("npu-lpddr5")
        paper = None if base is None else PAPER["energy_per_token_vs_npu_lpddr5"] * sum(
            base.values())
        out[p] = {"bars": bars, "paper_ahasd": paper}
    return out


def _term_style(term):
    """A term's colour and transparency: one colour per device, background paler."""
    kind, _, dev = term.partition("_")
    if not dev:
        return "k", 1.0
    return _DEV_COLOURS.get(dev, "tab:brown"), 1.0 if kind == "dynamic" else 0.4


def _energy_plot(plt, data):
    fig, axes = plt.subplots(1, len(data), figsize=(4.2 * len(data) + 2.5, 5), squeeze=False)
    terms = sorted({t for d in data.values() for _, parts in d["bars"] for t in parts},
                   key=lambda t: (t == "controller", not t.startswith("dynamic"), t))
    handles = {}
    for ax, (pair, d) in zip(axes[0], data.items()):
        names = [s for s, _ in d["bars"]]
        top = d["paper_ahasd"] or 0.0
        for x, (_, parts) in enumerate(d["bars"]):
            top = max(top, sum(parts.values()))
            bottom = 0.0
            for t in terms:
                if t in parts:
                    col, alpha = _term_style(t)
                    handles[t] = ax.bar(x, parts[t], bottom=bottom, color=col, alpha=alpha,
                                        edgecolor="k", linewidth=0.3, label=_term_label(t))
                    bottom += parts[t]
        if d["paper_ahasd"] is not None and "ahasd-tvc" in names:
            handles["paper"] = ax.plot(names.index("ahasd-tvc"), d["paper_ahasd"], "D",
                                       color="tab:red", ms=8, ls="none")[0]
        ax.set_xticks(range(len(names)), [_name(n).replace("\n", "") for n in names],
                      rotation=60, ha="right")
        ax.set_ylabel("energy per token (mJ)")
        ax.set_ylim(0, top * 1.06 or 1.0)
        ax.set_title(f"{pair}: energy per token by term", fontsize=10)
    keys = [t for t in terms if t in handles] + (["paper"] if "paper" in handles else [])
    axes[0, -1].legend([handles[k] for k in keys],
                       [_term_label(k) if k != "paper" else "paper: 0.48 x NPU+LPDDR5"
                        for k in keys], loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return fig


# -- sensitivity ---------------------------------------------------------------------------

def sensitivity_data(idx, pairs, acc, sensitivity_rows=()):
    """AHASD / NPU + LPDDR5 throughput (AdaEDL): ``pim``: ``[(G MAC/s, ratio, shipped)]`` (the
    rate the units reach: ``derived``'s MAC rate under its ``pim_bytes_per_s`` cap) on
    ``pairs[0]`` (the grid's shipped cell and ``sensitivity_rows``); ``acceptance``: per pair
    ``[(AHASD's acceptance rate, ratio, shipped)]`` over the grid's golden pairs."""
    p0 = pairs[0]
    base = idx.get((acc, p0, "adaedl", "npu-lpddr5"))
    pim = []
    shipped = idx.get((acc, p0, "adaedl", "ahasd-tvc"))
    for r, is_shipped in [(shipped, True)] + [(r, False) for r in sensitivity_rows]:
        if r and base and "error" not in r:
            der = r["derived"]
            pim.append((min(der["pim_mac_per_s"], der.get("pim_bytes_per_s", math.inf)) / 1e9,
                        r["throughput_tok_s"] / base["throughput_tok_s"], is_shipped))
    accs = sorted({k[0] for k in idx})
    acceptance = {}
    for p in pairs:
        pts = []
        for a in accs:
            r, b = idx.get((a, p, "adaedl", "ahasd-tvc")), idx.get((a, p, "adaedl", "npu-lpddr5"))
            if r and b:
                pts.append((r["acceptance_rate"], r["throughput_tok_s"] / b["throughput_tok_s"],
                            a == acc))
        acceptance[p] = sorted(pts)
    return {"pair": p0, "pim": sorted(pim), "acceptance": acceptance}


def _sensitivity_plot(plt, data):
    from ahasd.sim.system.report import PAPER
    paper = PAPER["throughput_vs_npu_lpddr5"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax = axes[0]
    if data["pim"]:
        xs, ys, sh = zip(*data["pim"])
        ax.plot(xs, ys, "o-", color="tab:blue", label=f"{data['pair']}, AdaEDL")
        ax.plot([x for x, s in zip(xs, sh) if s], [y for y, s in zip(ys, sh) if s], "*",
                color="k", ms=14, label="shipped")
    ax.set_xlabel("PIM rate under the internal bandwidth cap (G MAC/s)")
    ax.set_title("against the PIM's rate (others shipped)", fontsize=10)
    ax = axes[1]
    for p, pts in data["acceptance"].items():
        if pts:
            xs, ys, sh = zip(*pts)
            ax.plot(xs, ys, "o-", label=p)
            ax.plot([x for x, s in zip(xs, sh) if s], [y for y, s in zip(ys, sh) if s], "*",
                    color="k", ms=14)
    ax.plot([], [], "*", color="k", ms=10, label="shipped")
    ax.set_xlabel("acceptance rate (AHASD, AdaEDL; golden pairs)")
    ax.set_title("against acceptance (others shipped)", fontsize=10)
    for ax in axes:
        ax.axhline(paper, color="tab:red", ls="--", label=f"paper {paper:g}x")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_ylabel("AHASD / NPU + LPDDR5 throughput (x)")
        ax.legend(fontsize=8)
    return fig


# -- timeline ------------------------------------------------------------------------------

def timeline_data(run, window=None):
    """The spans and marks of ``run`` inside ``window`` (``(start, end)`` seconds, or None for
    the whole run): ``{"start", "end", "whole", "devices", "spans", "marks"}``; spans clipped to
    the window. A bad window is a one-line ValueError naming it."""
    t_end = run["time_s"]
    if window is None:
        start, end = 0.0, t_end
    else:
        start, end = window
        if not (0 <= start < end) or start >= t_end:
            raise ValueError(f"timeline window {start:g}:{end:g} s is not inside the run "
                             f"(0:{t_end:.6g} s; START >= 0, START < END, START < the run's end)")
        end = min(end, t_end)
    spans = [(d, k, max(a, start), min(b, end)) for d, k, a, b in run["timeline"]
             if b >= start and a <= end]
    marks = [(d, w, t) for d, w, t in run.get("timeline_marks", []) if start <= t <= end]
    devs = sorted({d for d, *_ in run["timeline"]} | {d for d, *_ in marks})
    return {"start": start, "end": end, "whole": window is None or (start == 0 and end == t_end),
            "devices": devs, "spans": spans, "marks": marks}


def parse_window(text):
    """``"START:END"`` (seconds) -> ``(start, end)``; a one-line ValueError naming the text."""
    a, sep, b = text.partition(":")
    try:
        if not sep:
            raise ValueError
        start, end = float(a), float(b)
    except ValueError:
        raise ValueError(f"--window takes START:END in seconds (e.g. 10:13), not {text!r}") \
            from None
    if not (0 <= start < end) or not math.isfinite(end):
        raise ValueError(f"--window {text}: needs 0 <= START < END")
    return start, end


def write_timeline(run, path, *, window=None):
    """Plot the device activity of one run (a :meth:`SimResult.as_dict` with its ``timeline``)
    into ``path`` (PNG), whole or the ``window`` ``(start, end)`` in seconds; return the file
    name."""
    plt = _plt()
    _save(plt, timeline_figure(plt, run, window), path.parent, path.name)
    return path.name


def timeline_figure(plt, run, window=None):
    """The figure of :func:`write_timeline` (not saved)."""
    d = timeline_data(run, window)
    fig, ax = plt.subplots(figsize=(12, 3.4))
    colours = {"draft": "tab:green", "verify": "tab:blue", "preverify": "tab:cyan"}
    devs = d["devices"]
    for kind, col in colours.items():
        for dev in devs:
            mine = [(a, b - a) for dv, k, a, b in d["spans"] if k == kind and dv == dev]
            if mine:
                ax.broken_barh(mine, (devs.index(dev) - 0.35, 0.7), facecolor=col,
                               edgecolor="white", linewidth=0.4)
        ax.plot([], [], "s", color=col, label=kind)
    # marks beside their device's row, on the side away from the other row
    styles = {"accept": ("^", "tab:green"), "reject": ("x", "tab:red"), "squash": ("v", "k")}
    for what, (m, col) in styles.items():
        pts = [(t, devs.index(dev) + (0.48 if devs.index(dev) else -0.48))
               for dev, w, t in d["marks"] if w == what]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], m, color=col, ms=5, ls="none",
                label=what)
    ax.set_yticks(range(len(devs)), devs)
    ax.set_ylim(-0.7, len(devs) - 0.3)
    ax.set_xlim(d["start"], d["end"])
    ax.set_xlabel("time (s)")
    span = ("whole run" if d["whole"] else f"window {d['start']:g}-{d['end']:g} s of "
            f"{run['time_s']:.1f} s")
    ax.set_title(f"activity of {run['label']} ({run['pair']}, {run['policy']}), {span}",
                 fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return fig
