"""SpecLA: speculative decoding for linear-attention (Gated DeltaNet) targets.

* :mod:`.recurrence` -- the gated delta rule for one head (state ``S``, ``d_k x d_v``).
* :mod:`.verify` -- chain and token-tree verification with per-token factors; replay, factor
  (rank-A) and deferred commit.
* :mod:`.model` -- a small multi-layer, multi-head GDN language model in numpy (target and draft).
* :mod:`.speculative` -- greedy speculative decoding on the GDN target.
* :mod:`.case` -- the strict JSON reader/writer of ``ahasd specla verify``.
* :mod:`.hardware`, :mod:`.costs` -- hardware figures and the cycle/byte cost model.
* :mod:`.fixed` -- the fixed-point state-commit mirror of the RTL block.
"""
