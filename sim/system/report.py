"""The reproduction grid and its headlines, beside the paper's.

:func:`grid_cells` lists the cells: the paper's 3 pairs x 4 adaptive policies x every system and
AHASD ablation step (SpecPIM keeps its fixed draft length 8 in every policy column), on the
default golden pair, plus an acceptance sweep (each further golden pair, AdaEDL, the four
baselines and full AHASD). Every cell runs; a cell that needs more memory than its system has
runs with the offload model and is flagged (``offloaded`` non-empty). :func:`headlines` computes
every ratio the paper and the authors' documentation report, and :func:`summary_markdown` sets
them beside the paper's with ours/paper.

Seeds: the grid runs every cell over several decoding seeds (``cell["seed"]``). :func:`headlines`
computes every headline per seed, from that seed's runs alone (a ratio pairs the two systems'
runs of one seed), then reports each as its mean over the seeds, with the seeds' 95 %
t-interval beside it in ``h["intervals"]`` (the same shape, each number a
:func:`ahasd.sim.system.seeds.interval` dict). A "max" headline is so the mean over seeds of each
seed's grid maximum.
"""

import statistics
from typing import Any

from ahasd.sim.system.seeds import combine, excludes_one

__all__ = ["PAPER_PAIRS", "GRID_POLICIES", "GRID_SYSTEMS", "ACCEPTANCE_PAIRS", "PAPER",
           "grid_cells", "headlines", "summary_markdown", "key"]

PAPER_PAIRS = ("opt", "llama2", "palm")
GRID_POLICIES = ("specdecpp", "svip", "adaedl", "banditspec")
#: (system, ablation) in plot order
GRID_SYSTEMS = (("gpu", None), ("phone-gpu", None), ("specpim", None), ("npu-lpddr5", None),
                ("ahasd", "async"), ("ahasd", "aau"), ("ahasd", "edc"), ("ahasd", "tvc"))
#: The golden pairs: the first is every paper pair's default (models.toml's [acceptance] table,
#: tested equal), the others the acceptance sweep's sensitivity points (low 0.40, high 0.82).
ACCEPTANCE_PAIRS = ("ngram5-5b", "ngram3-5", "ngram5-5x")

#: The paper's headlines and the authors' reproducibility guide (see the module docstring).
PAPER: dict[str, Any] = {
    "throughput_vs_gpu_max": 4.2, "energy_vs_gpu_max": 5.6,
    "throughput_vs_specpim_max": 1.5, "energy_vs_specpim_mean": 1.24,
    "ablation_throughput": {"async": 2.2, "aau": 2.7, "edc": 3.4, "tvc": 3.8},
    "ablation_energy": {"async": 1.9, "aau": 2.6, "edc": 4.5, "tvc": 5.2},
    "ablation_energy_docs_tvc": 5.5,
    "throughput_vs_npu_lpddr5": 3.10, "energy_per_token_vs_npu_lpddr5": 0.48,
    "grid_throughput": {"opt": [3.6, 3.8, 4.0, 4.2], "llama2": [3.0, 3.3, 3.5, 3.7],
                        "palm": [2.6, 2.9, 3.1, 3.3]},
    "grid_energy": {"opt": [4.8, 5.1, 5.3, 5.6], "llama2": [4.1, 4.4, 4.7, 4.9],
                    "palm": [3.5, 3.8, 4.1, 4.3]},
}


def key(system, ablation):
    return system if system != "ahasd" else f"ahasd-{ablation}"


def grid_cells(*, pairs=PAPER_PAIRS, policies=GRID_POLICIES, tokens=1024, seed=0,
               acceptance_pairs=ACCEPTANCE_PAIRS, overrides=(), max_files=None):
    cells = []
    base = {"tokens": tokens, "seed": seed, "offload": True, "overrides": tuple(overrides)}
    if max_files is not None:
        base["max_files"] = max_files
    for pair in pairs:
        for policy in policies:
            for system, abl in GRID_SYSTEMS:
                cells.append({**base, "system": system, "pair": pair, "policy": policy,
                              "ablation": abl or "tvc", "acceptance_pair": acceptance_pairs[0]})
    for acc in acceptance_pairs[1:]:
        for pair in pairs:
            for system, abl in GRID_SYSTEMS[:4] + GRID_SYSTEMS[-1:]:
                cells.append({**base, "system": system, "pair": pair, "policy": "adaedl",
                              "ablation": abl or "tvc", "acceptance_pair": acc})
    return cells


def _cell_key(c):
    return key(c["system"], c["ablation"] if c["system"] == "ahasd" else None)


def _index(rows):
    out = {}
    for r in rows:
        c = r["cell"]
        sysk = key(c["system"], c["ablation"] if c["system"] == "ahasd" else None)
        out[(c["acceptance_pair"], c["pair"], c["policy"], sysk)] = r
    return out


def _ratio(idx, acc, pair, policy, a, b, metric):
    ra, rb = idx.get((acc, pair, policy, a)), idx.get((acc, pair, policy, b))
    if not ra or not rb or "error" in ra or "error" in rb:
        return None
    return ra[metric] / rb[metric]


def _stats(values):
    values = [v for v in values if v is not None]
    if not values:
        return {"mean": None, "max": None, "min": None}
    return {"mean": statistics.fmean(values), "max": max(values), "min": min(values)}


def headlines(rows, *, pairs=PAPER_PAIRS, policies=GRID_POLICIES,
              acceptance_pairs=ACCEPTANCE_PAIRS):
    """Every headline ratio (ours), as a nested dict of plain numbers: each the mean over the
    seeds of the rows (``row["cell"]["seed"]``) of the headline computed from one seed's rows;
    ``intervals`` the same tree with each number the seeds' :func:`~ahasd.sim.system.seeds.interval`
    dict; ``n_seeds`` and ``seeds``; ``tvc_saturated`` summed over every run, ``errors`` and
    ``offloaded_cells`` over every seed."""
    by_seed: dict[Any, list] = {}
    for r in rows:
        by_seed.setdefault(r["cell"].get("seed"), []).append(r)
    seeds = sorted(by_seed, key=lambda s: (s is None, s))
    per_seed = [_one_seed(by_seed[s], pairs, policies, acceptance_pairs) for s in seeds]
    h, ivs = combine(per_seed)
    ivs = ivs or {}
    ivs.pop("tvc_saturated", None)
    h["tvc_saturated"] = sum(x["tvc_saturated"] for x in per_seed)
    h.update(intervals=ivs, n_seeds=len(seeds), seeds=seeds)
    return h


def _one_seed(rows, pairs, policies, acceptance_pairs):
    """The headlines of one seed's rows."""
    idx = _index(rows)
    acc0 = acceptance_pairs[0]
    cells = [(p, q) for p in pairs for q in policies]

    def over(a, b, metric, acc=acc0, cs=cells):
        return _stats([_ratio(idx, acc, p, q, a, b, metric) for p, q in cs])

    thr, eff = "throughput_tok_s", "tokens_per_mj"
    h = {"acceptance_pair": acc0}
    for base in ("gpu", "phone-gpu", "specpim", "npu-lpddr5"):
        h[f"vs_{base}"] = {"throughput": over("ahasd-tvc", base, thr),
                           "energy_efficiency": over("ahasd-tvc", base, eff)}
    h["energy_per_token_vs_npu-lpddr5"] = (
        None if h["vs_npu-lpddr5"]["energy_efficiency"]["mean"] is None
        else 1 / h["vs_npu-lpddr5"]["energy_efficiency"]["mean"])
    for base in ("gpu", "phone-gpu"):
        h[f"ablation_vs_{base}"] = {
            abl: {"throughput": over(f"ahasd-{abl}", base, thr)["mean"],
                  "energy_efficiency": over(f"ahasd-{abl}", base, eff)["mean"]}
            for abl in ("async", "aau", "edc", "tvc")}
    h["ablation_llama2_adaedl_vs_gpu"] = {
        abl: {"throughput": _ratio(idx, acc0, "llama2", "adaedl", f"ahasd-{abl}", "gpu", thr),
              "energy_efficiency": _ratio(idx, acc0, "llama2", "adaedl", f"ahasd-{abl}", "gpu",
                                          eff)}
        for abl in ("async", "aau", "edc", "tvc")}
    for base in ("gpu", "npu-lpddr5"):
        h[f"grid_vs_{base}"] = {
            p: {"throughput": [_ratio(idx, acc0, p, q, "ahasd-tvc", base, thr) for q in policies],
                "energy_efficiency": [_ratio(idx, acc0, p, q, "ahasd-tvc", base, eff)
                                      for q in policies]} for p in pairs}
    h["per_acceptance"] = {}
    for acc in acceptance_pairs:
        cs = [(p, "adaedl") for p in pairs]
        accs = [idx[(acc, p, "adaedl", "ahasd-tvc")]["acceptance_rate"] for p in pairs
                if (acc, p, "adaedl", "ahasd-tvc") in idx]
        h["per_acceptance"][acc] = {
            "acceptance_rate": statistics.fmean(accs) if accs else None,
            **{f"vs_{b}": {"throughput": over("ahasd-tvc", b, thr, acc, cs)["mean"],
                           "energy_efficiency": over("ahasd-tvc", b, eff, acc, cs)["mean"]}
               for b in ("gpu", "phone-gpu", "specpim", "npu-lpddr5")}}
    h["offloaded_cells"] = sorted({f"{r['cell']['pair']}/{_cell_key(r['cell'])}"
                                   for r in rows if r.get("offloaded")})
    h["tvc_saturated"] = sum(r.get("tvc_saturated_records", 0)
                             + r.get("tvc_saturated_decisions", 0) for r in rows)
    h["errors"] = [r["error"] for r in rows if "error" in r]
    return h


def _f(x, nd=2):
    return "n/a" if x is None else f"{x:.{nd}f}"


def _iv(h, *path):
    """The interval dict of the headline at ``path`` (keys and list indices) of ``h``; a tree
    without intervals gives the value alone."""
    node: Any = h.get("intervals")
    for k in path:
        node = node[k] if isinstance(node, (dict, list)) and (
            isinstance(node, list) or k in node) else None
    if isinstance(node, dict) and "n_seeds" in node:
        return node
    value: Any = h
    for k in path:
        value = value[k]
    return {"mean": value, "ci95_low": None, "ci95_high": None, "n_seeds": 1}


def _ci(iv, nd=2, *, mark=False):
    """``mean [low, high]`` (the mean alone without an interval); with ``mark``, `` *`` when the
    interval excludes 1."""
    if iv["mean"] is None or iv["ci95_low"] is None:
        return _f(iv["mean"], nd)
    star = " *" if mark and excludes_one(iv) else ""
    return f"{iv['mean']:.{nd}f} [{iv['ci95_low']:.{nd}f}, {iv['ci95_high']:.{nd}f}]{star}"


def _line(name, iv, paper):
    ours = iv["mean"]
    ratio = "n/a" if ours is None or not paper else f"{ours / paper:.2f}"
    sig = "n/a" if iv["ci95_low"] is None else ("yes" if excludes_one(iv) else "no")
    return f"| {name} | {_ci(iv)} | {paper:g} | {ratio} | {sig} |"


def summary_markdown(h, *, policies=GRID_POLICIES):
    """The headline table (ours, paper, ours/paper, significant) plus the alternative-baseline
    figures; ``policies``: the grid's, in the order :func:`headlines` was given them."""
    lines = _paper_lines(h, policies) + _phone_gpu_lines(h, policies) + _acceptance_lines(h)
    lines += ["", "Cells run with the offload model (weights streamed over the host link): "
              + (", ".join(h["offloaded_cells"]) or "none") + ".",
              f"TVC saturated records and decisions over the grid: {h['tvc_saturated']}."]
    if h["errors"]:
        lines.append("Cells that failed: " + "; ".join(h["errors"]))
    return "\n".join(lines) + "\n"


def _seeds_sentence(h):
    n = h.get("n_seeds", 1)
    if n < 2:
        return "One decoding seed per cell: no intervals."
    seeds = h.get("seeds", [])
    return (f"Ours: the mean over {n} decoding seeds ({', '.join(map(str, seeds))}) of each "
            f"seed's figure, with the seeds' 95 % t-interval in brackets (t quantile "
            f"{_t(n):.3f}, {n - 1} degrees of freedom); a ratio is significant (\"yes\", or "
            f"\"*\") only when its interval excludes 1.")


def _t(n):
    from ahasd.sim.system.seeds import t_quantile
    return t_quantile(n - 1)


def _paper_lines(h, policies):
    """The headline table: ours beside the paper's."""
    P = PAPER
    lines = ["# AHASD reproduction: headlines beside the paper's", "",
             f"Golden pair `{h['acceptance_pair']}`; every ratio is full AHASD (or the ablation "
             "step) over the baseline, from simulated runs. \"(offload)\": a cell of that row "
             "streams weights over a host link (listed at the end). " + _seeds_sentence(h), "",
             "| headline | ours | paper | ours/paper | significant |", "|---|---|---|---|---|",
             _line("throughput vs GPU-only (max)", _iv(h, "vs_gpu", "throughput", "max"),
                   P["throughput_vs_gpu_max"]),
             _line("energy efficiency vs GPU-only (max)",
                   _iv(h, "vs_gpu", "energy_efficiency", "max"), P["energy_vs_gpu_max"]),
             _line("throughput vs SpecPIM (max)", _iv(h, "vs_specpim", "throughput", "max"),
                   P["throughput_vs_specpim_max"]),
             _line("energy efficiency vs SpecPIM (mean)",
                   _iv(h, "vs_specpim", "energy_efficiency", "mean"), P["energy_vs_specpim_mean"]),
             _line("throughput vs NPU+LPDDR5 (mean)",
                   _iv(h, "vs_npu-lpddr5", "throughput", "mean"), P["throughput_vs_npu_lpddr5"]),
             _line("energy per token vs NPU+LPDDR5 (mean)",
                   _iv(h, "energy_per_token_vs_npu-lpddr5"),
                   P["energy_per_token_vs_npu_lpddr5"])]
    for abl in ("async", "aau", "edc", "tvc"):
        lines.append(_line(f"ablation {abl}: throughput vs GPU-only (mean)",
                           _iv(h, "ablation_vs_gpu", abl, "throughput"),
                           P["ablation_throughput"][abl]))
        lines.append(_line(f"ablation {abl}: energy efficiency vs GPU-only (mean)",
                           _iv(h, "ablation_vs_gpu", abl, "energy_efficiency"),
                           P["ablation_energy"][abl]))
    lines.append(_line("ablation tvc (LLaMA2, AdaEDL): energy vs GPU-only (authors' docs)",
                       _iv(h, "ablation_llama2_adaedl_vs_gpu", "tvc", "energy_efficiency"),
                       P["ablation_energy_docs_tvc"]))
    off = set(h["offloaded_cells"])
    for pair, d in h["grid_vs_gpu"].items():
        mark = " (offload)" if {f"{pair}/gpu", f"{pair}/ahasd-tvc"} & off else ""
        for i, pol in enumerate(policies[:len(d["throughput"])]):
            j = GRID_POLICIES.index(pol)
            lines.append(_line(f"{pair} {pol}: throughput vs GPU-only{mark}",
                               _iv(h, "grid_vs_gpu", pair, "throughput", i),
                               P["grid_throughput"][pair][j]))
            lines.append(_line(f"{pair} {pol}: energy efficiency vs GPU-only{mark}",
                               _iv(h, "grid_vs_gpu", pair, "energy_efficiency", i),
                               P["grid_energy"][pair][j]))
    return lines


def _phone_gpu_lines(h, policies):
    """The same ratios against a GPU on the phone's LPDDR5, and full AHASD over NPU + LPDDR5 per
    pair and policy."""
    lines = ["", "## The phone-GPU baseline (the same ratios against a GPU on the phone's LPDDR5)",
             "", "| ratio | mean | max |", "|---|---|---|"]
    for metric, name in (("throughput", "throughput"), ("energy_efficiency", "energy efficiency")):
        lines.append(f"| {name} vs phone GPU | "
                     f"{_ci(_iv(h, 'vs_phone-gpu', metric, 'mean'), mark=True)} | "
                     f"{_ci(_iv(h, 'vs_phone-gpu', metric, 'max'), mark=True)} |")
    for abl in h["ablation_vs_phone-gpu"]:
        thr = _ci(_iv(h, "ablation_vs_phone-gpu", abl, "throughput"), mark=True)
        eff = _ci(_iv(h, "ablation_vs_phone-gpu", abl, "energy_efficiency"), mark=True)
        lines.append(f"| ablation {abl} vs phone GPU (throughput / energy, mean) | "
                     f"{thr} / {eff} | |")
    lines += ["", "## Full AHASD over NPU + LPDDR5, per pair and policy (throughput / energy "
              "efficiency)", "", "| pair | " + " | ".join(policies) + " |",
              "|---|" + "---|" * len(policies)]
    for pair, d in h.get("grid_vs_npu-lpddr5", {}).items():
        cols = [f"{_ci(_iv(h, 'grid_vs_npu-lpddr5', pair, 'throughput', i), mark=True)} / "
                f"{_ci(_iv(h, 'grid_vs_npu-lpddr5', pair, 'energy_efficiency', i), mark=True)}"
                for i in range(len(d["throughput"]))]
        lines.append(f"| {pair} | " + " | ".join(cols) + " |")
    return lines


def _acceptance_lines(h):
    """Full AHASD over each baseline per golden pair (acceptance level)."""
    lines = ["", "## Per acceptance level (AdaEDL, mean over pairs; full AHASD over each "
             "baseline)",
             "", "| golden pair | acceptance | vs GPU thr/energy | vs phone GPU | vs SpecPIM | "
             "vs NPU+LPDDR5 |", "|---|---|---|---|---|---|"]
    for acc in h["per_acceptance"]:
        cols = [f"{_ci(_iv(h, 'per_acceptance', acc, f'vs_{b}', 'throughput'), mark=True)} / "
                f"{_ci(_iv(h, 'per_acceptance', acc, f'vs_{b}', 'energy_efficiency'), mark=True)}"
                for b in ("gpu", "phone-gpu", "specpim", "npu-lpddr5")]
        lines.append(f"| {acc} | {_ci(_iv(h, 'per_acceptance', acc, 'acceptance_rate'), 3)} | "
                     + " | ".join(cols) + " |")
    return lines
