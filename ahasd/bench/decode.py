"""``ahasd bench decode``: golden decoding speed and each drafting policy's acceptance statistics.

Part 1 measures the pair's per-token agreement along target-sampled text (mean ``1 - TV``, draft
entropy percentiles, their correlation) and wall-clock tokens/s of the golden model on this machine: the n-gram pair's
target alone (autoregressive sampling), and speculative decoding, sampled and greedy. Part 2 runs
every policy on the fixed prompt set (:data:`ahasd.sim.decoding.golden.PROMPTS`) in three modes —
``sync`` (no look-ahead), ``ahead`` (look-ahead, up to 4 unverified batches) and ``ahead+EDC``
(look-ahead gated by the committed EDC) — and prints acceptance rate, accepted and emitted tokens per verification, mean
draft length, squashed batches and the speedup over autoregressive decoding in the engine's
abstract time (``verify_cost`` per target pass, ``draft_cost`` per drafted token). All figures are
measured; none is asserted.
"""

import time

import numpy as np

from ahasd.sim.decoding.policies import policy_names
from ahasd.tables import print_table, print_text

__all__ = ["bench", "MODES", "print_figures"]

#: mode name -> (max_unverified, EDC variant or None)
MODES = {"sync": (1, None), "ahead": (4, None), "ahead+EDC": (4, "committed")}


def _speed(pair, n_tokens):
    from ahasd.sim.decoding.golden import PROMPTS
    from ahasd.sim.decoding.lookahead import decode
    from ahasd.sim.decoding.policies import FixedPolicy
    prompt = pair.tokenizer.encode(PROMPTS[0])
    rng = np.random.default_rng(0)
    out = {}
    start = time.perf_counter()
    ctx = list(prompt)
    for _ in range(n_tokens):
        p = pair.target.next_dist(ctx)
        ctx.append(int(min(np.searchsorted(np.cumsum(p), rng.random()), len(p) - 1)))
    out["autoregressive_target_tokens_per_s"] = n_tokens / (time.perf_counter() - start)
    for name, greedy in (("speculative_sampled", False), ("speculative_greedy", True)):
        start = time.perf_counter()
        decode(pair.draft, pair.target, prompt, n_tokens=n_tokens, policy=FixedPolicy(k=4),
               rng=rng, greedy=greedy, max_unverified=4)
        out[f"{name}_tokens_per_s"] = n_tokens / (time.perf_counter() - start)
    return out


def _agreement(pair, n_tokens, seed=0):
    """Per-token draft/target agreement along text sampled from the target: mean 1 - TV (the
    probability that speculative sampling accepts a drafted token), draft entropy percentiles,
    and the correlation between the two (the signal EDC and the entropy policies use)."""
    from ahasd.sim.decoding.golden import PROMPTS
    from ahasd.sim.decoding.ngram import entropy_nats
    rng = np.random.default_rng(seed)
    acc, ent = [], []
    per_prompt = max(1, n_tokens // len(PROMPTS))
    for text in PROMPTS:
        ctx = pair.tokenizer.encode(text)
        for _ in range(per_prompt):
            p, q = pair.target.next_dist(ctx), pair.draft.next_dist(ctx)
            acc.append(float(np.minimum(p, q).sum()))
            ent.append(float(entropy_nats(q)))
            ctx.append(int(min(np.searchsorted(np.cumsum(p), rng.random()), len(p) - 1)))
    p10, p50, p90 = np.percentile(ent, [10, 50, 90])
    return {"positions": len(acc), "mean_accept_prob": float(np.mean(acc)),
            "entropy_p10": float(p10), "entropy_p50": float(p50), "entropy_p90": float(p90),
            "accept_entropy_correlation": float(np.corrcoef(acc, ent)[0, 1])}


def _policy_table(pair, prompts, n_tokens, seed=0):
    from ahasd.sim.decoding.golden import build_policy, make_edc
    from ahasd.sim.decoding.lookahead import decode
    rows = []
    verify_cost, draft_cost = 5.0, 1.0
    for mode, (max_unverified, edc_variant) in MODES.items():
        for name in policy_names():     # the registry's order
            policy = build_policy(name, pair, seed=seed, draft_cost=draft_cost,
                                  verify_cost=verify_cost)
            edc = make_edc(edc_variant)
            tot = dict(drafted=0, accepted=0, verifications=0, batches=0, squashed=0,
                       emitted=0, time=0.0, lengths=0)
            for i, text in enumerate(prompts):
                res = decode(pair.draft, pair.target, pair.tokenizer.encode(text),
                             n_tokens=n_tokens, policy=policy, edc=edc,
                             rng=np.random.default_rng([seed, i]), max_unverified=max_unverified,
                             draft_cost=draft_cost, verify_cost=verify_cost)
                drafts = [r for r in res.records[1:] if r["event"] == "draft"]
                tot["drafted"] += res.drafted_tokens
                tot["accepted"] += res.accepted_tokens
                tot["verifications"] += res.verifications
                tot["batches"] += len(drafts)
                tot["lengths"] += sum(len(r["tokens"]) for r in drafts)
                tot["squashed"] += res.squashed
                tot["emitted"] += len(res.output)
                tot["time"] += res.time
            rows.append({
                "mode": mode, "policy": name,
                "acceptance_rate": tot["accepted"] / tot["drafted"],
                "accepted_per_verification": tot["accepted"] / tot["verifications"],
                "tokens_per_verification": tot["emitted"] / tot["verifications"],
                "mean_draft_length": tot["lengths"] / tot["batches"],
                "squashed": tot["squashed"],
                "speedup_vs_autoregressive": tot["emitted"] * verify_cost / tot["time"],
            })
    return rows


def bench(json_output=False, quick=False):
    from ahasd.sim.decoding.golden import PROMPTS, load_models
    start = time.perf_counter()
    pair = load_models("ngram")
    figures = {"pair": pair.name, "vocab_size": pair.target.vocab_size,
               "load_s": time.perf_counter() - start}
    figures.update(_speed(pair, 200 if quick else 1000))
    figures["agreement"] = _agreement(pair, 400 if quick else 4000)
    prompts = PROMPTS[:2] if quick else PROMPTS
    n_tokens = 100 if quick else 400
    figures["prompts"] = len(prompts)
    figures["tokens_per_prompt"] = n_tokens
    figures["policies"] = _policy_table(pair, prompts, n_tokens)
    if not json_output:
        print_figures(figures)
    return figures


def print_figures(figures, console=None):
    """The decoding bench's tables and notes (``figures`` as :func:`bench` returns them)."""
    rows = [(key.replace("_", " "), f"{figures[key + '_tokens_per_s']:,.0f}")
            for key in ("autoregressive_target", "speculative_sampled", "speculative_greedy")]
    print_table(f"golden decoding speed, {figures['pair']} (V={figures['vocab_size']:,}), "
                f"load {figures['load_s']:.2f} s", ("path", "speed [tokens/s]"), rows, console=console,
                left=("path",))
    a = figures["agreement"]
    print_text(f"agreement over {a['positions']:,} target-sampled positions: mean accept probability (1 - TV) "
               f"{a['mean_accept_prob']:.3f}; draft entropy p10/p50/p90 {a['entropy_p10']:.2f}/"
               f"{a['entropy_p50']:.2f}/{a['entropy_p90']:.2f} nats; corr(accept, entropy) "
               f"{a['accept_entropy_correlation']:.2f}", console=console)
    rows = [(r["mode"], r["policy"], f"{r['acceptance_rate']:.3f}", f"{r['accepted_per_verification']:.2f}",
             f"{r['tokens_per_verification']:.2f}", f"{r['mean_draft_length']:.2f}", f"{r['squashed']:,}",
             f"{r['speedup_vs_autoregressive']:.2f}x")
            for r in figures["policies"]]
    print_table(f"drafting policies on {figures['prompts']:,} prompts x {figures['tokens_per_prompt']:,} tokens "
                "(verify_cost 5, draft_cost 1)",
                ("mode", "policy", "acc [ratio]", "acc/ver [tokens]", "tok/ver [tokens]", "len [tokens]",
                 "squash [batches]", "speedup [x]"), rows, console=console, left=("mode", "policy"))
    print_text("acc: accepted / drafted tokens; acc/ver, tok/ver: accepted and emitted tokens per "
               "verification; len: mean draft length; squash: batches discarded after a rejection; "
               "speedup: over autoregressive decoding in engine time", console=console)
