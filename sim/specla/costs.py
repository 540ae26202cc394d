"""SpecLA cost model: FLOPs, bytes moved, launches, then seconds and cycles on a :class:`Hardware`.

Per layer, all heads of a GDN layer run in one kernel (``H`` heads of state ``d_k x d_v``,
``s = d_k * d_v``, ``b`` bytes per state element). Counted per layer:

* sequential (replay) verification of ``N`` nodes: one dependent kernel per node, each reading
  its parent's state and writing its own (``2 s b`` bytes), ``7 s`` FLOPs (decay ``s``,
  ``S^T k`` and the rank-1 update ``2 s`` each, ``S^T q`` ``2 s``).
* tree verification (:func:`ahasd.sim.specla.verify.factor_verify`): one kernel reading ``S0``
  once, ``4 N s`` FLOPs for ``S0^T K`` and ``S0^T Q`` plus ``N^2 (2 d_k + 2 d_v)`` for the masked
  products and the forward substitution.
* replay commit of ``A`` tokens: ``A`` dependent kernels, ``2 s b`` bytes and ``5 s`` FLOPs each.
* factor commit: one kernel, ``2 s b`` bytes (read, write) + the factors, ``(2 A + 1) s`` FLOPs;
  on a device with state-commit units (the PIM), their cycles measured on the RTL instead
  (:func:`factor_commit`, ``rtl_timing.toml``).
* deferred commit: the factor commit fused into the next tree verification (one pass reading
  and writing the state), against the two kernels (``3 s b`` bytes) of commit then verify.

Node vectors (q, k, v in; u, o out) add ``N (2 d_k + 2 d_v) b`` bytes. Time of a kernel group is
``launches * launch_s + max(flops / (peak * compute_util), bytes / (bw * bw_util))`` (the
roofline of LLMCompass / AttAcc with AttAcc's utilisation caps).
"""

from dataclasses import dataclass

from ahasd.spec.params import check_choice, check_real

__all__ = ["Cost", "GDNShapes", "GDN_1_3B", "GDN_0_4B", "seq_verify", "tree_verify",
           "replay_commit", "factor_commit", "fused_deferred", "forward_pass", "round_cost",
           "ar_token_cost", "expected_accepted", "speedup"]


@dataclass(frozen=True)
class Cost:
    """FLOPs, bytes and dependent launches of a group of kernels."""
    vector_flops: float = 0.0
    matrix_flops: float = 0.0
    bytes: float = 0.0
    launches: int = 0
    #: Seconds on a dedicated unit (the state-commit units), added to the roofline's time.
    unit_s: float = 0.0

    def __add__(self, other):
        return Cost(self.vector_flops + other.vector_flops, self.matrix_flops + other.matrix_flops,
                    self.bytes + other.bytes, self.launches + other.launches,
                    self.unit_s + other.unit_s)

    def scale(self, n):
        return Cost(self.vector_flops * n, self.matrix_flops * n, self.bytes * n,
                    self.launches * n, self.unit_s * n)

    def seconds(self, hw):
        compute = (self.vector_flops / hw.vector_flops_per_s
                   + self.matrix_flops / hw.matrix_flops_per_s) / hw.compute_util
        memory = self.bytes / (hw.mem_bytes_per_s * hw.bw_util)
        return self.launches * hw.launch_s + max(compute, memory) + self.unit_s

    def cycles(self, hw):
        return self.seconds(hw) * hw.clock_hz


@dataclass(frozen=True)
class GDNShapes:
    """A GDN LM's shapes: ``n_layers`` blocks of a GDN mixer (``n_heads`` heads of
    ``d_k x d_v``) and a SwiGLU MLP, vocabulary ``vocab`` with a tied LM head."""
    name: str
    n_layers: int
    d_model: int
    d_mlp: int
    vocab: int
    n_heads: int
    d_k: int
    d_v: int

    @classmethod
    def lit_gpt(cls, name, n_layer, n_embd, intermediate_size, vocab_size, *, num_heads=9,
                expand_k=0.75, expand_v=1.5):
        """From NVlabs GatedDeltaNet's ``lit_gpt/config.py`` entry; the mixer is built as
        ``GatedDeltaNet(hidden_size=n_embd)`` (``lit_gpt/model.py``), so the defaults of
        ``lit_gpt/gated_delta_net.py`` apply: 9 heads, expand_k 0.75, expand_v 1.5."""
        key, value = int(n_embd * expand_k), int(n_embd * expand_v)
        return cls(name, n_layer, n_embd, intermediate_size, vocab_size, num_heads,
                   key // num_heads, value // num_heads)

    @property
    def layer_params(self):
        hk, hv = self.n_heads * self.d_k, self.n_heads * self.d_v
        mixer = self.d_model * (2 * hk + 2 * hv + 2 * self.n_heads) + hv * self.d_model
        return mixer + 3 * self.d_model * self.d_mlp

    @property
    def params(self):
        return self.n_layers * self.layer_params + self.vocab * self.d_model


#: ``GatedDeltaNet_1.3B`` and ``GatedDeltaNet_0.4B`` of NVlabs GatedDeltaNet ``lit_gpt/config.py``.
GDN_1_3B = GDNShapes.lit_gpt("GatedDeltaNet_1.3B", 16, 2400, 5888, 32000)
GDN_0_4B = GDNShapes.lit_gpt("GatedDeltaNet_0.4B", 11, 1536, 6144, 32000)


def _vectors(m, n, b):
    return n * (2 * m.d_k + 2 * m.d_v) * b * m.n_heads


def seq_verify(m, n, b):
    """Per layer: ``n`` nodes, each a dependent step from its parent's materialised state."""
    s = m.d_k * m.d_v * m.n_heads
    return Cost(7 * s * n, 0, 2 * s * b * n + _vectors(m, n, b), n)


def tree_verify(m, n, b):
    """Per layer: the masked tree verification, one pass over ``S0``."""
    s = m.d_k * m.d_v * m.n_heads
    small = n * n * (2 * m.d_k + 2 * m.d_v) * m.n_heads
    return Cost(4 * s * n + small, 0, s * b + _vectors(m, n, b), 1)


def replay_commit(m, a, b):
    """Per layer: ``a`` accepted tokens re-run one dependent step each."""
    s = m.d_k * m.d_v * m.n_heads
    return Cost(5 * s * a, 0, 2 * s * b * a + a * (m.d_k + m.d_v) * b * m.n_heads, a)


def factor_commit(m, a, b, hw=None):
    """Per layer: ``S_A = P S0 + K diag(w) U^T`` in one pass (read and write the state).

    On a ``hw`` with state-commit units (``hw.commit_units``) the pass is the units' instead of
    a roofline kernel: each head takes the RTL's measured ``commit_base_cycles +
    commit_cycles_per_burst * bursts`` cycles (its factor loads overlap the commit before, the
    unit's second factor bank), the heads in ``ceil(n_heads / commit_units)`` rounds; the
    factors' bytes stay on the roofline."""
    s = m.d_k * m.d_v * m.n_heads
    vectors = a * (m.d_k + m.d_v) * b * m.n_heads
    if hw is None or not hw.commit_units:
        return Cost((2 * a + 1) * s, 0, 2 * s * b + vectors, 1)
    bursts = -(-m.d_k * m.d_v * b // hw.commit_burst_bytes)
    rounds = -(-m.n_heads // hw.commit_units)
    cycles = rounds * (hw.commit_base_cycles + hw.commit_cycles_per_burst * bursts)
    return Cost(0, 0, vectors, 1, unit_s=cycles / hw.clock_hz)


def fused_deferred(m, a, n, b):
    """Per layer: the pending rank-``a`` commit applied in the pass of the next tree
    verification of ``n`` nodes (one read, one write of the state): a roofline pass on every
    device (the state-commit unit commits, it does not verify)."""
    t, f = tree_verify(m, n, b), factor_commit(m, a, b)
    s = m.d_k * m.d_v * m.n_heads
    return Cost(t.vector_flops + f.vector_flops, 0, 2 * s * b + (t.bytes - s * b)
                + (f.bytes - 2 * s * b), 1)


#: Kernels per block besides the recurrence (norm, q/k/v/gate projections, conv, gated norm,
#: output projection, MLP in/out, residual adds). An assumption, counted from the layer structure.
KERNELS_PER_LAYER = 10


def forward_pass(m, n, hw):
    """Weights and activations of one target pass over ``n`` tokens (recurrence excluded)."""
    weights = m.params * hw.weight_bytes
    return Cost(0, 2 * m.params * n, weights, KERNELS_PER_LAYER * m.n_layers + 2)


def ar_token_cost(m, hw):
    """One autoregressive token: a forward pass and one recurrent step per layer."""
    step = Cost(7 * m.d_k * m.d_v * m.n_heads, 0,
                2 * m.d_k * m.d_v * m.n_heads * hw.state_bytes
                + _vectors(m, 1, hw.state_bytes), 1)
    return forward_pass(m, 1, hw) + step.scale(m.n_layers)


def round_cost(target, draft, hw, *, mode, n_nodes, depth, accepted):
    """One speculative round: ``depth`` draft steps, a target pass over ``n_nodes`` (the pending
    token and the draft tree), verification and commit of ``accepted + 1`` tokens (target and
    draft states) in ``mode`` ("replay", "factor" or "deferred")."""
    check_choice("mode", mode, ("replay", "factor", "deferred"))
    for name, value in (("n_nodes", n_nodes), ("depth", depth), ("accepted", accepted)):
        check_real(name, value, 0.0)      # expected values (means over rounds) are real
    b = hw.state_bytes
    a = accepted + 1
    cost = ar_token_cost(draft, hw).scale(depth) + forward_pass(target, n_nodes, hw)
    for m in (target, draft):
        if mode == "replay":
            per_layer = replay_commit(m, a, b)
            if m is target:
                per_layer = per_layer + seq_verify(m, n_nodes, b)
        elif mode == "factor":
            per_layer = factor_commit(m, a, b, hw)
            if m is target:
                per_layer = per_layer + tree_verify(m, n_nodes, b)
        else:                    # deferred
            per_layer = (fused_deferred(m, a, n_nodes, b) if m is target
                         else factor_commit(m, a, b, hw))
        cost = cost + per_layer.scale(m.n_layers)
    return cost


def expected_accepted(alpha, depth):
    """Mean accepted draft tokens of a chain of ``depth`` at per-token acceptance ``alpha``."""
    return sum(alpha ** i for i in range(1, depth + 1))


def speedup(target, draft, hw, *, mode, alpha=None, depth=4, mean_accepted=None):
    """Tokens per second of speculative decoding (chain of ``depth``) over autoregressive.

    Give ``alpha`` (per-token acceptance, i.i.d.) or a measured ``mean_accepted`` per round.
    """
    acc = expected_accepted(alpha, depth) if mean_accepted is None else mean_accepted
    # Costs are taken at the mean commit length: every count is linear in it (the roofline's
    # max() makes the time nearly so).
    per_round = round_cost(target, draft, hw, mode=mode, n_nodes=depth + 1, depth=depth,
                           accepted=acc)
    return (acc + 1) * ar_token_cost(target, hw).seconds(hw) / per_round.seconds(hw)
