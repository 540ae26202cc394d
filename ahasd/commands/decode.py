"""``ahasd decode``: run golden speculative decoding and record a trace (docs/trace-format.md)."""

from pathlib import Path

__all__ = ["register", "run"]

POLICY_NAMES = ["fixed", "specdecpp", "svip", "adaedl", "banditspec"]


def register(sub):
    p = sub.add_parser(
        "decode", help="run golden speculative decoding and record a trace",
        description="Decode --tokens tokens with a draft/target model pair, a drafting policy and "
                    "optional EDC-gated look-ahead drafting; write the run as a JSON-lines trace.")
    p.add_argument("--pair", choices=["ngram", "hf"], default="ngram",
                   help="model pair: the n-gram pair on the Python stdlib, or local HF models")
    p.add_argument("--draft-model", help="local transformers model folder (--pair hf)")
    p.add_argument("--target-model", help="local transformers model folder (--pair hf)")
    p.add_argument("--policy", choices=POLICY_NAMES, default="fixed")
    p.add_argument("--edc", choices=["committed", "anchor", "off"], default="off",
                   help="gate look-ahead drafting with the EDC golden model (default off)")
    p.add_argument("--tokens", type=int, default=256, help="tokens to generate")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--greedy", action="store_true", help="greedy decoding instead of sampling")
    p.add_argument("--prompt", default=None,
                   help="prompt text (default: the first prompt of the fixed prompt set)")
    p.add_argument("--max-unverified", type=int, default=4,
                   help="most batches drafted but not yet verified (1 = no look-ahead)")
    p.add_argument("--draft-cost", type=float, default=1.0, help="time per drafted token")
    p.add_argument("--verify-cost", type=float, default=5.0, help="time per target pass")
    p.add_argument("--min-len", type=int, default=1, help="shortest draft batch")
    p.add_argument("--max-len", type=int, default=8, help="longest draft batch")
    p.add_argument("--out", type=Path, required=True, metavar="FILE", help="trace file to write")
    p.add_argument("--show", action="store_true", help="print the decoded text")
    p.set_defaults(func=run)


def run(args):
    import numpy as np

    from ahasd.cli import CliError
    from ahasd.sim.decoding import golden
    from ahasd.sim.traces import decoding as trace
    from ahasd.sim.decoding.lookahead import decode

    if args.tokens < 1:
        raise CliError(f"--tokens must be a positive integer, not {args.tokens}")
    try:
        pair = golden.load_models(args.pair, draft_model=args.draft_model,
                                  target_model=args.target_model)
        policy = golden.build_policy(args.policy, pair, seed=args.seed,
                                     draft_cost=args.draft_cost, verify_cost=args.verify_cost,
                                     min_len=args.min_len, max_len=args.max_len)
        prompt_text = golden.PROMPTS[0] if args.prompt is None else args.prompt
        result = decode(pair.draft, pair.target, pair.tokenizer.encode(prompt_text),
                        n_tokens=args.tokens, policy=policy,
                        rng=np.random.default_rng(args.seed), greedy=args.greedy,
                        edc=golden.make_edc(args.edc), max_unverified=args.max_unverified,
                        draft_cost=args.draft_cost, verify_cost=args.verify_cost,
                        meta={"pair": pair.name, "edc": args.edc, "seed": args.seed})
    except (ValueError, ImportError) as e:
        raise CliError(str(e)) from None
    trace.write(result.records, args.out)
    if args.show:
        print(pair.tokenizer.decode(result.output))
    autoregressive = args.tokens * args.verify_cost
    print(f"{len(result.output)} tokens, {result.batches} batches, {result.verifications} "
          f"verifications, {result.squashed} squashed; acceptance {result.acceptance_rate:.3f}, "
          f"{result.tokens_per_verification:.2f} tokens/verification; time {result.time:g} "
          f"(autoregressive {autoregressive:g}, speedup {autoregressive / result.time:.2f}x); "
          f"trace {args.out}")
    return 0
