"""cocotb scoreboard for the Verilated EDC: every decision against the golden model.

Run by ``tests/hw/test_edc_cocotb.py`` (through ``ahasd.tb.cocotb_run.run_cocotb``), once per parameter set.
Inputs change at the falling edge and outputs are read there too, so each loop iteration is one
clock cycle: the outputs read at a falling edge are those of the rising edge before it.
"""

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

from ahasd.hw.edc import decision_layout
from ahasd.sim.blocks.edc import EDC as GoldenEDC

from ahasd.tb.cocotb_run import params
from ahasd.sim.traces.edc_events import random_cycles, run_lengths_cycles


async def reset(dut):
    dut.draft__valid.value = 0
    dut.draft__payload.value = 0
    dut.verify__valid.value = 0
    dut.verify__payload.value = 0
    dut.rst.value = 1
    for _ in range(2):
        await FallingEdge(dut.clk)
    dut.rst.value = 0


async def check_stream(dut, golden, cycles):
    """Drive ``cycles`` and compare every decision; return the number of events driven."""
    layout = decision_layout(golden.params.index_bits)
    expected = None
    events = 0
    for n, (draft_fx, verify) in enumerate(cycles + [(None, None)]):
        await FallingEdge(dut.clk)
        if expected is None:
            assert int(dut.decision__valid.value) == 0, f"cycle {n}: unexpected decision"
        else:
            decision = layout.from_bits(int(dut.decision__payload.value))
            got = (int(dut.decision__valid.value), decision["continue"], decision.index)
            assert got == (1, int(expected.cont), expected.index), \
                f"cycle {n}: RTL {got}, golden {expected}"
        dut.draft__valid.value = draft_fx is not None
        dut.draft__payload.value = draft_fx or 0
        dut.verify__valid.value = verify is not None
        dut.verify__payload.value = bool(verify)
        events += (draft_fx is not None) + (verify is not None)
        expected = golden.step(draft_fx, verify)
    await FallingEdge(dut.clk)
    assert int(dut.llr.value) == golden.llr
    assert int(dut.pending.value) == len(golden.fifo)
    for name in ("decisions", "suppressed", "verifications", "squashes", "fifo_drops"):
        assert int(getattr(dut, name).value) == getattr(golden, name), name
    return events


@cocotb.test()
async def edc_matches_golden(dut):
    p = params()
    hw = p["hw"]
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    await reset(dut)
    golden = GoldenEDC(**hw)
    rng = random.Random(p["seed"])
    t = golden.params.thresholds      # entropies on this EDC's bucket thresholds too
    random_events = await check_stream(dut, golden, random_cycles(rng, p["random_cycles"], t))
    trace_events = await check_stream(dut, golden, run_lengths_cycles(rng, p["trace_cycles"], t))
    dut._log.info("EDC %s: %d random + %d trace events, %d decisions, %d suppressed, "
                  "%d squashes, %d FIFO drops", hw, random_events, trace_events,
                  golden.decisions, golden.suppressed, golden.squashes, golden.fifo_drops)
    assert random_events >= p["min_random_events"]
    assert golden.squashes > 0 and golden.fifo_drops > 0 and 0 < golden.suppressed
