"""``ahasd simulate``: one system on one model pair and policy: throughput, energy, idle time.

The names the options take come from the registries: model pairs from ``models.toml``
(:func:`ahasd.sim.system.config.pair_names`), policies from
:func:`ahasd.sim.decoding.policies.policy_names`, systems and ablation steps from
:mod:`ahasd.sim.system.systems`, EDC variants from :data:`ahasd.sim.blocks.edc.VARIANTS` and
golden pairs from :func:`ahasd.sim.decoding.pairs.pair_choices` (the default: the model pair's, in
``models.toml``).

``--seeds N`` runs the configuration with the decoding seeds ``--seed``, ``--seed`` + 1, ...
(:mod:`ahasd.sim.system.seeds`): the JSON keeps every key of one run, each number the mean over
the seeds, and adds ``n_seeds`` (1 on a single run), ``seeds`` and ``intervals`` (the same keys,
each number a dict of ``mean``, ``ci95_low``, ``ci95_high`` and ``n_seeds``: the 95 % t-interval
over the seeds; no bounds with one seed).
"""

import json
import sys

from ahasd.args import TOKENS_MAX, check_choice, integer
from ahasd.errors import CliError
from ahasd.files import os_reason
from ahasd.sim.blocks.edc import VARIANTS as EDC_VARIANTS
from ahasd.sim.decoding.pairs import pair_choices
from ahasd.sim.decoding.policies import policy_names
from ahasd.sim.system.config import load_config, pair_names
from ahasd.sim.system.seeds import aggregate_runs, seed_list
from ahasd.sim.system.systems import ablation_names, system_names

__all__ = ["register", "run"]

#: the keys of --json that the issue fixes, first, in this order
JSON_KEYS = ["tokens", "time_s", "throughput_tok_s", "energy_mj", "tokens_per_mj",
             "acceptance_rate", "mean_accepted_len", "devices", "bound_tok_s", "config"]


def register(sub):
    p = sub.add_parser(
        "simulate", help="simulate one system (AHASD or a baseline) on one model pair",
        description="Run the event-driven system simulator: golden speculative decoding timed "
                    "on the configured hardware (TOML shipped with the package, --set to "
                    "override).")
    p.add_argument("--pair", default="opt", help=f"model pair: {', '.join(pair_names())}")
    p.add_argument("--policy", default=None,
                   help=f"default adaedl (with --trace: the trace's own); drafting policy: "
                        f"{', '.join(policy_names())}")
    p.add_argument("--system", default="ahasd",
                   help=f"execution model: {', '.join(system_names())}")
    p.add_argument("--ablation", default="tvc",
                   help=f"AHASD step: {_or(ablation_names())} (full AHASD, default)")
    p.add_argument("--edc", default="committed", help=f"EDC variant: {_or(EDC_VARIANTS)}")
    p.add_argument("--tokens", type=integer(1, TOKENS_MAX), default=None,
                   help=f"tokens to generate, 1..{TOKENS_MAX:,} (default 1024; with --trace, "
                        f"the trace's length)")
    p.add_argument("--acceptance-pair", default=None, metavar="NAME",
                   help=f"golden language-model pair: {', '.join(pair_choices())} (default: the "
                        f"model pair's, from models.toml; low is the 0.40 sensitivity point, "
                        f"high 0.82)")
    p.add_argument("--trace", default=None, metavar="FILE",
                   help="replay a recorded decoding trace instead of live golden decoding")
    p.add_argument("--offload", action="store_true",
                   help="stream what does not fit in memory over the host link")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE", help="override a configuration figure")
    p.add_argument("--config", default=None, metavar="FILE",
                   help="a platform TOML to use instead of the shipped one (same keys)")
    p.add_argument("--seed", type=int, default=None,
                   help="decoding seed (default the configuration's run.seed, 0); with --seeds "
                        "the first")
    p.add_argument("--seeds", type=integer(1, 100), default=1, metavar="N",
                   help="run N decoding seeds and report means with 95 %% t-intervals "
                        "(default 1)")
    p.add_argument("--rtl", action="store_true",
                   help="take the EDC and TVC decisions from the Verilated controller top "
                        "(needs Verilator; AHASD with --ablation edc or tvc, --edc committed)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def _or(names):
    """``a, b, c or d``."""
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def run(args):
    from ahasd.sim.system.runner import simulate

    check_choice("pair", args.pair, pair_names())
    if args.policy is not None:
        check_choice("policy", args.policy, policy_names())
    check_choice("system", args.system, system_names())
    check_choice("ablation", args.ablation, ablation_names())
    check_choice("edc", args.edc, EDC_VARIANTS)
    if args.acceptance_pair is not None:
        check_choice("acceptance-pair", args.acceptance_pair, pair_choices())
    if args.tokens is not None and args.tokens < 1:
        raise CliError(f"--tokens must be a positive integer, not {args.tokens}")
    if args.rtl:
        _check_rtl(args)
    if args.seeds > 1 and args.trace is not None:
        raise CliError(f"--seeds {args.seeds}: a --trace replays one recorded decoding, which "
                       f"no seed changes (drop --seeds)")
    trace = None
    try:
        if args.trace is not None:
            from ahasd.sim.traces.decoding import read
            try:
                trace = read(args.trace)
            except OSError as e:
                raise CliError(f"cannot read trace {args.trace}: {os_reason(e)}") from None
            _check_trace_options(args, trace[0])
        cfg = load_config(args.overrides, platform_path=args.config)
        seeds = seed_list(cfg.run.seed if args.seed is None else args.seed, args.seeds)
        made = []
        factory = _rtl_factory(cfg, made) if args.rtl else None
        try:
            results = [simulate(args.system, args.pair, args.policy or "adaedl",
                                ablation=args.ablation, edc=args.edc, cfg=cfg, tokens=args.tokens,
                                acceptance_pair=args.acceptance_pair, trace=trace,
                                offload=args.offload, overrides=args.overrides, seed=s,
                                deciders_factory=factory) for s in seeds]
        finally:
            for deciders in made:
                deciders.close()
    except ValueError as e:  # ConfigError, CapacityError, TraceError, bad names
        msg = str(e)
        if args.trace is not None and "line" in msg:
            msg = f"{args.trace}: {msg}"
        raise CliError(msg) from None
    r = results[0]
    d = aggregate_runs([x.as_dict() for x in results], seeds)
    if args.json:
        ordered = {k: d[k] for k in JSON_KEYS}
        ordered.update({k: v for k, v in d.items() if k not in ordered})
        print(json.dumps(ordered, indent=2))
        return 0
    if len(seeds) > 1:
        _print_seeds(d)
        return 0
    print(f"{r.label} on {r.pair} ({r.policy}, golden pair {r.acceptance_pair}): {r.tokens} tokens "
          f"in {r.time_s:.3f} s = {r.throughput_tok_s:.2f} tok/s (memory-roofline bound "
          f"{r.bound_tok_s:.2f}); {r.energy_mj:.1f} mJ = {r.tokens_per_mj:.4f} tok/mJ")
    print(f"acceptance {r.acceptance_rate:.3f}, {r.mean_accepted_len:.2f} accepted per "
          f"verification, mean draft length {r.mean_draft_len:.2f}; {r.squashed} batches "
          f"squashed, {r.edc_suppressed} EDC stops, {r.preverifies} pre-verifications "
          f"({r.preverify_rejects} found a rejection)")
    if r.config["deciders"] == "rtl":
        print("  EDC and TVC decisions from the Verilated controller top (--rtl)")
    for name, dv in r.devices.items():
        print(f"  {name:10s} busy {dv['busy_s']:.3f} s, idle {dv['idle_s']:.3f} s")
    for note in r.offloaded:
        print(f"  offload: {note}")
    return 0


def _print_seeds(d):
    """The text report of several seeds: means with their 95 % intervals."""
    iv = d["intervals"]

    def ci(key, nd):
        lo, hi = iv[key]["ci95_low"], iv[key]["ci95_high"]
        return f"{d[key]:.{nd}f} [{lo:.{nd}f}, {hi:.{nd}f}]"
    print(f"{d['label']} on {d['pair']} ({d['policy']}, golden pair {d['acceptance_pair']}): "
          f"{d['tokens']} tokens, mean over {d['n_seeds']} seeds "
          f"({', '.join(map(str, d['seeds']))}) [95 % t-interval]")
    print(f"  throughput {ci('throughput_tok_s', 2)} tok/s (memory-roofline bound "
          f"{ci('bound_tok_s', 2)}); time {ci('time_s', 3)} s")
    print(f"  energy {ci('energy_mj', 1)} mJ = {ci('tokens_per_mj', 4)} tok/mJ")
    print(f"  acceptance {ci('acceptance_rate', 3)}, {ci('mean_accepted_len', 2)} accepted per "
          f"verification, mean draft length {ci('mean_draft_len', 2)}")
    for name, dv in d["devices"].items():
        b = iv["devices"][name]["busy_s"]
        print(f"  {name:10s} busy {dv['busy_s']:.3f} s [{b['ci95_low']:.3f}, "
              f"{b['ci95_high']:.3f}], idle {dv['idle_s']:.3f} s")
    for note in d["offloaded"]:
        print(f"  offload: {note}")


def _check_trace_options(args, head):
    """--trace: the trace's policy is the run's (a different --policy is an error); a --tokens
    below the trace's length is said on standard error, above it the trace is replayed again."""
    if args.policy is not None and args.policy != head["policy"]:
        raise CliError(f"--policy {args.policy}: the trace {args.trace} was recorded with "
                       f"{head['policy']} (drop --policy: a trace's policy is its own)")
    held = head["tokens"]
    if args.tokens is not None and args.tokens != held:
        how = (f"the first {args.tokens:,} of the trace's {held:,} tokens" if args.tokens < held
               else f"{args.tokens:,} tokens, replaying the trace's {held:,} from the start again")
        print(f"ahasd: note: simulating {how} (--tokens {args.tokens})", file=sys.stderr)


def _check_rtl(args):
    """--rtl needs EDC or TVC to take decisions from, and the EDC variant the RTL implements."""
    if args.system != "ahasd" or args.ablation not in ("edc", "tvc"):
        what = args.system if args.system != "ahasd" else f"ahasd --ablation {args.ablation}"
        raise CliError(f"--rtl takes the EDC and TVC decisions from the RTL, and {what} has "
                       f"neither (use --system ahasd --ablation edc or tvc)")
    if args.edc != "committed":
        raise CliError(f"--rtl runs the EDC RTL, which implements the committed variant only, "
                       f"not --edc {args.edc}")


def _rtl_factory(cfg, made):
    """A deciders factory for the runner: the Verilated controller top with the configuration's
    queue depths; each instance built is appended to ``made`` (to be closed)."""
    from ahasd.cosim.deciders import RtlDeciders
    ctl = cfg.controller
    depths = (ctl.draft_queue_depth, ctl.feedback_queue_depth, ctl.preverify_queue_depth)

    def factory(**kwargs):
        made.append(RtlDeciders(queue_depths=depths, **kwargs))
        return made[-1]
    return factory
