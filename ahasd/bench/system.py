"""``ahasd bench system``: simulated tokens per second of wall time, and each golden pair's
acceptance and entropy-acceptance correlation.

Speed: full AHASD and GPU-only on OPT with AdaEDL, simulated tokens per second of wall time
(and per CPU second of this process, the figure on an otherwise idle core). The language models
are loaded first, so the figure is the warm simulator's; the process's cache of n-gram
distributions (:class:`ahasd.sim.system.sources.DistCache`) is emptied before each timed run,
so no run profits from another's. Golden pairs: a synchronous fixed-length-4 decoding per pair
(:func:`ahasd.sim.decoding.lookahead.decode`), acceptance = accepted over drafted tokens, and the
Pearson correlation between each drafted token's draft entropy and its exact acceptance
probability ``min(1, p/q)``. Printed, never asserted.
"""

import time

from ahasd.tables import print_table

__all__ = ["bench", "pair_stats", "print_figures"]


def pair_stats(name, *, tokens=512, prompts=2, max_files=None):
    import numpy as np

    from ahasd.sim.decoding import golden
    from ahasd.sim.decoding.lookahead import decode
    from ahasd.sim.decoding.pairs import load_named_pair
    from ahasd.sim.decoding.policies import FixedPolicy
    from ahasd.sim.traces.decoding import verified_batches
    pair = load_named_pair(name, max_files=max_files)
    drafted = accepted = 0
    h, a = [], []
    for i, text in enumerate(golden.PROMPTS[:prompts]):
        r = decode(pair.draft, pair.target, pair.tokenizer.encode(text), n_tokens=tokens,
                   policy=FixedPolicy(k=4), rng=np.random.default_rng([7, i]), max_unverified=1)
        drafted += r.drafted_tokens
        accepted += r.accepted_tokens
        for b in verified_batches(r.records):
            h += b["entropy"]
            a += [min(1.0, p / q) for p, q in zip(b["p"], b["q"])]
    return {"acceptance_rate": accepted / drafted,
            "entropy_acceptance_correlation": float(np.corrcoef(h, a)[0, 1]),
            "mean_draft_entropy_nats": float(np.mean(h))}


def bench(json_output=False, quick=False):
    from ahasd.sim.decoding.pairs import PAIRS
    from ahasd.sim.system.runner import simulate
    from ahasd.sim.system.sources import DISTS
    tokens = 256 if quick else 1024
    simulate("gpu", "opt", "adaedl", tokens=16)          # warm: models loaded
    figures = {"tokens": tokens, "runs": {}}
    for system in ("ahasd", "gpu"):
        DISTS.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        r = simulate(system, "opt", "adaedl", tokens=tokens)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        figures["runs"][system] = {"wall_s": wall, "cpu_s": cpu,
                                   "simulated_tok_per_wall_s": tokens / wall,
                                   "simulated_tok_per_cpu_s": tokens / cpu if cpu > 0 else
                                   float("inf"),
                                   "throughput_tok_s": r.throughput_tok_s}
    figures["pairs"] = {name: pair_stats(name, tokens=128 if quick else 512) for name in PAIRS}
    if not json_output:
        print_figures(figures)
    return figures


def print_figures(figures, console=None):
    """The system bench's two tables (``figures`` as :func:`bench` returns them)."""
    rows = [(system, f"{f['simulated_tok_per_wall_s']:,.0f}", f"{f['wall_s']:.2f}",
             f"{f['simulated_tok_per_cpu_s']:,.0f}") for system, f in figures["runs"].items()]
    print_table(f"system simulator, OPT, AdaEDL, {figures['tokens']:,} tokens",
                ("system", "speed [sim. tokens/wall s]", "wall [s]", "speed [sim. tokens/CPU s]"), rows,
                console=console, left=("system",))
    rows = [(name, f"{f['acceptance_rate']:.3f}", f"{f['entropy_acceptance_correlation']:.3f}",
             f"{f['mean_draft_entropy_nats']:.2f}") for name, f in figures["pairs"].items()]
    print_table("golden pairs (fixed length 4, synchronous)",
                ("pair", "acceptance [ratio]", "corr(H, accept) [ratio]", "mean H [nats]"), rows, console=console,
                left=("pair",))
