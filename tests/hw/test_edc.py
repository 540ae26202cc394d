"""Fast tier: the EDC RTL in Amaranth's simulator against the golden model, cycle by cycle."""

import random

import pytest
from amaranth import Module, ResetInserter, Signal

from ahasd.hw.edc import EDC
from ahasd.sim.blocks.edc import EDC as GoldenEDC
from ahasd.sim.blocks.edc import entropy_to_fx
from ahasd.sim.traces.edc_events import random_cycles, run_lengths_cycles
from ahasd.tb import amaranth_sim

PARAM_SETS = [
    {},
    {"history_depth": 4, "bucket_bits": 2, "llr_bits": 2, "fifo_depth_log2": 2},
    {"history_depth": 16, "bucket_bits": 3, "llr_bits": 4, "counter_bits": 3,
     "counter_reset": 3, "fifo_depth_log2": 4, "h_max_nats": 8.0},
]


def _drive(ctx, dut, draft_fx, verify):
    """Offer one cycle's events (``None``: no event) and return the decision ports
    ``(valid, continue, index)`` of this cycle."""
    ctx.set(dut.draft.valid, draft_fx is not None)
    ctx.set(dut.draft.payload, draft_fx or 0)
    ctx.set(dut.verify.valid, verify is not None)
    ctx.set(dut.verify.payload, bool(verify))
    decision = ctx.get(dut.decision.payload)
    return ctx.get(dut.decision.valid), decision["continue"], decision.index


def simulate(params, cycles):
    """Drive ``cycles`` [(draft_fx or None, verify or None)] into the RTL; compare each decision
    and the status outputs with the golden model."""
    dut = EDC(**params)
    golden = GoldenEDC(**params)
    mismatches = []

    async def testbench(ctx):
        expected = None
        for n, (draft_fx, verify) in enumerate(cycles + [(None, None)]):
            got = _drive(ctx, dut, draft_fx, verify)
            if expected is not None:
                if got != (1, expected.cont, expected.index):
                    mismatches.append((n, got, expected))
            else:
                assert ctx.get(dut.decision.valid) == 0
            expected = golden.step(draft_fx, verify)
            await ctx.tick()
        await ctx.tick()
        assert ctx.get(dut.llr) == golden.llr
        assert ctx.get(dut.pending) == len(golden.fifo)
        for name in ("decisions", "suppressed", "verifications", "squashes", "fifo_drops"):
            assert ctx.get(getattr(dut, name)) == getattr(golden, name), name

    amaranth_sim.simulate(dut, testbench, clocks=1e-9)
    assert not mismatches, mismatches[:5]
    return golden


@pytest.mark.parametrize("params", PARAM_SETS, ids=["default", "small", "deep"])
def test_random_events_match_golden(params):
    rng = random.Random(1)
    t = GoldenEDC(**params).params.thresholds     # the same boundary cases as the cocotb tier
    golden = simulate(params, random_cycles(rng, 2000, t) + run_lengths_cycles(rng, 1000, t))
    # The trace exercised what it should: stops and continues, squashes and FIFO overflow.
    assert 0 < golden.suppressed < golden.decisions
    assert golden.squashes > 0 and golden.fifo_drops > 0


def test_stimulus_hits_every_bucket_threshold():
    """Boundaries by construction: each threshold exactly and one code below, in the fast tier's
    stream for every parameter set."""
    for params in PARAM_SETS:
        t = GoldenEDC(**params).params.thresholds
        drafts = {h for h, _ in random_cycles(random.Random(1), 2000, t) if h is not None}
        assert set(t) <= drafts and {x - 1 for x in t} <= drafts, params


def test_long_accept_and_reject_runs_match_golden():
    golden = simulate({}, run_lengths_cycles(random.Random(2), 2000))
    assert golden.squashes > 0 and golden.verifications > golden.squashes


def test_same_cycle_verify_is_applied_before_draft():
    # One batch pending, then a rejecting verify and a new draft in the same cycle: the draft sees
    # the squashed state, so LLR is 1 (not 0) and one batch is pending afterwards.
    golden = simulate({}, [(entropy_to_fx(3.0), None), (entropy_to_fx(9.0), False)])
    assert golden.llr == 1 and len(golden.fifo) == 1 and golden.squashes == 1


def test_verify_with_nothing_pending_changes_nothing():
    golden = simulate({}, [(None, True), (None, False), (entropy_to_fx(1.0), None)])
    assert golden.verifications == 0 and golden.llr == 1


@pytest.mark.parametrize("kwargs, message", [
    ({"history_depth": 6}, "history_depth must be a power of two in 2..64, not 6"),
    ({"bucket_bits": 0}, "bucket_bits must be an integer in 1..4, not 0"),
    ({"counter_reset": 4}, "counter_reset must be an integer in 0..3, not 4"),
    ({"h_max_nats": 20.0}, r"h_max_nats must be a finite number in \(0, 16\), not 20.0"),
])
def test_rtl_parameters_are_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EDC(**kwargs)


@pytest.mark.parametrize("counter_bits", [1, 3])
def test_tiny_pht_verify_and_draft_on_one_entry_match_golden(counter_bits):
    """An 8-entry PHT, so that a draft in a verify's cycle often looks up the very entry the
    verify writes (the lookup's answer must be the written counter's), at both ends of the
    counter widths' thresholds (1 bit: threshold 1 = counter_max)."""
    params = {"history_depth": 2, "bucket_bits": 1, "llr_bits": 1, "counter_bits": counter_bits,
              "fifo_depth_log2": 1}
    rng = random.Random(counter_bits)
    t = GoldenEDC(**params).params.thresholds
    golden = simulate(params, random_cycles(rng, 3000, t) + run_lengths_cycles(rng, 1500, t))
    assert 0 < golden.suppressed < golden.decisions
    assert golden.squashes > 0

# -- soft reset (the controller's ResetInserter) ---------------------------------------------
# The EDC under a synchronous (soft) reset, as the controller builds it.
#
# A reset clears the EDC's state but not the PHT; a verify in a reset cycle still trains the PHT
# (its update is decided from the state before the reset), as the controller's EDC always did. An
# implementation that writes the PHT's update later than its cycle (a registered update with
# forwarding) must keep an update decided in a reset cycle: the reference is the golden model,
# given that verify (its PHT only) and then replaced by a fresh one with the PHT carried over.

RESET_PARAM_SETS = [
    {},
    {"history_depth": 2, "bucket_bits": 1, "llr_bits": 1, "fifo_depth_log2": 1},
]


def reset_cycles(rng, n, thresholds):
    """Random EDC events with a reset in about one cycle in twelve, often with a verify."""
    return [(draft, verify, rng.random() < 1 / 12)
            for draft, verify in random_cycles(rng, n, thresholds)]


def simulate_with_resets(params, cycles):
    edc = EDC(**params)
    rst = Signal()
    top = Module()
    top.submodules.edc = ResetInserter(rst)(edc)
    golden = GoldenEDC(**params)
    mismatches = []
    trained_in_reset = 0

    async def testbench(ctx):
        nonlocal golden, trained_in_reset
        expected = None
        for n, (draft_fx, verify, reset) in enumerate(cycles + [(None, None, False)]):
            ctx.set(rst, reset)
            got = _drive(ctx, edc, draft_fx, verify)
            want = (0, 0) if expected is None else (1, expected.cont)
            if got[:2] != want or (expected is not None and got[2] != expected.index):
                mismatches.append((n, got, expected))
            if reset:
                pht = list(golden.pht)
                if verify is not None and golden.fifo:
                    golden.step(None, verify)     # the PHT's update of the reset cycle
                    trained_in_reset += golden.pht != pht
                    pht = list(golden.pht)
                golden = GoldenEDC(**params)
                golden.pht = pht
                expected = None
            else:
                expected = golden.step(draft_fx, verify)
            await ctx.tick()

    amaranth_sim.simulate(top, testbench, clocks=1e-9)
    assert not mismatches, mismatches[:5]
    return trained_in_reset


@pytest.mark.parametrize("params", RESET_PARAM_SETS, ids=["default", "tiny"])
def test_soft_reset_keeps_the_pht_and_its_update_of_the_reset_cycle(params):
    rng = random.Random(7)
    t = GoldenEDC(**params).params.thresholds
    trained = simulate_with_resets(params, reset_cycles(rng, 4000, t))
    assert trained > 10       # the trace has PHT updates decided in reset cycles


@pytest.mark.parametrize("params", PARAM_SETS + [RESET_PARAM_SETS[1]],
                         ids=["default", "small", "deep", "tiny"])
def test_registered_window_sums_equal_their_formulas(params):
    """The sums of the history windows are registers computed from the next histories: in
    every cycle of random traffic with soft resets each equals the sum of its window."""
    edc = EDC(**params)
    rst = Signal()
    top = Module()
    top.submodules.edc = ResetInserter(rst)(edc)
    rng = random.Random(3)
    cycles = reset_cycles(rng, 1500, GoldenEDC(**params).params.thresholds)
    seen = set()

    async def testbench(ctx):
        for draft_fx, verify, reset in cycles:
            ctx.set(rst, reset)
            _drive(ctx, edc, draft_fx, verify)
            for register, formula in edc.shadowed:
                value = ctx.get(register)
                assert value == (formula if isinstance(formula, int) else ctx.get(formula))
                seen.add(value)
            await ctx.tick()

    amaranth_sim.simulate(top, testbench, clocks=1e-9)
    assert len(seen) > 1     # the sums moved
