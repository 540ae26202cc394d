"""``ahasd decode``: run golden speculative decoding and record a trace (docs/trace-format.md).

The output file is created (under a temporary name) before decoding starts, so an unwritable
``--out`` fails at once, and renamed at the end, so a failure or Ctrl-C leaves no truncated trace.
``--out -`` writes the trace to standard output (the summary then goes to standard error).
The policies are those of the registry (:func:`ahasd.sim.decoding.policies.policy_names`).
"""

import sys

from ahasd.args import COST_MAX, LEN_MAX, TOKENS_MAX, integer, number, seed
from ahasd.errors import CliError
from ahasd.files import output_file
from ahasd.progress import progress
from ahasd.sim.blocks.edc import VARIANTS as EDC_VARIANTS
from ahasd.sim.decoding.policies import policy_names
from ahasd.sim.traces.decoding import MAX_UNVERIFIED

__all__ = ["register", "run"]


def register(sub):
    p = sub.add_parser(
        "decode", help="run golden speculative decoding and record a trace",
        description="Decode --tokens tokens with a draft/target model pair, a drafting policy and "
                    "optional EDC-gated look-ahead drafting; write the run as a JSON-lines trace.")
    p.add_argument("--pair", choices=["ngram", "hf"], default="ngram",
                   help="model pair: the n-gram pair on the Python stdlib, or local HF models")
    p.add_argument("--draft-model", help="local transformers model folder (--pair hf)")
    p.add_argument("--target-model", help="local transformers model folder (--pair hf)")
    p.add_argument("--policy", choices=policy_names(), default="fixed")
    p.add_argument("--edc", choices=EDC_VARIANTS + ("off",), default="off",
                   help="gate look-ahead drafting with the EDC golden model (default off)")
    p.add_argument("--tokens", type=integer(1, TOKENS_MAX), default=256,
                   help=f"tokens to generate, 1..{TOKENS_MAX:,} (default 256)")
    p.add_argument("--seed", type=seed, default=0, help="random seed, 0..2**64-1")
    p.add_argument("--greedy", action="store_true", help="greedy decoding instead of sampling")
    p.add_argument("--prompt", default=None,
                   help="prompt text (default: the first prompt of the fixed prompt set)")
    p.add_argument("--max-unverified", type=integer(1, MAX_UNVERIFIED), default=4,
                   help=f"most batches drafted but not yet verified, 1..{MAX_UNVERIFIED} "
                        f"(1 = no look-ahead)")
    p.add_argument("--draft-cost", type=number(0, COST_MAX, low_open=True), default=1.0,
                   help=f"time per drafted token, in (0, {COST_MAX:g}]")
    p.add_argument("--verify-cost", type=number(0, COST_MAX, low_open=True), default=5.0,
                   help=f"time per target pass, in (0, {COST_MAX:g}]")
    p.add_argument("--min-len", type=integer(1, LEN_MAX), default=1,
                   help=f"shortest draft batch, 1..{LEN_MAX}")
    p.add_argument("--max-len", type=integer(1, LEN_MAX), default=8,
                   help=f"longest draft batch, 1..{LEN_MAX}")
    p.add_argument("--out", required=True, metavar="FILE",
                   help="trace file to write (- for standard output)")
    p.add_argument("--show", action="store_true", help="print the decoded text")
    p.set_defaults(func=run)


def run(args):
    import numpy as np

    from ahasd.sim.decoding import golden
    from ahasd.sim.decoding.lookahead import decode
    from ahasd.sim.traces import decoding as trace

    to_stdout = args.out == "-"
    if to_stdout and args.show:
        raise CliError("--show prints to standard output, which --out - already uses for the "
                       "trace")
    report = sys.stderr if to_stdout else sys.stdout
    with output_file(args.out) as out:
        try:
            pair = golden.load_models(args.pair, draft_model=args.draft_model,
                                      target_model=args.target_model)
            policy = golden.build_policy(args.policy, pair, seed=args.seed,
                                         draft_cost=args.draft_cost,
                                         verify_cost=args.verify_cost,
                                         min_len=args.min_len, max_len=args.max_len)
            prompt_text = golden.PROMPTS[0] if args.prompt is None else args.prompt
            with progress(f"decoding {args.tokens} tokens", args.tokens) as update:
                result = decode(pair.draft, pair.target, pair.tokenizer.encode(prompt_text),
                                n_tokens=args.tokens, policy=policy,
                                rng=np.random.default_rng(args.seed), greedy=args.greedy,
                                edc=golden.make_edc(args.edc),
                                max_unverified=args.max_unverified,
                                draft_cost=args.draft_cost, verify_cost=args.verify_cost,
                                meta={"pair": pair.name, "edc": args.edc, "seed": args.seed},
                                progress=update)
        except ImportError as e:
            raise CliError(str(e)) from None
        trace.write(result.records, out)
    if args.show:
        print(pair.tokenizer.decode(result.output))
    autoregressive = args.tokens * args.verify_cost
    where = "standard output" if to_stdout else args.out
    # `batches` counts the batches started, some squashed before their draft event was written;
    # `trace stats` counts draft events ("batches drafted"): both are printed, each named
    drafted = sum(rec.get("event") == "draft" for rec in result.records)
    print(f"{len(result.output)} tokens, {result.batches} batches started ({drafted} drafted, "
          f"as trace stats counts), {result.verifications} "
          f"verifications, {result.squashed} squashed; acceptance {result.acceptance_rate:.3f}, "
          f"{result.tokens_per_verification:.2f} tokens/verification; time {result.time:g} "
          f"(autoregressive {autoregressive:g}, speedup {autoregressive / result.time:.2f}x); "
          f"trace {where}", file=report)
    return 0
