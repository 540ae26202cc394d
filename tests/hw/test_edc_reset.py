"""The EDC under a synchronous (soft) reset, as the controller builds it (``ResetInserter``).

A reset clears the EDC's state but not the PHT; a verify in a reset cycle still trains the PHT
(its update is decided from the state before the reset), as the controller's EDC always did. An
implementation that writes the PHT's update later than its cycle (a registered update with
forwarding) must keep an update decided in a reset cycle: the reference is the golden model,
given that verify (its PHT only) and then replaced by a fresh one with the PHT carried over.
"""

import random

import pytest
from amaranth import Module, ResetInserter, Signal

from ahasd.hw.edc import EDC
from ahasd.sim.blocks.edc import EDC as GoldenEDC
from ahasd.sim.traces.edc_events import random_cycles
from ahasd.tb import amaranth_sim

PARAM_SETS = [
    {},
    {"history_depth": 2, "bucket_bits": 1, "llr_bits": 1, "fifo_depth_log2": 1},
]


def reset_cycles(rng, n, thresholds):
    """Random EDC events with a reset in about one cycle in twelve, often with a verify."""
    return [(draft, verify, rng.random() < 1 / 12)
            for draft, verify in random_cycles(rng, n, thresholds)]


def run(params, cycles):
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
            ctx.set(edc.draft.valid, draft_fx is not None)
            ctx.set(edc.draft.payload, draft_fx or 0)
            ctx.set(edc.verify.valid, verify is not None)
            ctx.set(edc.verify.payload, bool(verify))
            decision = ctx.get(edc.decision.payload)
            got = (ctx.get(edc.decision.valid), decision["continue"], decision.index)
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


@pytest.mark.parametrize("params", PARAM_SETS, ids=["default", "tiny"])
def test_soft_reset_keeps_the_pht_and_its_update_of_the_reset_cycle(params):
    rng = random.Random(7)
    t = GoldenEDC(**params).params.thresholds
    trained = run(params, reset_cycles(rng, 4000, t))
    assert trained > 10       # the trace has PHT updates decided in reset cycles
