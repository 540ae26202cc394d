"""The GTS golden model on its own: defaults, the one-cycle switch, refusal while switching
without loss, counters."""

import pytest

from ahasd.sim.blocks.gts import GTS, GTSParams, State, TaskKind

DRAFT = (int(TaskKind.DRAFT), 5)
PRE = (int(TaskKind.PREVERIFY), 2)


def test_default_masks():
    p = GTSParams()
    assert p.draft_mask == 0x7FFF and p.preverify_mask == 0x8000
    assert GTSParams(ranks=4).draft_mask == 0b0111


def test_switch_takes_one_cycle_and_refuses_requests_in_it():
    g = GTS()
    out = g.step(DRAFT)                       # accepted from IDLE
    assert out.ready and out.state == State.IDLE and out.rank_en == 0
    out = g.step(PRE, done=True)              # switch cycle: DRAFT mask on, task starts,
    assert out.state == State.DRAFT and out.rank_en == 0x7FFF and out.o_valid
    assert out.switching and not out.ready    # ... and the request is refused despite done
    out = g.step(PRE)                         # the 1-cycle draft task ended: IDLE, accepted
    assert out.state == State.IDLE and out.ready
    out = g.step(None)
    assert out.state == State.PREVERIFY and out.rank_en == 0x8000 and out.switching
    assert (out.o_kind, out.o_length) == PRE
    assert g.switch_count == 2 and g.stall_count == 1


def test_same_mode_back_to_back_is_not_a_switch():
    g = GTS()
    g.step(DRAFT)
    g.step(None)                              # switch cycle (first task after reset)
    out = g.step(DRAFT, done=True)            # done and the next draft task in one cycle
    assert out.ready
    out = g.step(None)
    assert out.state == State.DRAFT and out.o_valid and not out.switching
    assert g.switch_count == 1


def test_done_in_idle_is_ignored_and_busy_counts_non_idle_cycles():
    g = GTS()
    g.step(None, done=True)
    assert g.state == State.IDLE
    g.step(DRAFT)
    for _ in range(5):
        g.step(None)
    g.step(None, done=True)
    g.step(None)
    assert g.busy_count == 6 and g.state == State.IDLE   # the 6 DRAFT cycles


def test_mask_write_takes_effect_next_cycle():
    g = GTS(ranks=4)
    g.step(PRE)
    out = g.step(None, cfg=(0b0001, 0b0110))
    assert out.rank_en == 0b1000
    assert g.step(None).rank_en == 0b0110


def test_bad_parameters_are_rejected():
    with pytest.raises(ValueError, match=r"ranks must be an integer in 2..64, not 65"):
        GTS(ranks=65)
    with pytest.raises(ValueError, match=r"draft_mask must be an integer in 1..65535 \(a mask "
                                         r"enabling at least one of 16 ranks\), not -1"):
        GTS(draft_mask=-1)
