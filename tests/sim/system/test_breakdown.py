"""``breakdown_s`` (issue 21 point 4): each device's time split by what it spent it on, the parts
adding up to ``time_s``. Hand-made engine runs (a scripted source, fixed task durations) with
every part written out here from the schedule, and simulated runs of every system."""

import json
from types import SimpleNamespace

import pytest

from ahasd.cli import main
from ahasd.sim.system.engine import run_engine
from ahasd.sim.system.runner import simulate, time_breakdown
from ahasd.sim.system.systems import make_spec

from .test_accounting import AcceptFirst, FixedTiming, Recorder, Script, SlowTiming, StopSecond

NPU_KEYS = {"verify_s", "wait_redraft_s", "wait_edc_s", "stall_memory_s", "other_s"}
PIM_KEYS = {"draft_useful_s", "draft_squashed_s", "preverify_s", "idle_s"}
BOTH_KEYS = {"verify_s", "draft_useful_s", "draft_squashed_s", "stall_memory_s", "idle_s"}


def split(spec, timing, source, n, deciders=None):
    t, _, st = run_engine(spec, timing, source, [5, 6], n, deciders)
    return t, st, time_breakdown(spec, st, t)


def test_rejections_split_into_redraft_wait_and_squashed_drafting():
    # batch 0 ([1]) drafted 0..1, verified 1..3.5 and rejected; batch 1 drafted from 1 and
    # squashed at 3.5 (2.5 s of drafting); batch 2 drafted 3.5..6.5, verified 6.5..9, rejected.
    # NPU: verifies 2 x 2.5 s; waits 0..1 for the first draft (other) and 3.5..6.5 for the
    # redraft. PIM: 1 + 3 s useful, 2.5 s squashed, idle 9 - 6.5
    t, st, b = split(make_spec("ahasd", "async"), FixedTiming(), Script(), 2)
    assert t == 9.0 and st.squashed == 1
    assert b["npu"] == pytest.approx({"verify_s": 5.0, "wait_redraft_s": 3.0, "wait_edc_s": 0.0,
                                      "stall_memory_s": 0.0, "other_s": 1.0})
    assert b["pim"] == pytest.approx({"draft_useful_s": 4.0, "draft_squashed_s": 2.5,
                                      "preverify_s": 0.0, "idle_s": 2.5})


class AcceptAll(Script):
    """As :class:`Script`, but every batch is accepted whole (bonus token 7)."""

    def outcome(self, batch, context, length=None):
        return len(batch.tokens), 7


class StopAlways(Recorder):
    """EDC stops after every batch."""

    def edc_draft(self, entropy_nats):
        return False


def test_an_edc_stop_is_a_wait_of_its_own():
    # batch 0 drafted 0..1, EDC stops; verified 1..3.5 (commit 1, 7); batch 1 drafted 3.5..6.5
    # (the NPU waits for it after the EDC stop), EDC stops; verified 6.5..9: 6 tokens
    t, st, b = split(make_spec("ahasd", "edc"), FixedTiming(), AcceptAll(), 6, StopAlways())
    assert t == 9.0 and st.edc_suppressed == 2
    assert b["npu"] == pytest.approx({"verify_s": 5.0, "wait_redraft_s": 0.0, "wait_edc_s": 3.0,
                                      "stall_memory_s": 0.0, "other_s": 1.0})
    assert b["pim"] == pytest.approx({"draft_useful_s": 4.0, "draft_squashed_s": 0.0,
                                      "preverify_s": 0.0, "idle_s": 5.0})


def test_the_npus_memory_stall_is_taken_out_of_verify():
    # the NPU at half speed while batch 1 drafts (1..4): verified at 5 (1.5 s lost), batch 1
    # squashed, batch 2 drafted 5..8, verified 8..10.5 (test_accounting has the schedule)
    lay = SimpleNamespace(contention=True, shared=True, pim_factor=1.0, npu_factor=0.5,
                          overlaps=lambda model: True)
    t, st, b = split(make_spec("ahasd", "async"), FixedTiming(lay), Script(), 2)
    assert t == 10.5
    assert b["npu"]["stall_memory_s"] == pytest.approx(1.5)
    assert b["npu"]["verify_s"] == pytest.approx(4.0 + 2.5 - 1.5)
    assert b["npu"]["wait_redraft_s"] == pytest.approx(3.0)     # 5..8
    assert b["pim"]["draft_squashed_s"] == pytest.approx(3.0)   # batch 1, 1..4, queued


@pytest.mark.parametrize("shared", [False, True])
def test_preverification_and_an_overlap_are_counted_once(shared):
    # test_accounting's partitioned-ranks schedule: a pre-verification from 4 (20 s), and on
    # partitioned ranks a draft beside it
    lay = SimpleNamespace(contention=False, shared=shared, overlaps=lambda m: False)
    t, st, b = split(make_spec("ahasd", "tvc"), SlowTiming(lay), AcceptFirst(), 5, StopSecond())
    pim = b["pim"]
    assert pim["preverify_s"] > 0
    assert sum(pim.values()) == pytest.approx(t, rel=1e-12)
    assert pim["idle_s"] == pytest.approx(t - st.busy["pim"])
    assert sum(b["npu"].values()) == pytest.approx(t, rel=1e-12)


def check(r):
    d = r.as_dict()
    spec = make_spec(r.system, r.ablation or "tvc")
    assert set(d["breakdown_s"]) == set(d["devices"])
    for dev, parts in d["breakdown_s"].items():
        want = (BOTH_KEYS if spec.draft_dev == spec.verify_dev
                else NPU_KEYS if dev == spec.verify_dev else PIM_KEYS)
        assert set(parts) == want, dev
        assert abs(sum(parts.values()) - d["time_s"]) <= 1e-9 * d["time_s"], (dev, parts)
        assert min(parts.values()) >= -1e-12 * d["time_s"], (dev, parts)
        busy = d["devices"][dev]["busy_s"]
        idle = parts.get("idle_s", parts.get("other_s", 0.0) + parts.get("wait_redraft_s", 0.0)
                         + parts.get("wait_edc_s", 0.0))
        assert idle == pytest.approx(d["time_s"] - busy, abs=1e-9 * d["time_s"])
        if "stall_memory_s" in parts:
            assert parts["stall_memory_s"] == d["devices"][dev]["stall_memory_s"]


@pytest.mark.parametrize("system,ablation", [("ahasd", "tvc"), ("ahasd", "async"),
                                             ("ahasd", "edc"), ("npu-lpddr5", "tvc"),
                                             ("specpim", "tvc"), ("gpu", "tvc")])
def test_every_system_adds_up(system, ablation):
    r = simulate(system, "opt", "adaedl", ablation=ablation, tokens=96, offload=True,
                 max_files=40)
    check(r)
    if system == "ahasd" and ablation != "edc":
        assert r.breakdown_s["npu"]["wait_redraft_s"] > 0


def test_partitioned_ranks_with_low_acceptance_add_up():
    r = simulate("ahasd", "opt", "adaedl", tokens=96, acceptance_pair="low", max_files=40,
                 overrides=("memory.placement=partitioned",))
    check(r)


def test_simulate_json_carries_breakdown(capsys):
    assert main(["simulate", "--tokens", "32", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d["breakdown_s"]["npu"]) == NPU_KEYS
    assert sum(d["breakdown_s"]["pim"].values()) == pytest.approx(d["time_s"], rel=1e-9)
