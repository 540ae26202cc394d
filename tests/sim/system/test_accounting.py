"""Time and energy accounting pinned term by term (issue 20 point 6): tiny hand-computed runs of
the engine (a scripted source, fixed task durations) and hand-computed task costs on the shipped
configuration. Each expectation is written out here from the platform's figures, not taken from
the simulator's functions, so that dropping, mis-scaling or mis-assigning one term fails."""

from types import SimpleNamespace

import pytest

from ahasd.sim.system.config import load_config
from ahasd.sim.system.deciders import Deciders
from ahasd.sim.system.engine import run_engine
from ahasd.sim.system.runner import _bound_s, simulate
from ahasd.sim.system.systems import Timing, make_spec


class Script:
    """Batch 0 drafts [1], every later batch [1, 2, 3]; every verification rejects at once
    (residual 9)."""

    def draft(self, batch_id, context):
        n = 1 if batch_id == 0 else 3
        return [1, 2, 3][:n], [0.1] * n, None, -1

    def outcome(self, batch, context, length=None):
        return 0, 9

    def observe(self, drafted, accepted):
        pass


class FixedTiming:
    """A draft token 1 s / 10 pJ, a verification 2.5 s / 100 pJ, no overheads."""
    npu_hz, pim_hz = 1e9, 8e8
    gts_switch_s = tvc_decide_s = 0.0

    def __init__(self, layout=None):
        self.layout = layout

    def draft_token(self, kv):
        return 1.0, 10.0

    def draft_overhead_s(self, k, edc):
        return 0.0

    def verify(self, k, kv):
        return 2.5, 100.0

    def preverify(self, length, kv):
        return 1.0, 10.0


class Recorder(Deciders):
    """EDC always drafts on, TVC never pre-verifies; TVC records are kept."""

    def __init__(self):
        self.records = []

    def edc_draft(self, entropy_nats):
        return True

    def edc_verify(self, full):
        pass

    def tvc_preset(self, table, cycles, length):
        pass

    def tvc_record(self, table, cycles, length):
        self.records.append((table, cycles, length))

    def tvc_decide(self, kv_len, now, pending):
        return 0


def run(ablation="async", layout=None, deciders=None):
    return run_engine(make_spec("ahasd", ablation), FixedTiming(layout), Script(), [5, 6], 2,
                      deciders)


def test_a_squashed_batch_pays_its_drafted_and_in_flight_tokens():
    # batch 0 ([1]) drafted 0..1, verified 1..3.5 and rejected (commit 9); batch 1 drafted from
    # 1: tokens end at 2 and 3, the third is in flight at 3.5 and is charged in full; batch 2
    # drafted 3.5..6.5, verified 6.5..9 and rejected: the second token, the end
    t, out, st = run()
    assert t == 9.0 and out == [9, 9]
    assert st.energy_pj == {"pim": 10 + 3 * 10 + 3 * 10, "npu": 2 * 100.0}
    assert st.busy == {"pim": 1 + 2.5 + 3, "npu": 2 * 2.5}
    assert (st.draft_tokens_total, st.draft_tokens_done, st.squashed) == (7, 6, 1)
    assert st.stall == {}


def test_shared_ranks_stretch_the_overlap_and_count_it_as_stall():
    # the PIM at half speed while the NPU verifies (1..3.5): batch 1's first token takes 2 s
    # (ends at 3), the second would end at 5: one token done and one in flight at 3.5
    lay = SimpleNamespace(contention=True, shared=True, pim_factor=0.5, npu_factor=1.0,
                          overlaps=lambda model: True)
    t, _, st = run(layout=lay)
    assert t == 9.0
    assert st.energy_pj["pim"] == 10 + 2 * 10 + 3 * 10
    assert (st.draft_tokens_total, st.draft_tokens_done) == (6, 5)
    assert st.stall == {"pim": pytest.approx(2.5 * 0.5)}
    assert st.busy["pim"] == 1 + 2.5 + 3          # the stall is inside the busy time
    # the NPU at half speed while batch 1 drafts (1..4): 1.5 of its 2.5 s done by 4, the rest
    # alone: verified at 5; batch 1 (queued) squashed, batch 2 5..8, verified 8..10.5
    slow_npu = SimpleNamespace(contention=True, shared=True, pim_factor=1.0, npu_factor=0.5,
                               overlaps=lambda model: True)
    t, _, st = run(layout=slow_npu)
    assert t == 10.5 and st.stall == {"npu": pytest.approx(3 * 0.5)}
    assert st.busy["npu"] == pytest.approx(4 + 2.5)


def test_records_are_counted_in_their_own_clock():
    rec = Recorder()
    run("tvc", deciders=rec)
    # the NPU's verification in NPU cycles (1 GHz), the PIM's drafting in PIM cycles (800 MHz)
    assert ("nvct", int(2.5 * 1e9), 2) in rec.records
    assert ("pdct", int(1.0 * 8e8), 1) in rec.records
    assert ("pdct", int(3.0 * 8e8), 3) in rec.records


OPT = load_config().pair("opt")


def by_hand_pass(shape, n, kv):
    """(MACs, bytes, softmax, act, norm elements) of one pass, from the shape's figures."""
    d, h, hd, f = shape.d_model, shape.heads, shape.hd, shape.ffn
    layer = 4 * d * h * hd + shape.ffn_matrices * d * f          # MHA: kv_heads == heads
    kv_tok = 2 * h * hd
    L = shape.layers
    macs = L * (n * layer + 2 * h * hd * n * (kv + n)) + n * shape.vocab * d
    nbytes = L * (layer + kv_tok * kv + kv_tok * n) + shape.vocab * d
    return macs, nbytes, L * h * n * (kv + n), L * n * f, L * 2 * n * d + n * d


def test_a_draft_token_on_the_pim_by_hand():
    cfg = load_config(["memory.contention=false"])
    draft, target = OPT
    timing = Timing(cfg, make_spec("ahasd"), draft, target, {"draft": 0.0, "target": 0.0})
    macs, nbytes, sm, act, norm = by_hand_pass(draft, 1, 100)
    # energy: 0.32 pJ/MAC, 1.56 pJ/b in-bank (column path included), AAU pJ per element
    pj = macs * 0.32 + nbytes * 8 * (0.11 + 0.44 + 1.01) + sm * 1.2 + act * 0.8 + norm * 1.0
    assert timing.draft_token(100)[1] == pytest.approx(pj, rel=1e-9)
    # time: 16 units x 32 B / 4 cycles x 800 MHz x efficiency_raw, no cap, > compute-bound
    rate = 16 * 32 / 4 * 800e6 * cfg.pim.efficiency_raw
    gemv = max(macs, nbytes) / rate
    t = timing.draft_token(100)[0]
    assert gemv < t < gemv * 1.05                   # the rest: the AAUs and unit imbalance


def test_a_verification_on_the_npu_by_hand():
    cfg = load_config()
    draft, target = OPT
    timing = Timing(cfg, make_spec("ahasd"), draft, target, {"draft": 0.0, "target": 0.0})
    macs, nbytes, sm, act, norm = by_hand_pass(target, 5, 100)
    # the target's weights and KV cross the off-chip bus: 0.55 + 1.01 + 1.23 + 1.0 pJ/b
    pj = macs * 0.32 + nbytes * 8 * 3.79 + (3 * sm + act + 2 * norm) * 0.32
    assert timing.verify(4, 100)[1] == pytest.approx(pj, rel=1e-9)
    # memory-bound: bytes over 51.2 GB/s x 0.85, + the vector passes, + the result descriptor
    vec = (3 * sm + act + 2 * norm) / (2 * 8.2e12)
    desc = (10 + 1) / 1e9                        # 64 B over a 64 B bus: latency + one beat
    assert timing.verify(4, 100)[0] == pytest.approx(nbytes / (51.2e9 * 0.85) + vec + desc,
                                                     rel=1e-3)


def test_offload_streams_the_model_that_overflows_on_its_own_passes():
    cfg = load_config()
    draft, target = OPT
    spec = make_spec("ahasd")
    plain = Timing(cfg, spec, draft, target, {"draft": 0.0, "target": 0.0})
    off = Timing(cfg, spec, draft, target, {"draft": 0.0, "target": 2e9})
    # 2 GB over UFS 4.0 (4.2 GB/s, 10 pJ/b) on every target pass, none on a draft token
    dt = off.verify(4, 100)[0] - plain.verify(4, 100)[0]
    de = off.verify(4, 100)[1] - plain.verify(4, 100)[1]
    assert dt == pytest.approx(2e9 / 4.2e9) and de == pytest.approx(2e9 * 8 * 10.0)
    assert off.preverify(3, 100)[0] - plain.preverify(3, 100)[0] == pytest.approx(2e9 / 4.2e9)
    assert off.draft_token(100) == plain.draft_token(100)


def test_the_asynchronous_bound_takes_the_slower_device():
    cfg = load_config()
    draft, target = OPT
    spec = make_spec("ahasd")
    timing = Timing(cfg, spec, draft, target, {"draft": 0.0, "target": 0.0})
    wd = draft.layers * draft.layer_params + draft.head_params
    wt = target.layers * target.layer_params + target.head_params
    for passes, tokens in ((2, 10), (10, 2), (0, 50)):
        st = SimpleNamespace(npu_passes=passes, draft_tokens_done=tokens, preverifies=1)
        npu = passes * wt / 51.2e9
        pim = tokens * wd / cfg.pim.pim_mac_per_s + wt / cfg.pim.pim_mac_per_s
        shared = (passes * wt + wt + tokens * wd) / (16 * 32 / 4 * 800e6)
        assert _bound_s(cfg, spec, timing, st) == pytest.approx(max(npu, pim, shared))
    off = Timing(load_config(["memory.contention=false"]), spec, draft, target,
                 {"draft": 0.0, "target": 0.0})
    st = SimpleNamespace(npu_passes=2, draft_tokens_done=10, preverifies=0)
    assert _bound_s(cfg, spec, off, st) == pytest.approx(max(2 * wt / 51.2e9,
                                                             10 * wd / cfg.pim.pim_mac_per_s))
    sync = make_spec("npu-lpddr5")
    st = SimpleNamespace(npu_passes=2, draft_tokens_done=10, preverifies=0)
    assert _bound_s(cfg, sync, Timing(cfg, sync, draft, target, {"draft": 0.0, "target": 0.0}),
                    st) == pytest.approx(2 * wt / 51.2e9 + 10 * wd / 51.2e9)


def test_background_power_goes_to_the_devices_that_hold_it():
    r = simulate("ahasd", "opt", "fixed", tokens=24, max_files=40)
    b = r.energy_breakdown_mj
    assert b["background_npu"] == pytest.approx(0.5 * r.time_s * 1e3)
    assert b["background_pim"] == pytest.approx(0.45 * r.time_s * 1e3)
    assert "background_lpddr5" not in b
    n = simulate("npu-lpddr5", "opt", "fixed", tokens=24, max_files=40)
    assert n.energy_breakdown_mj["background_lpddr5"] == pytest.approx(0.45 * n.time_s * 1e3)
    for d in r.devices.values():
        assert d["busy_s"] + d["idle_s"] == pytest.approx(r.time_s)
        assert 0 <= d["stall_memory_s"] <= d["busy_s"]


def test_the_npus_share_of_a_shared_rank_by_hand():
    r = simulate("ahasd", "opt", "fixed", tokens=24, max_files=40)
    # 51.2 GB/s x 0.85 over 16 ranks, each rank 32 B / 4 cycles x 800 MHz = 6.4 GB/s raw
    demand = 51.2 * 0.85 / 16 / 6.4
    assert r.memory["npu_slot_demand"] == pytest.approx(demand)
    assert r.memory["pim_speed_shared"] == pytest.approx(1 - demand)     # < half: host keeps it
    assert r.memory["npu_speed_shared"] == 1.0
    assert r.derived["pim_mac_per_s"] == pytest.approx(102.4e9 * load_config().pim.efficiency_raw)


class AcceptFirst(Script):
    """As :class:`Script`, but batch 0 is accepted whole."""

    def outcome(self, batch, context, length=None):
        return (len(batch.tokens), 7) if batch.id == 0 else (0, 9)


class StopSecond(Recorder):
    """EDC stops after the second batch; TVC asks for 2 tokens."""

    def __init__(self):
        super().__init__()
        self.drafts = 0

    def edc_draft(self, entropy_nats):
        self.drafts += 1
        return self.drafts != 2

    def tvc_decide(self, kv_len, now, pending):
        return 2


class SlowTiming(FixedTiming):
    """Verification 10 s, a pre-verification 20 s."""

    def verify(self, k, kv):
        return 10.0, 100.0

    def preverify(self, length, kv):
        return 20.0, 50.0


def test_partitioned_ranks_draft_beside_a_pre_verification():
    # batch 0 drafted 0..1, verified 1..11 (accepted); batch 1 drafted 1..4, then EDC stops:
    # TVC pre-verifies batch 1 from 4 (20 s). At 11 the stop lapses: on partitioned ranks
    # batch 2 is drafted at once beside the pre-verification (other units, no GTS switch);
    # on shared ranks drafting waits for the pre-verification's units
    def spans(shared):
        lay = SimpleNamespace(contention=False, shared=shared, overlaps=lambda m: False)
        t, _, st = run_engine(make_spec("ahasd", "tvc"), SlowTiming(lay), AcceptFirst(), [5, 6],
                              5, StopSecond(), keep_timeline=True)
        return t, st, [(k, a, b) for d, k, a, b in st.timeline if d == "pim"]
    t, st, pim = spans(False)
    pre = [(a, b) for k, a, b in pim if k == "preverify"]
    assert pre[0][0] == 4.0
    assert ("draft", 11.0, 14.0) in pim                       # beside the pre-verification
    assert st.gts_switches == 0
    union = sorted((a, b) for _, a, b in pim)
    merged, end = 0.0, 0.0
    for a, b in union:
        merged += max(0.0, b - max(a, end))
        end = max(end, b)
    assert st.busy["pim"] == pytest.approx(merged) and st.busy["pim"] <= t
    t2, st2, pim2 = spans(True)
    for k, a, b in pim2:
        if k == "draft":
            assert all(b <= pa or a >= pb for kk, pa, pb in pim2 if kk == "preverify")
    assert st2.gts_switches > 0
