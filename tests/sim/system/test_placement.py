"""Weights and KV caches on ranks (issue 20 point 2): per-rank capacity with the KV cache as it
grows, passes as long as the most loaded unit, the model's share of the units by placement."""

from types import SimpleNamespace

import pytest

from ahasd.sim.system.config import ConfigError, ModelShape, load_config
from ahasd.sim.system.memory import layout, unit_imbalance
from ahasd.sim.system.runner import _bound_s, simulate
from ahasd.sim.system.systems import CapacityError, Timing, make_spec, placement

TINY = ModelShape("tiny", d_model=64, layers=1, heads=2, kv_heads=2, ffn=96, ffn_matrices=2,
                  vocab=100, tied_embeddings=True)


def test_most_loaded_unit_by_hand():
    # 4 units, 32-row tiles. Q, K, V, O: 64 rows = 2 tiles -> 1 per unit on 2 units: the
    # busiest holds 32 x 64 per matrix; up (96 rows, 3 tiles) 32 x 64; down 32 x 96; head
    # (100 rows, 4 tiles) 32 x 64. Mean: all MACs / 4.
    busiest = 4 * 32 * 64 + 32 * 64 + 32 * 96 + 32 * 64
    total = 4 * 64 * 64 + 96 * 64 + 64 * 96 + 100 * 64
    assert unit_imbalance(TINY, 4, 32) == pytest.approx(busiest * 4 / total)
    assert unit_imbalance(TINY, 1, 32) == pytest.approx(32 * (8 * 64 + 3 * 64 + 2 * 96 + 4 * 64)
                                                        / total)


def test_partitioned_runs_each_model_on_its_ranks_only():
    cfg = load_config(["memory.placement=partitioned", "memory.draft_ranks=4"])
    draft, target = cfg.pair("opt")
    lay = layout(cfg, draft, target)
    assert (lay.draft_ranks, lay.target_ranks, lay.shared) == (4, 12, False)
    assert lay.pim_speed("draft") == pytest.approx(4 / 16 / unit_imbalance(draft, 4, 32))
    striped = Timing(load_config(), make_spec("ahasd"), draft, target, {"draft": 0, "target": 0})
    part = Timing(cfg, make_spec("ahasd"), draft, target, {"draft": 0, "target": 0})
    # the draft's GEMVs on 4 of the 16 units: about 4 times as long
    ratio = part.draft_token(100)[0] / striped.draft_token(100)[0]
    assert 3.5 < ratio < 4.1
    assert part.draft_token(100)[1] == striped.draft_token(100)[1]     # same work, same energy
    # the draft's ranks are not the NPU's: only a pre-verification shares ranks with it
    assert not lay.overlaps("draft") and lay.overlaps("target")
    assert layout(load_config(), draft, target).overlaps("draft")
    assert not layout(load_config(["memory.contention=false"]), draft, target).overlaps("target")


def test_capacity_per_rank_with_the_kv_cache_as_it_grows():
    spec = make_spec("ahasd")
    cfg = load_config(["memory.placement=partitioned", "memory.draft_ranks=12"])
    draft, target = cfg.pair("llama2")
    # llama2-13b on 4 ranks: 13.0 GB / 4 = 3.26 GB per rank (whole tiles) + KV, 409,600 B/token
    # over the 4 ranks: fits at 1,000 tokens, not at 10,000 (4 GB a rank)
    assert placement(cfg, spec, draft, target, 1000, offload=False)[0] == {"draft": 0.0,
                                                                           "target": 0.0}
    with pytest.raises(CapacityError, match=r"on the most loaded rank \(partitioned\), more "
                                            r"than the 4 GB of a rank"):
        placement(cfg, spec, draft, target, 10000, offload=False)
    stream, notes = placement(cfg, spec, draft, target, 10000, offload=True)
    assert stream["target"] > 0 and "lpddr5-pim" in notes[0]
    # the pair fits 64 GB striped at the same length
    assert placement(load_config(), spec, draft, target, 10000, offload=False)[0]["target"] == 0
    with pytest.raises(ConfigError, match=r"memory\.draft_ranks = 1: the draft model needs "
                                          r"\d+\.\d GB per rank"):
        placement(load_config(["memory.placement=partitioned", "memory.draft_ranks=1"]), spec,
                  draft, target, 1000, offload=True)


def test_contention_never_raises_the_bound_and_off_has_no_stall():
    on = simulate("ahasd", "opt", "adaedl", tokens=96, max_files=40)
    off = simulate("ahasd", "opt", "adaedl", tokens=96, max_files=40,
                   overrides=["memory.contention=false"])
    assert on.memory["contention"] and not off.memory["contention"]
    assert on.devices["pim"]["stall_memory_s"] > 0
    assert all(d["stall_memory_s"] == 0 for d in off.devices.values())
    # the same counts give a bound time at least as long with the ranks shared
    cfg_on, cfg_off = load_config(), load_config(["memory.contention=false"])
    draft, target = cfg_on.pair("opt")
    spec = make_spec("ahasd")
    t_on = Timing(cfg_on, spec, draft, target, {"draft": 0, "target": 0})
    t_off = Timing(cfg_off, spec, draft, target, {"draft": 0, "target": 0})
    for passes, tokens, pre in ((0, 100, 0), (30, 100, 5), (100, 10, 0), (50, 400, 20)):
        st = SimpleNamespace(npu_passes=passes, draft_tokens_done=tokens, preverifies=pre)
        assert _bound_s(cfg_on, spec, t_on, st) >= _bound_s(cfg_off, spec, t_off, st)


def test_per_bank_units_are_bounded_by_the_busiest_unit_and_the_internal_cap():
    draft, target = load_config().pair("opt")
    zero = {"draft": 0.0, "target": 0.0}

    def token_s(units, bw=256.0):
        cfg = load_config([f"pim.units={units}", f"pim.internal_bw_gbps={bw}",
                           "memory.contention=false"])
        timing = Timing(cfg, make_spec("ahasd"), draft, target, zero)
        return timing.draft_token(100)[0], timing.dev["pim"].pass_s(
            *_work(draft, 100), draft.layers, nonlinear=False)
    t16, g16 = token_s(16)
    t64, _ = token_s(64)
    t256, _ = token_s(256)
    # 64 and 256 units: 409.6 / 1630 G MAC/s raw, both held to the 256 GB/s cap
    assert t64 == pytest.approx(t256)
    assert 2.3 < t16 / t64 < 2.52
    # with the cap lifted, 256 units are bounded by the busiest unit: a 2048-row matrix has
    # 64 tiles of 32 rows, so only 64 of the 256 units work (imbalance ~2.9)
    imb = unit_imbalance(draft, 256, 32)
    assert 2.8 < imb < 2.9
    t256_free, _ = token_s(256, bw=4000.0)
    gemv16 = g16 * unit_imbalance(draft, 16, 32)
    assert t256_free - (t16 - gemv16) == pytest.approx(gemv16 * 16 / 256 * imb
                                                       / unit_imbalance(draft, 16, 32), rel=0.02)


def _work(shape, kv):
    from ahasd.sim.system.workload import head_work, layer_work
    return layer_work(shape, 1, kv), head_work(shape, 1)
