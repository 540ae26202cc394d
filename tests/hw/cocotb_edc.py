"""cocotb scoreboard for the Verilated EDC: every decision against the golden model.

Run by ``tests/hw/test_edc_cocotb.py`` (through ``ahasd.tb.cocotb_run.run_cocotb``), once per
parameter set. The ``draft`` and ``verify`` streams are the shared stream sources
(:mod:`ahasd.tb.cocotb_streams`); a cycle-by-cycle stimulus ``[(draft or None, verify or
None)]`` becomes each port's items plus its idle cycles (:func:`ahasd.tb.generators.replay`), so
the RTL sees exactly the stimulus's cycles. The ``decision`` stream is a shared sink unpacking
the payload through :func:`ahasd.hw.edc.decision_layout`. All three streams are valid-only
(``always_ready``): an offered event is taken in its cycle.

Every output of the EDC comes from a register, so the drivers run at the falling edge only
(:func:`ahasd.tb.cocotb_streams.run_at_falling_edge`, one trigger per cycle). Each cycle the
scoreboard first checks the decision the RTL shows, which belongs to the previous cycle's
events, then steps the golden model with this cycle's events (verify before draft,
:meth:`ahasd.sim.blocks.edc.EDC.step`).
"""

import random

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from ahasd.hw.edc import decision_layout
from ahasd.sim.blocks.edc import EDC as GoldenEDC
from ahasd.sim.traces.edc_events import random_cycles, run_lengths_cycles
from ahasd.tb.cocotb_domains import Domain, reset, start_clocks
from ahasd.tb.cocotb_run import params
from ahasd.tb.cocotb_streams import Step, StreamSink, StreamSource, run_at_falling_edge
from ahasd.tb.generators import replay

COUNTERS = ("decisions", "suppressed", "verifications", "squashes", "fifo_drops")


class Scoreboard:
    """Stream drivers of the EDC ports and the golden model they are checked against."""

    def __init__(self, dut, golden):
        self.dut, self.golden = dut, golden
        clk = dut.clk
        self.draft = StreamSource(dut, "draft", clk, on_accept=self._take(0), start=False)
        self.verify = StreamSource(dut, "verify", clk, on_accept=self._take(1), start=False)
        self.decision = StreamSink(dut, "decision", clk, decision_layout(golden.params.index_bits),
                                   on_item=self._decided, keep=False, start=False)
        self.cycle = 0
        self.events = [None, None]   # this cycle's (draft, verify) as the RTL takes them
        self.expected = None         # the golden decision of the previous cycle's events
        self.got = None              # the RTL's decision shown in this cycle
        parts = [self.decision, Step(sample=self._check), self.draft, self.verify,
                 Step(sample=self._step)]
        cocotb.start_soon(run_at_falling_edge(clk, parts))

    def _take(self, which):
        def accept(item):
            self.events[which] = item
        return accept

    def _decided(self, decision):
        self.got = (int(decision["continue"]), int(decision.index))

    def _check(self):
        want = None if self.expected is None else (int(self.expected.cont), self.expected.index)
        assert self.got == want, f"cycle {self.cycle}: RTL decision {self.got}, golden {want}"
        self.got = None

    def _step(self):
        draft, verify = self.events
        self.expected = self.golden.step(draft, None if verify is None else bool(verify))
        self.events = [None, None]
        self.cycle += 1

    async def run(self, cycles):
        """Drive the stimulus ``cycles``, check every decision, then the counters and state;
        return the number of events driven."""
        before = self.draft.accepted + self.verify.accepted
        for source, which in ((self.draft, 0), (self.verify, 1)):
            for event in cycles:
                if event[which] is not None:
                    source.send(int(event[which]))
            source.set_idle_generator(replay([event[which] is None for event in cycles]))
        while self.draft.busy or self.verify.busy:
            await RisingEdge(self.dut.clk)
        for _ in range(3):   # the last events' decision reaches the output and is checked
            await RisingEdge(self.dut.clk)
        await FallingEdge(self.dut.clk)
        await ReadOnly()
        dut, golden = self.dut, self.golden
        assert int(dut.llr.value) == golden.llr
        assert int(dut.pending.value) == len(golden.fifo)
        for name in COUNTERS:
            assert int(getattr(dut, name).value) == getattr(golden, name), name
        await RisingEdge(dut.clk)
        return self.draft.accepted + self.verify.accepted - before


@cocotb.test()
async def edc_matches_golden(dut):
    p = params()
    hw = p["hw"]
    golden = GoldenEDC(**hw)
    board = Scoreboard(dut, golden)   # drives the inputs idle from the start
    domains = [Domain("clk", "rst", 10_000)]
    start_clocks(dut, domains)
    await reset(dut, domains, length=2, settle=1)
    rng = random.Random(p["seed"])
    t = golden.params.thresholds      # entropies on this EDC's bucket thresholds too
    random_events = await board.run(random_cycles(rng, p["random_cycles"], t))
    trace_events = await board.run(run_lengths_cycles(rng, p["trace_cycles"], t))
    dut._log.info("EDC %s: %d random + %d trace events in %d cycles, %d decisions, "
                  "%d suppressed, %d squashes, %d FIFO drops", hw, random_events, trace_events,
                  board.cycle, golden.decisions, golden.suppressed, golden.squashes,
                  golden.fifo_drops)
    assert random_events >= p["min_random_events"]
    assert golden.squashes > 0 and golden.fifo_drops > 0 and 0 < golden.suppressed
