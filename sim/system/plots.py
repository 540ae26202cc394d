"""PNG plots of a reproduction grid (matplotlib, Agg backend; no display needed).

Offloaded cells (weights streamed over the host link) are hatched in every bar plot.
"""

import statistics

__all__ = ["write_plots"]


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


def write_plots(rows, out, *, pairs, policies, acceptance_pair, timeline_run=None):
    """Write the plots into folder ``out``; return the file names."""
    from ahasd.sim.system.report import GRID_SYSTEMS, key
    plt = _plt()
    idx = _idx(rows)
    steps = [key(s, a) for s, a in GRID_SYSTEMS]
    grid = (idx, pairs, policies, acceptance_pair)
    names = [_save(plt, _ablation_plot(plt, grid, steps), out, "ablation.png"),
             _save(plt, _specpim_plot(plt, grid), out, "ahasd_vs_specpim.png"),
             _save(plt, _idle_plot(plt, grid, steps), out, "idle.png")]
    # NPU / PIM activity timeline of one run
    if timeline_run is not None:
        names.append(write_timeline(timeline_run, out / "timeline.png"))
    return names


def _save(plt, fig, out, name):
    fig.tight_layout()
    fig.savefig(out / name, dpi=100)
    plt.close(fig)
    return name


def _ablation_plot(plt, grid, steps):
    """Ablation bars normalised to GPU-only (mean over pairs and policies)."""
    idx, pairs, policies, acceptance_pair = grid
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, metric, title in ((axes[0], "throughput_tok_s", "throughput"),
                              (axes[1], "tokens_per_mj", "energy efficiency")):
        means, hatch = [], []
        for s in steps:
            vals, off = [], False
            for p in pairs:
                for q in policies:
                    a, g = idx.get((acceptance_pair, p, q, s)), idx.get((acceptance_pair, p, q,
                                                                          "gpu"))
                    if a and g:
                        vals.append(a[metric] / g[metric])
                        off = off or bool(a["offloaded"]) or bool(g["offloaded"])
            means.append(statistics.fmean(vals) if vals else 0.0)
            hatch.append("//" if off else "")
        bars = ax.bar(range(len(steps)), means, color="tab:blue")
        for b, h in zip(bars, hatch):
            b.set_hatch(h)
        ax.set_xticks(range(len(steps)), steps, rotation=30, ha="right")
        ax.set_ylabel(f"{title} / GPU-only")
        ax.set_yscale("log")
        ax.set_title(f"{title} / GPU-only, mean (hatched: includes offload)", fontsize=10)
    return fig


def _specpim_plot(plt, grid):
    """AHASD vs SpecPIM per pair and policy."""
    idx, pairs, policies, acceptance_pair = grid
    fig, ax = plt.subplots(figsize=(10, 4))
    labels, vals, hatch = [], [], []
    for p in pairs:
        for q in policies:
            a, s = idx.get((acceptance_pair, p, q, "ahasd-tvc")), idx.get((acceptance_pair, p, q,
                                                                           "specpim"))
            if a and s:
                labels.append(f"{p}\n{q}")
                vals.append(a["throughput_tok_s"] / s["throughput_tok_s"])
                hatch.append("//" if a["offloaded"] or s["offloaded"] else "")
    bars = ax.bar(range(len(vals)), vals, color="tab:orange")
    for b, h in zip(bars, hatch):
        b.set_hatch(h)
    ax.set_xticks(range(len(vals)), labels, fontsize=7)
    ax.set_ylabel("AHASD / SpecPIM throughput")
    ax.set_title("AHASD vs SpecPIM-like (hatched: offload)")
    return fig


def _idle_plot(plt, grid, steps):
    """Idle time per device, one pair and policy per system."""
    idx, pairs, policies, acceptance_pair = grid
    fig, ax = plt.subplots(figsize=(10, 4))
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
    ax.set_xticks(xs, lab, fontsize=7)
    ax.set_ylabel("fraction of the run")
    ax.set_title(f"busy and idle time per device ({p0}, {q0})")
    ax.legend()
    return fig


def write_timeline(run, path):
    """Plot the device activity of one run (a :meth:`SimResult.as_dict` with its ``timeline``)
    into ``path`` (PNG); return the file name."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(11, 2.8))
    colours = {"draft": "tab:green", "verify": "tab:blue", "preverify": "tab:red"}
    devs = sorted({d for d, *_ in run["timeline"]})
    end = min(run["time_s"], 3.0)
    for dev, kind, t0, t1 in run["timeline"]:
        if t0 > end:
            continue
        ax.broken_barh([(t0, t1 - t0)], (devs.index(dev) - 0.4, 0.8),
                       color=colours.get(kind, "grey"))
    ax.set_yticks(range(len(devs)), devs)
    ax.set_xlim(0, end)
    ax.set_xlabel("time (s)")
    ax.set_title(f"activity of {run['label']} ({run['pair']}, "
                 f"{run['policy']}): draft green, verify blue, pre-verify red")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path.name
