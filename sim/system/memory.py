"""The LPDDR5-PIM's memory: where the models live on the ranks, and how PIM units and NPU reads
share them (issue 20 points 2 and 3).

**Placement** (``memory.placement``). ``striped``: every model's weights and KV cache are split
over all ``pim.ranks`` ranks (each weight matrix by output rows, in tiles of the unit's
``unit_burst_bytes`` lanes, spread over the units); ``partitioned``: the draft model on the first
``memory.draft_ranks`` ranks, the target on the rest. A unit computes only on its own rank's
share, so a pass on the PIM takes as long as its most loaded unit: :func:`unit_imbalance` is that
unit's MACs over the mean (whole tiles per unit), and a model on ``r`` of the ``R`` ranks runs at
``r / R`` of the units' rate (:meth:`Layout.pim_speed`); a pass is never shorter than all its
bytes through ``pim.internal_bw_gbps`` (:class:`ahasd.sim.system.systems.Timing`). Capacity is
checked per rank, KV caches included at the run's end (the largest they grow to):
:func:`rank_need`, :func:`check_ranks`.

**Sharing** (``memory.contention``). The NPU streams the target's weights out of the ranks that
hold it, over the same banks, command bus and data path as the units of those ranks. Per rank,
read slots come at one burst per tCCD; a rank delivers at most :func:`rank_efficiency` of them
(activation window: ``bursts_per_row`` reads per ACT and at most four ACTs per tFAW, one per
tRRD; command bus: one command per cycle, a RD per burst and an ACT and a PRE per row; refresh:
a requester owning one refresh pair loses ``t_rfcpb + t_rp + t_rcd`` per tREFI, with two or more
pairs the scheduler refreshes one while it streams from the others). The command
arbiter is round-robin, so the slots are shared max-min fair (:func:`slot_shares`): a requester
asking for less than half gets what it asks, the other the rest. The NPU asks for its stream's
share of each rank's raw rate (``offchip_bw_gbps x npu.bw_util`` over the target's ranks, in
units of ``unit_burst_bytes / t_ccd_s x f``), the rank's units for all of it. The result is a
speed factor for each side while both run (:meth:`Layout.contention`); the engine stretches the
overlapped part of each task by it and counts the extra time as ``stall_memory_s``. The model is
validated against the cycle-level two-requester bank model (``ahasd.tb.dram_contention``,
``tests/sim/system/test_contention_model.py``) within 10 %. The off-chip channel carries only the
host's (NPU's) traffic: the units' reads never leave the ranks.
"""

import math
from dataclasses import dataclass

from ahasd.sim.system.config import ConfigError

__all__ = ["Layout", "layout", "unit_imbalance", "rank_efficiency", "slot_shares",
           "matrices", "dram_config", "predict", "rank_need", "check_ranks"]


def matrices(shape):
    """``[(output rows, input columns, count)]`` of every weight matrix of one pass of ``shape``
    (per layer: Q, K, V, O, the MLP's; then the LM head)."""
    q, kv = shape.heads * shape.hd, shape.kv_heads * shape.hd
    d, f = shape.d_model, shape.ffn
    per_layer = [(q, d, 1), (kv, d, 2), (d, q, 1), (f, d, shape.ffn_matrices - 1), (d, f, 1)]
    return [(m, n, c * shape.layers) for m, n, c in per_layer] + [(shape.vocab, d, 1)]


def unit_imbalance(shape, units, lanes):
    """MACs of the most loaded of ``units`` units over the mean: each matrix's output rows in
    tiles of ``lanes``, whole tiles per unit (``ceil(tiles / units)`` for the busiest)."""
    busiest = total = 0
    for m, n, count in matrices(shape):
        tiles = math.ceil(m / lanes)
        busiest += math.ceil(tiles / units) * lanes * n * count
        total += m * n * count
    return busiest * units / total


def dram_config(pim):
    """The platform's rank as a :class:`ahasd.spec.dram.DRAMConfig` (its timing keys; the
    per-bank refresh time half of tRFC, as the authors' timing set of ``ahasd.spec.dram``)."""
    from ahasd.spec.dram import DRAMConfig
    return DRAMConfig(t_rcd=pim.t_rcd, t_rp=pim.t_rp, t_ras=pim.t_ras, t_ccd=pim.t_ccd_s,
                      t_rrd=pim.t_rrd_l, t_faw=pim.t_faw, t_refi=pim.t_refi, t_rfc=pim.t_rfc,
                      t_rfcpb=pim.t_rfc // 2, burst_bytes=pim.unit_burst_bytes,
                      n_banks=pim.banks_per_rank)


def rank_efficiency(dram, pairs):
    """Share of a rank's raw read slots (one burst per tCCD) that ``dram`` (a
    :class:`ahasd.spec.dram.DRAMConfig`) can deliver to requesters owning ``pairs`` refresh
    pairs each: the smallest of the activation limit (``bursts_per_row`` reads per ACT, ACTs at
    most one per tRRD and four per tFAW), the command bus (one command per cycle: a RD per burst
    and an ACT and a PRE per row) and the refresh limit (module docstring)."""
    act = dram.bursts_per_row * dram.t_ccd * min(1 / dram.t_rrd, 4 / dram.t_faw)
    bus = dram.t_ccd / (1 + 2 / dram.bursts_per_row)
    refresh = 1.0 if pairs >= 2 else 1 - (dram.t_rfcpb + dram.t_rp + dram.t_rcd) / dram.t_refi
    return min(1.0, act, bus, refresh)


def predict(dram, pairs, host_demand):
    """What the model gives the two-requester rank of the cycle-level bank model: shares of the
    raw rate ``{"pim": pim alone, "host": host alone, "both": (pim, host)}``, the PIM streaming
    without end and the host asking for ``host_demand`` (both owning ``pairs`` pairs)."""
    eff = rank_efficiency(dram, pairs)
    return {"pim": eff, "host": min(host_demand, eff),
            "both": slot_shares(1.0, host_demand, eff)}


def slot_shares(d_pim, d_host, efficiency):
    """``(pim share, host share)`` of a rank's raw slots under the round-robin arbiter: max-min
    fair within ``efficiency``; each asks for ``d_pim`` / ``d_host`` (shares of the raw rate)."""
    half = efficiency / 2
    host = min(d_host, max(half, efficiency - d_pim))
    pim = min(d_pim, efficiency - host)
    return pim, host


@dataclass(frozen=True)
class Layout:
    """The models on the ranks and what sharing does to each side (see the module docstring)."""
    placement: str
    ranks: int
    draft_ranks: int            #: ranks holding the draft model
    target_ranks: int           #: ranks holding the target
    shared: bool                #: the draft's and the target's ranks are the same ones
    imbalance: dict             #: "draft"/"target" -> most loaded unit over the mean
    contention: bool
    host_demand: float          #: the NPU's share of a target rank's raw slots it asks for
    pim_factor: float           #: PIM speed while the NPU streams (on shared ranks)
    npu_factor: float           #: NPU speed while the PIM computes on the target's ranks

    def pim_speed(self, model):
        """Fraction of the whole PIM's rate a pass of ``model`` ("draft"/"target") gets."""
        held = self.draft_ranks if model == "draft" else self.target_ranks
        return held / self.ranks / self.imbalance[model]

    def overlaps(self, pim_model):
        """Whether a PIM pass of ``pim_model`` shares ranks with the NPU's target stream."""
        return self.contention and (self.shared or pim_model == "target")

    def as_dict(self):
        return {"placement": self.placement, "contention": self.contention,
                "draft_ranks": self.draft_ranks, "target_ranks": self.target_ranks,
                "unit_imbalance": dict(self.imbalance), "npu_slot_demand": self.host_demand,
                "pim_speed_shared": self.pim_factor, "npu_speed_shared": self.npu_factor}


def layout(cfg, draft, target):
    """The :class:`Layout` of the configuration's placement for the pair ``draft``, ``target``."""
    pim, mem = cfg.pim, cfg.memory
    if mem.placement == "striped":
        d_ranks = t_ranks = pim.ranks
    else:
        d_ranks, t_ranks = mem.draft_ranks, pim.ranks - mem.draft_ranks
    per = pim.units_per_rank
    imb = {"draft": unit_imbalance(draft, d_ranks * per, pim.unit_burst_bytes),
           "target": unit_imbalance(target, t_ranks * per, pim.unit_burst_bytes)}
    rank_raw = pim.unit_burst_bytes / pim.t_ccd_s * pim.freq_mhz * 1e6
    demand = pim.offchip_bw_gbps * 1e9 * cfg.npu.bw_util / t_ranks / rank_raw
    # The cycle model's split: each requester owns half the rank's refresh pairs.
    eff = rank_efficiency(dram_config(pim), pim.banks_per_rank // 4)
    share_pim, share_host = slot_shares(float(per), demand, eff)
    alone_host = min(demand, eff)
    return Layout(mem.placement, pim.ranks, d_ranks, t_ranks, mem.placement == "striped", imb,
                  mem.contention, demand, share_pim / min(float(per), eff),
                  share_host / alone_host)


def rank_need(cfg, shape, lay, model, kv_tokens):
    """Bytes the most loaded rank holds of ``model``: its weights (whole tiles per unit, as
    :func:`unit_imbalance`) and its KV cache after ``kv_tokens`` tokens, over its ranks."""
    held = lay.draft_ranks if model == "draft" else lay.target_ranks
    kv = shape.kv_bytes_per_token(cfg.run.kv_bytes_per_elem) * kv_tokens
    return (shape.params * lay.imbalance[model] + kv) / held


def check_ranks(cfg, draft, target, lay, kv_tokens):
    """``(per-rank need in bytes, excess bytes over the ranks, the model that overflows)``:
    the most loaded rank of each placement against ``pim.rank_gb``."""
    cap = cfg.pim.rank_gb * 1e9
    need = {"draft": rank_need(cfg, draft, lay, "draft", kv_tokens),
            "target": rank_need(cfg, target, lay, "target", kv_tokens)}
    if lay.shared:
        per_rank = need["draft"] + need["target"]
        excess = max(0.0, per_rank - cap) * lay.ranks
        return per_rank, excess, "target" if excess else None
    worst = max(need, key=lambda m: need[m] / cap)
    held = lay.draft_ranks if worst == "draft" else lay.target_ranks
    excess = max(0.0, need[worst] - cap) * held
    if worst == "draft" and excess:
        raise ConfigError(f"memory.draft_ranks = {lay.draft_ranks}: the draft model needs "
                          f"{need['draft'] / 1e9:.1f} GB per rank, more than the "
                          f"{cfg.pim.rank_gb:g} GB of a rank")
    return need[worst], excess, worst if excess else None
