"""A small multi-layer, multi-head Gated DeltaNet language model in numpy (float64).

Layer structure after fla's ``GatedDeltaNet`` layer (fla-org/flash-linear-attention,
``fla/layers/gated_deltanet.py``; NVlabs GatedDeltaNet ``lit_gpt/gated_delta_net.py``), read, not
copied: q, k, v projections, each through a causal depthwise short convolution of size 4 with
SiLU; q and k L2-normalised per head; gates ``g = -exp(A_log) * softplus(a + dt_bias)`` and
``beta = sigmoid(b)``; the gated delta rule (:mod:`.recurrence`) with ``q`` scaled by
``1/sqrt(d_k)``; a gated RMSNorm ``rmsnorm(o) * w * silu(gate)`` per head; the output projection.
Blocks are pre-norm with a SwiGLU MLP; the LM head is its own matrix. Weights are seeded
random (exactness needs no trained ones).

A model's decoding state (:class:`DecodeState`) holds, per layer, the last ``conv_size - 1`` conv
inputs and one recurrent state per head, either dense or pending (deferred commit). Tree
verification (:meth:`GDNModel.verify_tree`) feeds a token tree through every layer, each node's
short convolution and recurrence following its own root path.
"""

from dataclasses import dataclass, field

import numpy as np

from ahasd.spec.params import check_choice, check_int

from . import verify
from .recurrence import gdn_step

__all__ = ["GDNConfig", "GDNModel", "DecodeState", "MODES"]

#: Verification / commit modes: per-node replay, masked tree + rank-A commit, + deferred commit.
MODES = ("replay", "factor", "deferred")


@dataclass(frozen=True, kw_only=True)
class GDNConfig:
    """Shapes of a :class:`GDNModel`."""
    vocab: int = 48
    d_model: int = 32
    n_layers: int = 2
    n_heads: int = 2
    d_k: int = 8
    d_v: int = 16
    d_mlp: int = 64
    conv_size: int = 4
    norm_eps: float = 1e-6

    def __post_init__(self):
        for name in ("vocab", "d_model", "n_layers", "n_heads", "d_k", "d_v", "d_mlp"):
            check_int(name, getattr(self, name), 1)
        check_int("conv_size", self.conv_size, 1)


def _silu(x):
    return x / (1.0 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0.0, x)


def _rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def _l2norm(x, eps=1e-6):
    return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + eps)


@dataclass
class DecodeState:
    """Per layer: conv history ``(conv_size - 1, channels)`` and ``n_heads`` head states."""
    conv: list
    heads: list = field(default_factory=list)

    def copy(self):
        return DecodeState([c.copy() for c in self.conv], [list(h) for h in self.heads])


class GDNModel:
    """A GDN LM with seeded random weights.

    Parameters
    ----------
    config : GDNConfig
    seed : int
        Weight seed.
    weights : dict, optional
        Explicit weights (see :meth:`perturbed`); ``seed`` is then unused.
    """

    def __init__(self, config=GDNConfig(), seed=0, weights=None):
        self.config = c = config
        if weights is None:
            rng = np.random.default_rng(seed)
            hk, hv = c.n_heads * c.d_k, c.n_heads * c.d_v
            weights = {"embed": rng.normal(0, 1, (c.vocab, c.d_model)),
                       "head": rng.normal(0, 2 / np.sqrt(c.d_model), (c.d_model, c.vocab)),
                       "norm_f": np.ones(c.d_model)}
            for i in range(c.n_layers):
                def lin(n_in, n_out):
                    return rng.normal(0, 1 / np.sqrt(n_in), (n_in, n_out))
                weights[i] = {
                    "norm1": np.ones(c.d_model), "norm2": np.ones(c.d_model),
                    "wq": lin(c.d_model, hk), "wk": lin(c.d_model, hk), "wv": lin(c.d_model, hv),
                    "conv": rng.normal(0, 0.5, (c.conv_size, 2 * hk + hv)),
                    "wa": lin(c.d_model, c.n_heads), "wb": lin(c.d_model, c.n_heads),
                    "b_bias": rng.normal(0, 0.5, c.n_heads),
                    # A in (0, 16) and dt in (1e-3, 1e-1) log-uniform, as fla initialises them.
                    "A_log": np.log(rng.uniform(1, 16, c.n_heads)),
                    "dt_bias": _inverse_softplus(np.exp(rng.uniform(np.log(1e-3), np.log(0.1),
                                                                    c.n_heads))),
                    "wg": lin(c.d_model, hv), "o_norm": np.ones(c.d_v),
                    "wo": lin(hv, c.d_model) / np.sqrt(c.n_layers),
                    "w1": lin(c.d_model, c.d_mlp), "w3": lin(c.d_model, c.d_mlp),
                    "w2": lin(c.d_mlp, c.d_model) / np.sqrt(c.n_layers),
                }
        self.w = weights

    def perturbed(self, scale, seed):
        """A draft: a copy whose every weight is multiplied by ``1 + scale * N(0, 1)``."""
        rng = np.random.default_rng(seed)

        def jitter(x):
            return x * (1 + scale * rng.normal(0, 1, np.shape(x)))
        w = {key: ({k: jitter(v) for k, v in val.items()} if isinstance(val, dict)
                   else jitter(val)) for key, val in self.w.items()}
        return GDNModel(self.config, weights=w)

    # ---- state --------------------------------------------------------------------------------
    def initial_state(self):
        c = self.config
        channels = 2 * c.n_heads * c.d_k + c.n_heads * c.d_v
        return DecodeState([np.zeros((c.conv_size - 1, channels)) for _ in range(c.n_layers)],
                           [[np.zeros((c.d_k, c.d_v))] * c.n_heads for _ in range(c.n_layers)])

    # ---- the layer pieces ---------------------------------------------------------------------
    def _mixer_inputs(self, i, h):
        """Projections and gates of ``h`` (N, d_model): raw conv inputs, g, beta, gate."""
        w = self.w[i]
        raw = np.concatenate([h @ w["wq"], h @ w["wk"], h @ w["wv"]], axis=-1)
        g = -np.exp(w["A_log"]) * _softplus(h @ w["wa"] + w["dt_bias"])
        beta = 1.0 / (1.0 + np.exp(-(h @ w["wb"] + w["b_bias"])))
        return raw, g, beta, h @ w["wg"]

    def _split_heads(self, conv_out):
        c = self.config
        hk = c.n_heads * c.d_k
        q = _l2norm(conv_out[:, :hk].reshape(-1, c.n_heads, c.d_k)) / np.sqrt(c.d_k)
        k = _l2norm(conv_out[:, hk:2 * hk].reshape(-1, c.n_heads, c.d_k))
        v = conv_out[:, 2 * hk:].reshape(-1, c.n_heads, c.d_v)
        return q, k, v

    def _mixer_output(self, i, o, gate):
        c, w = self.config, self.w[i]
        o = _rmsnorm(o, w["o_norm"], c.norm_eps) * _silu(gate.reshape(-1, c.n_heads, c.d_v))
        return o.reshape(len(o), -1) @ w["wo"]

    def _mlp(self, i, x):
        w = self.w[i]
        h = _rmsnorm(x, w["norm2"], self.config.norm_eps)
        return x + (_silu(h @ w["w1"]) * (h @ w["w3"])) @ w["w2"]

    def _logits(self, x):
        return _rmsnorm(x, self.w["norm_f"], self.config.norm_eps) @ self.w["head"]

    # ---- recurrent decoding -------------------------------------------------------------------
    def step(self, state, token):
        """Feed one token; returns ``(logits, new_state)`` (``state`` is not modified)."""
        c = self.config
        x = self.w["embed"][token][None, :]
        new = state.copy()
        for i in range(c.n_layers):
            w = self.w[i]
            h = _rmsnorm(x, w["norm1"], c.norm_eps)
            raw, g, beta, gate = self._mixer_inputs(i, h)
            window = np.concatenate([state.conv[i], raw], axis=0)
            q, k, v = self._split_heads(_silu(np.sum(window * w["conv"], axis=0))[None, :])
            o = np.zeros((1, c.n_heads, c.d_v))
            for hd in range(c.n_heads):
                S = _dense(state.heads[i][hd])
                S, o[0, hd], _ = gdn_step(S, q[0, hd], k[0, hd], v[0, hd], beta[0, hd],
                                          g[0, hd])
                new.heads[i][hd] = S
            new.conv[i] = window[1:]
            x = self._mlp(i, x + self._mixer_output(i, o, gate))
        return self._logits(x)[0], new

    # ---- tree verification and commit ---------------------------------------------------------
    def verify_tree(self, state, tokens, parents, mode="factor"):
        """Logits of every node of a token tree, and what :meth:`commit` needs.

        Returns ``(logits (N, vocab), record)``.
        """
        check_choice("mode", mode, MODES)
        c = self.config
        N = len(tokens)
        x = self.w["embed"][np.asarray(tokens)]
        record = {"mode": mode, "parents": tuple(parents), "raw": [], "heads": []}
        for i in range(c.n_layers):
            w = self.w[i]
            h = _rmsnorm(x, w["norm1"], c.norm_eps)
            raw, g, beta, gate = self._mixer_inputs(i, h)
            conv_out = np.stack([np.sum(_window(state.conv[i], raw, parents, n) * w["conv"],
                                        axis=0) for n in range(N)])
            q, k, v = self._split_heads(_silu(conv_out))
            o = np.zeros((N, c.n_heads, c.d_v))
            per_head = []
            for hd in range(c.n_heads):
                args = (parents, q[:, hd], k[:, hd], v[:, hd], beta[:, hd], g[:, hd])
                S0 = state.heads[i][hd]
                if mode == "replay":
                    o[:, hd], _, _ = verify.replay_verify(_dense(S0), *args)
                    per_head.append(args)
                else:
                    o[:, hd], factors = verify.factor_verify(S0, *args)
                    per_head.append(factors)
            record["raw"].append(raw)
            record["heads"].append(per_head)
            x = self._mlp(i, x + self._mixer_output(i, o, gate))
        return self._logits(x), record

    def commit(self, state, record, path):
        """The state after accepting root path ``path`` of a verified tree."""
        path = verify.check_path(record["parents"], path)
        new = state.copy()
        for i in range(self.config.n_layers):
            raw = record["raw"][i]
            # The conv history slides along the accepted tokens' raw inputs.
            history = np.concatenate([state.conv[i], raw[list(path)]], axis=0)
            new.conv[i] = history[len(history) - len(state.conv[i]):]
            for hd, item in enumerate(record["heads"][i]):
                S0 = state.heads[i][hd]
                if record["mode"] == "replay":
                    new.heads[i][hd] = verify.replay_commit(_dense(S0), path, *item[1:])
                elif record["mode"] == "factor":
                    new.heads[i][hd] = verify.factor_commit(_dense(S0), item, path)
                else:
                    new.heads[i][hd] = verify.deferred_commit(S0, item, path)
        return new


def _dense(S):
    return S.materialise() if isinstance(S, verify.PendingState) else S


def _window(history, raw, parents, n):
    """Conv inputs of node ``n``: its ``len(history)`` predecessors on its root path (the
    committed history when the path is shorter), then its own input."""
    rows = [raw[n]]
    p = parents[n]
    while len(rows) <= len(history) and p >= 0:
        rows.append(raw[p])
        p = parents[p]
    need = len(history) + 1 - len(rows)
    back = list(history[len(history) - need:]) if need else []
    return np.array(back + rows[::-1])


def _inverse_softplus(y):
    return y + np.log(-np.expm1(-y))
