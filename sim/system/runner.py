"""``simulate``: one run of one system on one model pair and policy, as a typed result.

Decoding comes from the golden model (a live n-gram pair from :mod:`ahasd.sim.decoding.pairs`,
or a recorded trace); timing and energy from :class:`ahasd.sim.system.systems.Timing`; the EDC
and TVC that decide from :class:`ahasd.sim.system.deciders.GoldenDeciders`, or from what
``deciders_factory`` builds with the same keyword arguments (``ahasd simulate --rtl`` passes
:class:`ahasd.cosim.deciders.RtlDeciders`, the Verilated controller top), or from a ready
:class:`~ahasd.sim.system.deciders.Deciders` passed as ``deciders``. The result's
``config["deciders"]`` names the source (the implementation's ``kind``: ``golden``, ``rtl``; or
``none`` for a system without EDC and TVC). BanditSpec's cost model is
the system's own: draft cost 1 per token, verify cost = one 4-token verification over one draft
token on that system. SpecDec++'s acceptance predictor is fitted once per (pair, seed) and reused.

Reuse: a synchronous system (no look-ahead, no EDC, no TVC) asks the decoding the same questions
in the same order whatever its timing, so its decoding depends only on the golden pair, the policy
(unless BanditSpec, whose costs are the system's), the token count, the seed and the corpus; the
first such run records it and later runs with the same key replay it (checked call by call).
"""

from copy import deepcopy
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ahasd.sim.blocks.tvc import DEFAULT_FREQ_RATIO, FREQ_FRAC_BITS
from ahasd.sim.system.config import ConfigError, acceptance_defaults, load_config
from ahasd.sim.system.deciders import GoldenDeciders
from ahasd.sim.system.engine import run_engine
from ahasd.sim.system.sources import Source
from ahasd.sim.system.systems import Timing, make_spec, placement
from ahasd.spec.params import check_choice, check_positive

if TYPE_CHECKING:
    from ahasd.sim.decoding.policies import AcceptancePredictor

__all__ = ["SimResult", "simulate", "prepare", "POLICIES", "default_acceptance_pair",
           "acceptance_pair_of", "time_breakdown"]

POLICIES = ("fixed", "specdecpp", "svip", "adaedl", "banditspec")
_PREDICTORS: dict[tuple, "AcceptancePredictor"] = {}
#: recorded decodings of synchronous runs, by what alone determines them (see simulate)
_DECODINGS: dict[tuple, list] = {}


@dataclass
class SimResult:
    """What one simulated run produced (the JSON of ``ahasd simulate``)."""
    tokens: int
    time_s: float
    throughput_tok_s: float
    energy_mj: float
    tokens_per_mj: float
    acceptance_rate: float
    mean_accepted_len: float
    devices: dict
    bound_tok_s: float
    system: str
    label: str
    pair: str
    policy: str
    ablation: str | None
    edc: str
    acceptance_pair: str
    offloaded: list
    mean_draft_len: float
    verifications: int
    npu_passes: int
    preverifies: int
    preverify_rejects: int
    squashed: int
    edc_suppressed: int
    gts_switches: int
    tvc_saturated_records: int
    tvc_saturated_decisions: int
    energy_breakdown_mj: dict
    breakdown_s: dict
    derived: dict
    memory: dict
    config: dict = field(repr=False)
    timeline: list = field(default_factory=list, repr=False)
    #: ``(device, "accept" | "reject" | "squash", time)`` of the run (kept with the timeline)
    timeline_marks: list = field(default_factory=list, repr=False)
    output_tokens: list = field(default_factory=list, repr=False)

    def as_dict(self, *, timeline=False):
        # ``config`` is this result's own dict (made by the run): not deep-copied again.
        d = {}
        for f in fields(self):
            if f.name == "output_tokens" or (f.name in ("timeline", "timeline_marks")
                                             and not timeline):
                continue
            v = getattr(self, f.name)
            d[f.name] = v if f.name == "config" else deepcopy(v)
        return d


def _policy(name, lm_pair, seed, timing, fixed_len):
    from ahasd.sim.decoding import golden
    from ahasd.sim.decoding.policies import FixedPolicy
    if fixed_len is not None:
        return FixedPolicy(k=fixed_len, max_len=fixed_len)
    check_choice("policy", name, tuple(POLICIES))
    params: dict[str, Any] = {}
    if name == "specdecpp":
        key = (lm_pair.name, seed)
        if key not in _PREDICTORS:
            _PREDICTORS[key] = golden.build_policy("specdecpp", lm_pair, seed=seed).predictor
        params["predictor"] = _PREDICTORS[key]
    if name == "banditspec":
        d = timing.draft_token(256)[0]
        params.update(draft_cost=1.0, verify_cost=timing.verify(4, 256)[0] / d)
    return golden.make_policy(name, **params)


def default_acceptance_pair(pair):
    """The golden pair model pair ``pair`` decodes with by default (``models.toml``'s
    ``[acceptance]`` table)."""
    defaults = acceptance_defaults()
    if pair not in defaults:
        raise ConfigError(f"model pair {pair!r} has no default golden pair in models.toml "
                          f"[acceptance] (give acceptance_pair)")
    return defaults[pair][0]


def acceptance_pair_of(cell):
    """The registry name of the golden pair a grid or sweep cell decodes with: its own
    ``acceptance_pair`` (an alias resolved) or its model pair's default."""
    from ahasd.sim.decoding.pairs import canonical
    name = cell.get("acceptance_pair")
    return canonical(name if name is not None
                     else default_acceptance_pair(cell.get("pair", "opt")))


def prepare(acceptance_pair, *, seed=0, max_files=None, specdecpp=True):
    """Load the golden pair (and fit SpecDec++'s predictor) in this process, as the first run
    with them would: forked worker processes then share them instead of each loading its own."""
    from ahasd.sim.decoding import golden
    from ahasd.sim.decoding.pairs import load_named_pair
    lm = load_named_pair(acceptance_pair, max_files=max_files)
    if specdecpp and (lm.name, seed) not in _PREDICTORS:
        _PREDICTORS[(lm.name, seed)] = golden.build_policy("specdecpp", lm, seed=seed).predictor


def _trace_label(trace, policy, tokens, acceptance=None):
    """A recorded trace carries its own policy (the label) and length (the default tokens)."""
    if trace is None:
        return policy, tokens
    if acceptance is not None:
        raise ValueError("acceptance (a synthetic decoding) and trace exclude each other")
    return trace[0]["policy"], trace[0]["tokens"] if tokens is None else tokens


def simulate(system="ahasd", pair="opt", policy="adaedl", *, ablation="tvc", edc="committed",
             tokens=None, acceptance_pair=None, trace=None, offload=False,
             overrides=(), seed=None, cfg=None, deciders=None, keep_timeline=False,
             tvc_params=None, edc_params=None, max_files=None, greedy=False,
             deciders_factory=None, acceptance=None):
    """Run one configuration; return a :class:`SimResult`. (Long because it resolves every
    argument and wires source, timing, deciders and engine together in one place.)

    With ``trace`` (parsed records of a decoding trace) the result is labelled with the trace's
    own policy (``policy`` is not used) and ``tokens`` defaults to the trace's length.

    ``deciders_factory`` (default :class:`GoldenDeciders`) is called with the keyword arguments
    of :class:`GoldenDeciders` resolved from the configuration, when the system has EDC or TVC
    and no ``deciders`` is given; a system without them never calls it.

    ``acceptance_pair`` (a name of :func:`ahasd.sim.decoding.pairs.pair_choices`; default the
    model pair's, :func:`default_acceptance_pair`) is reported by its registry name.

    ``acceptance`` (in [0, 1], not with ``trace``): the synthetic decoding at that per-token
    acceptance (:func:`_live_source`; the golden pair gives the prompt), ``synthetic:A``.
    """
    from ahasd.sim.decoding import golden
    from ahasd.sim.system.sources import TraceSource

    cfg = cfg or load_config(overrides)
    check_choice("edc", edc, ("committed", "anchor"))
    spec = make_spec(system, ablation)
    draft, target = cfg.pair(pair)
    policy, tokens = _trace_label(trace, policy, tokens, acceptance)
    n_tokens = cfg.run.tokens if tokens is None else tokens
    check_positive("tokens", n_tokens, integer=True)
    seed = cfg.run.seed if seed is None else seed
    # The draft queue holds the unverified batches: its depth bounds the look-ahead too; the
    # feedback and pre-verify queues hold one entry at most here (their depths never bind).
    lookahead = min(cfg.controller.max_lookahead_batches, cfg.controller.draft_queue_depth)
    lm = None
    if trace is not None:
        prompt = list(trace[0]["prompt"])
        source: Source = TraceSource(trace)
    else:
        from ahasd.sim.decoding.pairs import load_named_pair
        acceptance_pair = acceptance_pair_of({"pair": pair, "acceptance_pair": acceptance_pair})
        lm = load_named_pair(acceptance_pair, max_files=max_files)
        prompt = lm.tokenizer.encode(golden.PROMPTS[0])
    kv_tokens = len(prompt) + n_tokens + 8 * lookahead
    stream, notes = placement(cfg, spec, draft, target, kv_tokens, offload=offload)
    timing = Timing(cfg, spec, draft, target, stream)
    record = None
    if lm is not None:
        dkey = (acceptance_pair, f"fixed{spec.fixed_len}" if spec.fixed_len else policy,
                n_tokens, seed, max_files, greedy, golden.PROMPTS[0], acceptance)
        source, record = _live_source(lm, spec, timing, policy, dkey, seed=seed, greedy=greedy)
        acceptance_pair = acceptance_pair if acceptance is None else f"synthetic:{acceptance:g}"
    if deciders is None and (spec.edc or spec.tvc):
        deciders = _deciders(cfg, edc, tvc_params, edc_params, deciders_factory or GoldenDeciders)
    if spec.tvc:
        _tvc_presets(deciders, timing, len(prompt) + n_tokens // 2)
    t, out, st = run_engine(spec, timing, source, prompt, n_tokens, deciders,
                            max_lookahead=lookahead, keep_timeline=keep_timeline)
    if record is not None:
        _DECODINGS[dkey] = record.calls
    r = _result(cfg, spec, timing, st, t, len(out), pair, policy, ablation, edc, len(prompt),
                acceptance_pair if trace is None else "trace", notes, deciders, keep_timeline)
    r.output_tokens = out
    return r


def _live_source(lm, spec, timing, policy, dkey, *, seed, greedy):
    """Live golden decoding on ``lm`` (or, when ``dkey``'s last item, the acceptance, is set,
    the synthetic :class:`~ahasd.sim.system.sources.AcceptanceSource` at it), or the replay of a
    recorded synchronous decoding with the same key ``dkey`` (see :func:`simulate`); return
    ``(source, recorder or None)``."""
    from ahasd.sim.system.sources import AcceptanceSource, LiveSource, RecordingSource, ReplaySource
    reusable = (not spec.asynchronous and not spec.edc and not spec.tvc
                and (spec.fixed_len is not None or policy != "banditspec"))
    if reusable and dkey in _DECODINGS:
        return ReplaySource(_DECODINGS[dkey]), None
    pol = _policy(policy, lm, seed, timing, spec.fixed_len)
    live = (LiveSource(lm, pol, seed=seed, greedy=greedy) if dkey[-1] is None
            else AcceptanceSource(dkey[-1], pol, seed=seed))
    if not reusable:
        return live, None
    record = RecordingSource(live)
    return record, record


def _deciders(cfg, edc, tvc_params, edc_params, factory):
    """The EDC and TVC built by ``factory`` from the configuration (see :func:`simulate`)."""
    ratio = round(cfg.pim.freq_mhz / cfg.npu.freq_mhz * (1 << FREQ_FRAC_BITS))
    tvc_params = {"ratio_bits": cfg.controller.tvc_ratio_bits, **(tvc_params or {})}
    return factory(edc_variant=edc, freq_ratio=ratio or DEFAULT_FREQ_RATIO,
                   tvc_params=tvc_params, edc_params=edc_params,
                   prescale_bits=cfg.controller.tvc_prescale_bits)


def _tvc_presets(deciders, timing, kv0):
    """TVC's offline profile, at the run's mean KV length ``kv0``."""
    deciders.tvc_preset("nvct", int(timing.verify(4, kv0)[0] * timing.npu_hz), kv0)
    deciders.tvc_preset("pdct", int(timing.draft_token(kv0)[0] * timing.pim_hz), 1)
    deciders.tvc_preset("pvct", int(timing.preverify(1, kv0)[0] * timing.pim_hz), 1)


def _bound_s(cfg, spec, timing, st):
    """The roofline lower bound of the run's time: every weight read at the memory's peak
    (asynchronous: the slower device; synchronous: both in turn). With shared ranks under
    contention, the PIM's and the NPU's reads of those ranks also share the ranks' raw slots
    (``pim.ranks x unit_burst_bytes / t_ccd_s x f``): a third bound, so the bound with
    contention is never above the one without."""
    dev = timing.dev
    wd, wt = timing.weight_bytes(timing.draft), timing.weight_bytes(timing.target)
    t_verify = st.npu_passes * dev[spec.verify_dev].min_weight_s(wt)
    t_draft = (st.draft_tokens_done * dev[spec.draft_dev].min_weight_s(wd)
               + st.preverifies * dev[spec.draft_dev].min_weight_s(wt))
    if not spec.asynchronous:
        return t_verify + t_draft
    lay, pim = timing.layout, cfg.pim
    t_shared = 0.0
    if lay is not None and lay.contention:
        raw = lay.target_ranks * pim.unit_burst_bytes / pim.t_ccd_s * pim.freq_mhz * 1e6
        pim_bytes = st.preverifies * wt + (st.draft_tokens_done * wd if lay.shared else 0.0)
        t_shared = (st.npu_passes * wt + pim_bytes) / raw
    return max(t_verify, t_draft, t_shared)


def _derived(cfg, timing, kv):
    """Figures derived from the configuration for the run's pair at the prompt's KV length
    ``kv``: the PIM's MAC rate, one NPU verification pass of 4 drafted tokens (5 tokens), one
    draft token on the draft device (no sharing); ``pim_bytes_per_s``, what the units read
    (one byte per MAC) under the internal bandwidth's cap."""
    return {"pim_mac_per_s": cfg.pim.pim_mac_per_s, "pim_bytes_per_s": cfg.pim.pim_bytes_per_s,
            "npu_verify_pass_s": timing.verify(4, kv)[0],
            "pim_draft_token_s": timing.draft_token(kv)[0]}


def time_breakdown(spec, st, t):
    """Each device's ``t`` seconds split by what it spent them on (``breakdown_s``); the parts
    of a device add up to ``t``.

    The verify device (the NPU): ``verify_s`` (verifying, less its memory stall),
    ``wait_redraft_s`` (idle after a rejection, found by it or by a pre-verification, until the
    next batch is drafted), ``wait_edc_s`` (idle after a verification that ended while an EDC
    stop held the drafting), ``stall_memory_s`` (verification time lost to shared ranks),
    ``other_s`` (the rest of its idle time: the first draft, drafting slower than verifying,
    a synchronous system's turns). The draft device (the PIM): ``draft_useful_s`` (drafting of
    batches not squashed, its memory stall included), ``draft_squashed_s`` (of batches squashed,
    the one squashed in flight up to the squash), ``preverify_s``, ``idle_s``; an overlap of
    drafting and pre-verification (partitioned ranks) is counted once, in the task that began
    later. A device that drafts and verifies (GPU-only, NPU + LPDDR5): ``verify_s``,
    ``draft_useful_s``, ``draft_squashed_s``, ``stall_memory_s``, ``idle_s``.
    """
    out = {}
    for d in sorted({spec.draft_dev, spec.verify_dev}):
        kind = {k: v for (dev, k), v in st.busy_kind.items() if dev == d}
        idle = t - sum(kind.values())
        parts = {}
        if d == spec.verify_dev:
            stall = st.stall.get(d, 0.0)
            parts["verify_s"] = kind.get("verify", 0.0) - stall
        if d == spec.draft_dev:
            parts["draft_useful_s"] = kind.get("draft", 0.0) - st.squashed_draft_s
            parts["draft_squashed_s"] = st.squashed_draft_s
        if d == spec.verify_dev and d != spec.draft_dev:
            parts["wait_redraft_s"] = st.wait.get("redraft", 0.0)
            parts["wait_edc_s"] = st.wait.get("edc", 0.0)
            idle -= parts["wait_redraft_s"] + parts["wait_edc_s"]
        if d == spec.draft_dev and d != spec.verify_dev:
            parts["preverify_s"] = kind.get("preverify", 0.0)
        if d == spec.verify_dev:
            parts["stall_memory_s"] = stall
        parts["other_s" if d != spec.draft_dev else "idle_s"] = idle
        out[d] = parts
    return out


def _memory(timing):
    lay = timing.layout
    return {"placement": None, "contention": False} if lay is None else lay.as_dict()


def _result(cfg, spec, timing, st, t, n, pair, policy, ablation, edc, kv0, acc_pair, notes,
            deciders, keep_timeline):
    dev = timing.dev
    ctl = cfg.controller
    dyn = {d: pj * 1e-9 for d, pj in st.energy_pj.items()}
    controller_pj = (st.edc_decisions * ctl.edc_pj + st.tvc_decisions * ctl.tvc_pj
                     + st.gts_switches * ctl.gts_switch_pj)
    bg = {}
    for holder in spec.background:
        w = cfg.pim.background_mw / 1e3 if holder == "lpddr5" else dev[holder].background_w
        bg[holder] = w * t * 1e3
    breakdown = {f"dynamic_{d}": e for d, e in sorted(dyn.items())}
    breakdown.update({f"background_{d}": e for d, e in bg.items()})
    breakdown["controller"] = controller_pj * 1e-9
    energy = sum(breakdown.values())
    devices = {}
    for d in sorted({spec.draft_dev, spec.verify_dev}):
        busy = st.busy.get(d, 0.0)
        # stall_memory_s: time lost to shared ranks, inside busy_s (busy + idle = time_s)
        devices[d] = {"busy_s": busy, "idle_s": max(t - busy, 0.0),
                      "stall_memory_s": st.stall.get(d, 0.0)}
    t_min = _bound_s(cfg, spec, timing, st)
    return SimResult(
        tokens=n, time_s=t, throughput_tok_s=n / t, energy_mj=energy,
        tokens_per_mj=n / energy, acceptance_rate=st.accepted / st.drafted if st.drafted else 0.0,
        mean_accepted_len=st.accepted / st.verifications if st.verifications else 0.0,
        devices=devices, bound_tok_s=n / t_min, system=spec.name, label=spec.label, pair=pair,
        policy=policy if spec.fixed_len is None else f"fixed{spec.fixed_len}",
        ablation=ablation if spec.name == "ahasd" else None, edc=edc, acceptance_pair=acc_pair,
        offloaded=notes,
        mean_draft_len=sum(st.draft_lengths) / len(st.draft_lengths) if st.draft_lengths else 0.0,
        verifications=st.verifications, npu_passes=st.npu_passes, preverifies=st.preverifies,
        preverify_rejects=st.preverify_rejects, squashed=st.squashed,
        edc_suppressed=st.edc_suppressed, gts_switches=st.gts_switches,
        tvc_saturated_records=getattr(deciders, "saturated_records", 0),
        tvc_saturated_decisions=getattr(deciders, "saturated_decisions", 0),
        energy_breakdown_mj=breakdown, breakdown_s=time_breakdown(spec, st, t), derived=_derived(cfg, timing, kv0),
        memory=_memory(timing),
        config={**cfg.as_dict(), "deciders": (getattr(deciders, "kind", "custom")
                                              if spec.edc or spec.tvc else "none")},
        timeline=st.timeline if keep_timeline else [],
        timeline_marks=st.marks if keep_timeline else [])
