"""``ahasd specla bench``: SpecLA cost-model ratios beside the paper's, and end-to-end speedup.

Ratios (:mod:`ahasd.sim.specla.costs`) for the GDN-1.3B head shapes on the H100 and on the
project's PIM: sequential vs tree verification over tree sizes, replay vs factor commit over path
lengths, factor vs deferred commit. End to end: tokens/s of speculative decoding over
autoregressive decoding of the GDN-1.3B target with a GDN-0.4B draft (chain of ``DEPTH``), across
an explicit acceptance sweep and at the acceptance of golden-model traces (the numpy GDN target
with perturbed drafts, :mod:`ahasd.sim.specla.speculative`). Nothing is fitted to the paper.
"""

import json
from pathlib import Path

import numpy as np

from ahasd.sim.specla import costs
from ahasd.sim.specla.hardware import load_hardware
from ahasd.tables import print_table, print_text

__all__ = ["bench", "PAPER", "figures", "print_figures"]

#: The paper's reported figures (GDN-1.3B on an H100), shown beside ours.
PAPER = {"tree_verify": (1.80, 7.11), "factor_commit": (2.74, 4.28), "deferred": (1.15, 1.44),
         "e2e_max": 1.70, "pays_off_above": (0.70, 0.80)}
TREE_SIZES = (2, 4, 8, 16, 32)
PATH_LENGTHS = (1, 2, 4, 8, 16)
DEPTH = 4
MODES = ("replay", "factor", "deferred")
ALPHAS = tuple(round(a, 2) for a in np.arange(0.30, 0.99, 0.02))
TRACE_SCALES = (0.01, 0.045, 0.06, 0.09, 0.12, 0.25)


def _ratios(m, hw):
    b = hw.state_bytes
    tree = {n: costs.seq_verify(m, n, b).seconds(hw) / costs.tree_verify(m, n, b).seconds(hw)
            for n in TREE_SIZES}
    factor = {a: costs.replay_commit(m, a, b).seconds(hw)
              / costs.factor_commit(m, a, b, hw).seconds(hw) for a in PATH_LENGTHS}
    deferred = {a: (costs.factor_commit(m, a, b, hw) + costs.tree_verify(m, DEPTH + 1, b)).seconds(hw)
                / costs.fused_deferred(m, a, DEPTH + 1, b).seconds(hw) for a in PATH_LENGTHS}
    return {"tree_verify": tree, "factor_commit": factor, "deferred": deferred}


def _operations(m, hw, n=DEPTH + 1, a=DEPTH):
    """Cycles and bytes per layer of each operation, for a tree of ``n`` nodes and a path of
    ``a`` tokens."""
    b = hw.state_bytes
    ops = {f"sequential verify (N={n})": costs.seq_verify(m, n, b),
           f"tree verify (N={n})": costs.tree_verify(m, n, b),
           f"replay commit (A={a})": costs.replay_commit(m, a, b),
           f"factor commit (A={a})": costs.factor_commit(m, a, b, hw),
           "factor commit + tree verify": costs.factor_commit(m, a, b, hw)
           + costs.tree_verify(m, n, b),
           "fused deferred commit + verify": costs.fused_deferred(m, a, n, b)}
    return {name: {"cycles": c.cycles(hw), "bytes": c.bytes, "flops": c.vector_flops,
                   "launches": c.launches} for name, c in ops.items()}


def _crossing(alphas, values):
    """Smallest acceptance where the speedup reaches 1.0 (linear interpolation), or None."""
    for (a0, v0), (a1, v1) in zip(zip(alphas, values), zip(alphas[1:], values[1:])):
        if v0 < 1.0 <= v1:
            return a0 + (1.0 - v0) * (a1 - a0) / (v1 - v0)
    return alphas[0] if values and values[0] >= 1.0 else None


def golden_traces(n_new=80):
    """Acceptance of the numpy GDN target with drafts perturbed by ``TRACE_SCALES``."""
    from ahasd.sim.specla.model import GDNModel
    from ahasd.sim.specla.speculative import greedy, speculative_greedy
    target = GDNModel(seed=11)
    prompt = [3, 1, 4, 1, 5]
    want = greedy(target, prompt, n_new)
    out = []
    for scale in TRACE_SCALES:
        r = speculative_greedy(target, target.perturbed(scale, seed=7), prompt, n_new,
                               depth=DEPTH, mode="deferred")
        if r.tokens != want:
            raise RuntimeError(f"speculative output differs from greedy at scale {scale}")
        out.append({"draft_scale": scale, "acceptance": r.acceptance,
                    "mean_accepted": float(np.mean(r.accepted)), "rounds": r.rounds})
    return out


def figures():
    hw = load_hardware()
    target, draft = costs.GDN_1_3B, costs.GDN_0_4B
    result = {"target": target.__dict__ | {"params": target.params},
              "draft": draft.__dict__ | {"params": draft.params},
              "hardware": {k: h.__dict__ for k, h in hw.items()}, "paper": PAPER,
              "depth": DEPTH, "ratios": {}, "ranges": {}}
    for key, h in hw.items():
        r = _ratios(target, h)
        result["ratios"][key] = {name: {str(k): v for k, v in d.items()} for name, d in r.items()}
        result["ranges"][key] = {name: (min(d.values()), max(d.values())) for name, d in r.items()}
        result.setdefault("operations", {})[key] = _operations(target, h)
    gpu = hw["h100"]
    sweep = {mode: [costs.speedup(target, draft, gpu, mode=mode, alpha=a, depth=DEPTH)
                    for a in ALPHAS] for mode in MODES}
    result["sweep"] = {"alpha": list(ALPHAS), **sweep}
    result["crossing_alpha"] = {mode: _crossing(ALPHAS, sweep[mode]) for mode in MODES}
    result["max_speedup"] = {mode: max(sweep[mode]) for mode in MODES}
    traces = golden_traces()
    for t in traces:
        t["speedup"] = {mode: costs.speedup(target, draft, gpu, mode=mode, depth=DEPTH,
                                            mean_accepted=t["mean_accepted"]) for mode in MODES}
    result["traces"] = traces
    result["ar_token_s"] = costs.ar_token_cost(target, gpu).seconds(gpu)
    return result


def plot(result, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    alphas = result["sweep"]["alpha"]
    for mode, style in zip(MODES, ("--", "-.", "-")):
        line, = ax.plot(alphas, result["sweep"][mode], style, label=f"{mode} commit")
        cross = result["crossing_alpha"][mode]
        if cross is not None:
            ax.axvline(cross, color=line.get_color(), lw=0.6, alpha=0.6)
    ax.scatter([t["acceptance"] for t in result["traces"]],
               [t["speedup"]["deferred"] for t in result["traces"]], color="k", zorder=3,
               s=14, label="golden GDN traces (deferred)")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.axvspan(*PAPER["pays_off_above"], color="orange", alpha=0.12, label="paper: pays off")
    ax.set_xlabel("per-token acceptance")
    ax.set_ylabel("speedup over autoregressive")
    ax.set_title(f"GDN-1.3B target, GDN-0.4B draft, chain of {DEPTH}, H100 cost model")
    ax.legend(fontsize=8)
    path = out / "specla_speedup.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def bench(json_output=False, out="build/specla", echo=True):
    """Compute and plot; print a table (or, with ``json_output`` and ``echo``, the JSON)."""
    result = figures()
    result["plot"] = str(plot(result, out))
    if json_output:
        if echo:
            print(json.dumps(result, indent=2))
        return result
    print_figures(result)
    return result


def print_figures(result, console=None):
    """The SpecLA bench's three tables (``result`` as :func:`bench` returns it)."""
    over = {"tree_verify": f"tree size {TREE_SIZES[0]}-{TREE_SIZES[-1]}",
            "factor_commit": f"path {PATH_LENGTHS[0]}-{PATH_LENGTHS[-1]}",
            "deferred": f"path {PATH_LENGTHS[0]}-{PATH_LENGTHS[-1]}, tree {DEPTH + 1}"}
    rows = []
    for name in ("tree_verify", "factor_commit", "deferred"):
        cells = [f"{lo:.2f}-{hi:.2f}x" for lo, hi in (result["ranges"]["h100"][name], result["ranges"]["pim"][name])]
        lo, hi = PAPER[name]
        rows.append((name.replace("_", " "), over[name], *cells, f"{lo:.2f}-{hi:.2f}x"))
    print_table("SpecLA cost ratios, GDN-1.3B heads (9 x 200 x 400, 16 layers)",
                ("ratio", "swept over", "H100 [x]", "PIM [x]", "paper [x]"), rows, console=console,
                left=("ratio", "swept over"))
    rows = []
    for name in result["operations"]["h100"]:
        gpu, pim = result["operations"]["h100"][name], result["operations"]["pim"][name]
        rows.append((name, f"{gpu['cycles']:,.0f}", f"{gpu['bytes'] / 1e6:,.2f}", f"{pim['cycles']:,.0f}",
                     f"{pim['bytes'] / 1e6:,.2f}"))
    print_table("Per GDN-1.3B layer (9 heads): cycles and bytes moved",
                ("operation", "H100 [cycles]", "H100 [MB]", "PIM [cycles]", "PIM [MB]"), rows, console=console,
                left=("operation",))
    rows = [(f"{a:.2f}", *(f"{result['sweep'][m][i]:.3f}x" for m in MODES))
            for i, a in enumerate(result["sweep"]["alpha"]) if round(a * 100) % 10 == 0 or a >= 0.94]
    rows += [(f"{t['acceptance']:.2f} (trace)", *(f"{t['speedup'][m]:.3f}x" for m in MODES))
             for t in result["traces"]]
    rows.append(("breaks even at", *("never" if result["crossing_alpha"][m] is None
                                     else f"{result['crossing_alpha'][m]:.2f}" for m in MODES)))
    rows.append(("max (sweep)", *(f"{result['max_speedup'][m]:.3f}x" for m in MODES)))
    print_table(f"Speedup over autoregressive (H100, chain {DEPTH})",
                ("acceptance [ratio]", *(f"{m} [x]" for m in MODES)), rows, console=console,
                left=("acceptance [ratio]",))
    lo, hi = PAPER["pays_off_above"]
    print_text(f"paper: up to {PAPER['e2e_max']:.2f}x end to end, pays off above ~{lo:.0%}-{hi:.0%} acceptance; "
               f"plot: {result['plot']}", console=console)
