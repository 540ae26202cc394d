"""Execution models (which device drafts and verifies, and how), their timing and their memory.

=============  ==========================  ===========================  ==========================
system         draft                       verify                       schedule
=============  ==========================  ===========================  ==========================
gpu            laptop GPU (GDDR7)          same GPU                     alternate (synchronous)
phone-gpu      phone GPU on LPDDR5         same GPU                     alternate
specpim        HBM-PIM (no AAU: nonlinear  laptop GPU                   synchronous, per-operator
               ops on the GPU)                                          sync, fixed length 8
npu-lpddr5     NPU on plain LPDDR5         same NPU                     alternate
ahasd          LPDDR5-PIM                  NPU                          asynchronous + ablation
=============  ==========================  ===========================  ==========================

AHASD ablation steps (cumulative): ``async`` (task-level asynchronous drafting ahead, no AAU: the
draft model's softmax, activation and LayerNorm inputs cross the AXI interconnect to the NPU's
vector unit and back, each way a transfer of ``2 bytes x elements`` plus the bus latency, per
layer and operator), ``aau`` (those operators on the AAU inside the PIM), ``edc`` (EDC gates
drafting ahead), ``tvc`` (TVC inserts pre-verifications; full AHASD).

Capacity (:func:`placement`): every model's INT8 weights and its KV cache for the whole run must
fit the memory it lives in (on AHASD's LPDDR5-PIM, per rank: the most loaded rank of the
placement, :mod:`ahasd.sim.system.memory`); otherwise the run is rejected, or with ``offload``
the part that does not fit is streamed over the system's host link on every pass of the model
that overflows (its bandwidth and energy from the configuration).

On AHASD the PIM's passes run on the units of the ranks that hold the model, as long as the most
loaded unit (:meth:`ahasd.sim.system.memory.Layout.pim_speed`); the engine applies the sharing of
the ranks with the NPU (:attr:`Timing.layout`).
"""

from dataclasses import dataclass

from ahasd.sim.system import memory
from ahasd.sim.system.hardware import build_devices
from ahasd.sim.system.workload import head_work, layer_work
from ahasd.spec.params import check_choice

__all__ = ["system_names", "ablation_names", "SystemSpec", "SYSTEMS", "ABLATIONS", "make_spec", "Timing", "placement",
           "CapacityError"]

ABLATIONS = ("async", "aau", "edc", "tvc")
SYSTEMS = ("gpu", "phone-gpu", "specpim", "npu-lpddr5", "ahasd")


def system_names():
    """The names of the simulated systems (:data:`SYSTEMS`), the baselines first."""
    return SYSTEMS


def ablation_names():
    """The AHASD ablation steps (:data:`ABLATIONS`), cumulative, full AHASD (``tvc``) last."""
    return ABLATIONS


class CapacityError(ValueError):
    """The models do not fit the memory (and no offload was asked for)."""


@dataclass(frozen=True)
class SystemSpec:
    """One execution model."""
    name: str
    label: str
    draft_dev: str
    verify_dev: str
    asynchronous: bool
    aau: bool            #: draft nonlinear operators on the draft device (else shipped to the NPU)
    edc: bool
    tvc: bool
    gts: bool
    fixed_len: int | None
    op_sync: bool        #: SpecPIM's per-operator GPU <-> PIM synchronisation
    memories: tuple      #: ((memory name, capacity device, (models "draft"/"target"...)), ...)
    background: tuple    #: background-power holders (device names, "lpddr5")
    host_link: str       #: config section of the offload link ("gpu" or "storage")


def make_spec(system, ablation="tvc"):
    check_choice("system", system, tuple(SYSTEMS))
    check_choice("ablation", ablation, tuple(ABLATIONS))
    both = ("draft", "target")
    if system == "gpu":
        return SystemSpec("gpu", "GPU-only", "gpu", "gpu", False, True, False, False, False, None,
                          False, (("gpu", "gpu", both),), ("gpu",), "gpu")
    if system == "phone-gpu":
        return SystemSpec("phone-gpu", "phone GPU", "phone-gpu", "phone-gpu", False, True, False,
                          False, False, None, False, (("lpddr5", "phone-gpu", both),),
                          ("phone-gpu", "lpddr5"), "storage")
    if system == "specpim":
        return SystemSpec("specpim", "SpecPIM-like", "hbm-pim", "gpu", False, False, False, False,
                          False, 8, True, (("gpu", "gpu", ("target",)),
                                           ("hbm-pim", "hbm-pim", ("draft",))),
                          ("gpu", "hbm-pim"), "gpu")
    if system == "npu-lpddr5":
        return SystemSpec("npu-lpddr5", "NPU + LPDDR5", "npu", "npu", False, True, False, False,
                          False, None, False, (("lpddr5", "npu", both),), ("npu", "lpddr5"),
                          "storage")
    step = ABLATIONS.index(ablation)
    label = {"async": "AHASD async", "aau": "AHASD +AAU", "edc": "AHASD +EDC",
             "tvc": "AHASD"}[ablation]
    return SystemSpec("ahasd", label, "pim", "npu", True, step >= 1, step >= 2, step >= 3, True,
                      None, False, (("lpddr5-pim", "pim", both),), ("npu", "pim"), "storage")


def placement(cfg, spec, draft, target, kv_tokens, *, offload):
    """Bytes to stream per pass for each model: ``{"draft": b, "target": b}`` and a description.

    Raises :class:`CapacityError` when something does not fit and ``offload`` is False.
    """
    devices = build_devices(cfg)
    elem = cfg.run.kv_bytes_per_elem
    shapes = {"draft": draft, "target": target}
    stream = {"draft": 0.0, "target": 0.0}
    notes: list[str] = []
    for mem, dev, models in spec.memories:
        if mem == "lpddr5-pim":
            _per_rank(cfg, spec, draft, target, kv_tokens, offload, stream, notes)
            continue
        cap = devices[dev].capacity_bytes
        need = {m: shapes[m].params + shapes[m].kv_bytes_per_token(elem) * kv_tokens
                for m in models}
        total = sum(need.values())
        if total <= cap:
            continue
        sizes = ", ".join(f"{shapes[m].name} {need[m] / 1e9:.1f} GB" for m in models)
        if not offload:
            raise CapacityError(
                f"{spec.label}: {sizes} (weights + KV cache, INT8) = {total / 1e9:.1f} GB do not "
                f"fit the {cap / 1e9:.1f} GB of {mem}; use --offload to stream the rest")
        excess = total - cap
        biggest = max(models, key=lambda m: need[m])
        stream[biggest] += min(excess, shapes[biggest].params)
        link = getattr(cfg, spec.host_link)
        notes.append(f"{mem}: {excess / 1e9:.1f} GB of {shapes[biggest].name} streamed per pass "
                     f"over {link.host_link} ({link.host_link_gbps:g} GB/s)")
    return stream, notes


def _per_rank(cfg, spec, draft, target, kv_tokens, offload, stream, notes):
    """The LPDDR5-PIM's capacity, rank by rank (:func:`ahasd.sim.system.memory.check_ranks`)."""
    lay = memory.layout(cfg, draft, target)
    per_rank, excess, model = memory.check_ranks(cfg, draft, target, lay, kv_tokens)
    if not excess:
        return
    shape = target if model == "target" else draft
    if not offload:
        raise CapacityError(
            f"{spec.label}: {draft.name} + {target.name} (weights + KV cache, INT8) need "
            f"{per_rank / 1e9:.1f} GB on the most loaded rank ({lay.placement}), more than the "
            f"{cfg.pim.rank_gb:g} GB of a rank: do not fit the {cfg.pim.mem_gb:.1f} GB of "
            f"lpddr5-pim; use --offload to stream the rest")
    stream[model] += min(excess, shape.params)
    link = getattr(cfg, spec.host_link)
    notes.append(f"lpddr5-pim: {excess / 1e9:.1f} GB of {shape.name} streamed per pass over "
                 f"{link.host_link} ({link.host_link_gbps:g} GB/s)")


_MEMOS: dict[tuple, dict] = {}


class Timing:
    """Durations (s) and dynamic energies (pJ) of the tasks of one system on one model pair."""

    def __init__(self, cfg, spec, draft, target, stream):
        self.cfg, self.spec, self.draft, self.target = cfg, spec, draft, target
        self.dev = build_devices(cfg)
        link = getattr(cfg, spec.host_link)
        self.stream = stream
        #: where the models live and what sharing does (AHASD's LPDDR5-PIM; None elsewhere)
        self.layout = memory.layout(cfg, draft, target) if spec.draft_dev == "pim" else None
        self.link_Bps = link.host_link_gbps * 1e9
        self.link_pj_byte = link.host_link_pj_per_bit * 8
        ic, ctl = cfg.interconnect, cfg.controller
        self.npu_hz = cfg.npu.freq_mhz * 1e6
        self.pim_hz = cfg.pim.freq_mhz * 1e6
        self.ic_hz = ic.freq_mhz * 1e6
        self.ic_Bpc = ic.width_bits / 8
        self.gts_switch_s = ctl.gts_switch_cycles / self.pim_hz
        self.tvc_decide_s = ctl.tvc_cycles / self.pim_hz
        self.edc_s = ctl.edc_cycles / self.pim_hz
        # Task durations depend only on the configuration, the system, the pair and the offload
        # stream: every Timing of the same ones in this process shares them (a grid asks the
        # same questions in each policy column).
        key = (repr(cfg), spec, draft.name, target.name, tuple(sorted(stream.items())))
        self._memo = _MEMOS.setdefault(key, {})

    def xfer(self, nbytes):
        """One transfer over the interconnect: ``(seconds, pJ)``."""
        ic = self.cfg.interconnect
        s = (ic.latency_cycles + -(-nbytes // self.ic_Bpc)) / self.ic_hz
        return s, nbytes * 8 * ic.pj_per_bit

    def _offload(self, model):
        b = self.stream[model]
        return b / self.link_Bps, b * self.link_pj_byte

    def _pass(self, dev_name, shape, n, kv, *, ship_nonlinear=False):
        elem = self.cfg.run.kv_bytes_per_elem
        dev = self.dev[dev_name]
        layer, head = layer_work(shape, n, kv, elem), head_work(shape, n)
        local_nl = not ship_nonlinear
        t = dev.pass_s(layer, head, shape.layers, nonlinear=local_nl)
        if dev_name == "pim" and self.layout is not None:
            # the units (and AAUs) of the model's ranks only, as long as the most loaded unit,
            # and no shorter than the whole pass through the internal bandwidth cap
            model = "draft" if shape is self.draft else "target"
            pim = self.cfg.pim
            capped = dev.pass_s(layer, head, shape.layers, nonlinear=False)
            units = capped * pim.pim_bytes_per_s / pim.pim_mac_per_s
            t = max(units / self.layout.pim_speed(model),
                    capped * pim.pim_bytes_per_s / (pim.internal_bw_gbps * 1e9))
            if local_nl:
                held = self.layout.draft_ranks if model == "draft" else self.layout.target_ranks
                nl = dev.pass_s(layer, head, shape.layers) - dev.pass_s(
                    layer, head, shape.layers, nonlinear=False)
                t += nl * self.layout.ranks / held
        pj = (dev.energy_pj(layer, nonlinear=local_nl) * shape.layers
              + dev.energy_pj(head, nonlinear=local_nl))
        if ship_nonlinear:
            # Nonlinear operators run elsewhere (the NPU's vector unit, or SpecPIM's GPU).
            host = self.dev["npu" if self.spec.name == "ahasd" else "gpu"]
            t += host.nonlinear_s(layer) * shape.layers + host.nonlinear_s(head)
            pj += (host.energy_pj(_nl_only(layer)) * shape.layers
                   + host.energy_pj(_nl_only(head)))
            if self.spec.op_sync:
                t += shape.layers * 4 * self.cfg.hbm_pim.op_sync_ns * 1e-9
            else:
                for elems in (layer.softmax_elems, layer.act_elems, layer.norm_elems):
                    s, e = self.xfer(2 * elems)
                    t += 2 * s * shape.layers
                    pj += 2 * e * shape.layers
        return t, pj

    def draft_token(self, kv):
        key = ("d", kv)
        if key not in self._memo:
            t, pj = self._pass(self.spec.draft_dev, self.draft, 1, kv,
                               ship_nonlinear=not self.spec.aau)
            ot, oe = self._offload("draft")
            self._memo[key] = (t + ot, pj + oe)
        return self._memo[key]

    def draft_overhead_s(self, k, edc):
        s = 0.0
        if self.spec.asynchronous:
            s += self.xfer(self.cfg.controller.descriptor_bytes + 4 * k)[0]
        if edc:
            s += self.edc_s
        return s

    def verify(self, k, kv):
        key = ("v", k, kv)
        if key not in self._memo:
            t, pj = self._pass(self.spec.verify_dev, self.target, k + 1, kv)
            ot, oe = self._offload("target")
            if self.spec.asynchronous:  # the result descriptor back over the feedback queue
                t += self.xfer(self.cfg.controller.descriptor_bytes)[0]
            self._memo[key] = (t + ot, pj + oe)
        return self._memo[key]

    def preverify(self, length, kv):
        key = ("p", length, kv)
        if key not in self._memo:
            t, pj = self._pass(self.spec.draft_dev, self.target, length, kv)
            ot, oe = self._offload("target")
            self._memo[key] = (t + ot, pj + oe)
        return self._memo[key]

    def weight_bytes(self, shape):
        return shape.layers * shape.layer_params + shape.head_params


def _nl_only(work):
    from ahasd.sim.system.workload import Work
    return Work(0.0, 0.0, softmax_elems=work.softmax_elems, act_elems=work.act_elems,
                norm_elems=work.norm_elems)
