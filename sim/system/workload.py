"""Workload model: the work of one transformer pass, apart from any hardware (LLMCompass style).

A pass processes ``n`` new tokens after ``kv_len`` cached ones (a draft step: n = 1; a
verification of k drafted tokens: n = k + 1). Per layer it reads every weight once (INT8, one
byte per parameter), reads the KV cache (``kv_len`` tokens) and writes ``n`` new KV entries, and
does ``n * layer_params`` MACs for the projections plus ``2 * heads * head_dim * n * (kv_len + n)``
for attention (scores and the weighted sum). The LM head is one more GEMV of ``vocab x d``.
Nonlinear work is counted in elements: softmax over ``heads * n * (kv_len + n)`` scores, the MLP
activation over ``n * ffn``, two LayerNorms over ``n * d`` each.
"""

from dataclasses import dataclass

__all__ = ["Work", "layer_work", "head_work", "pass_work"]


@dataclass(frozen=True)
class Work:
    """Work of one operator group (a layer, or the LM head)."""
    macs: float
    weight_bytes: float
    kv_read_bytes: float = 0.0
    kv_write_bytes: float = 0.0
    softmax_elems: float = 0.0
    act_elems: float = 0.0
    norm_elems: float = 0.0

    @property
    def bytes(self):
        return self.weight_bytes + self.kv_read_bytes + self.kv_write_bytes

    @property
    def nonlinear_elems(self):
        return self.softmax_elems + self.act_elems + self.norm_elems

    def scaled(self, k):
        return Work(*(getattr(self, f) * k for f in self.__dataclass_fields__))

    def __add__(self, other):
        return Work(*(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__))


def layer_work(shape, n, kv_len, kv_elem_bytes=1):
    """One layer of ``shape`` over ``n`` new tokens after ``kv_len`` cached ones."""
    kv_tok = 2 * shape.kv_heads * shape.hd * kv_elem_bytes
    ctx = kv_len + n
    return Work(macs=n * shape.layer_params + 2 * shape.heads * shape.hd * n * ctx,
                weight_bytes=shape.layer_params,
                kv_read_bytes=kv_tok * kv_len, kv_write_bytes=kv_tok * n,
                softmax_elems=shape.heads * n * ctx, act_elems=n * shape.ffn,
                norm_elems=2 * n * shape.d_model)


def head_work(shape, n):
    """The LM head (and the final LayerNorm) over ``n`` tokens."""
    return Work(macs=n * shape.head_params, weight_bytes=shape.head_params,
                norm_elems=n * shape.d_model)


def pass_work(shape, n, kv_len, kv_elem_bytes=1):
    """The whole pass, summed (the per-layer split is in :func:`layer_work`)."""
    return layer_work(shape, n, kv_len, kv_elem_bytes).scaled(shape.layers) + head_work(shape, n)
