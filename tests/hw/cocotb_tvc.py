"""cocotb scoreboard for the Verilated TVC: every decision against the golden model.

Run by ``tests/hw/test_tvc_cocotb.py`` (through ``ahasd.tb.cocotb_run.run_cocotb``), once per parameter set.
Traces: random (edge-biased), realistic and boundary (decides on ``L * avg(PVCT) == C_left *
256``), see :mod:`ahasd.sim.traces.tvc`. The record and decide streams are driven concurrently
(random valid gaps or back to back, overlapping within a window of the trace, see
:meth:`TB.run`), presets and ``freq_ratio`` changes between them, and the scoreboard applies each
accepted transaction to :class:`ahasd.sim.blocks.tvc.TVC` in the order the block defines for a cycle
(decide, record, preset; ``freq_ratio`` of that cycle for all). Inputs change at the falling edge;
``ready`` (``~busy``, registers only) read there is what the next rising edge samples.
"""

import random
from collections import deque

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

from ahasd.hw.tvc import DECISION_LATENCY
from ahasd.tb.tvc_driver import pack_decide, pack_record, unpack_result
from ahasd.sim.blocks.tvc import DEFAULT_FREQ_RATIO, TABLES
from ahasd.sim.blocks.tvc import TVC as GoldenTVC
from ahasd.sim.blocks.tvc import TVCParams
from ahasd.sim.traces.tvc import boundary_trace, random_trace, realistic_trace

from ahasd.tb.cocotb_run import params


class TB:
    """Clock, reset, per-port drivers and the scoreboard."""

    def __init__(self, dut, hw, rng):
        self.dut, self.rng = dut, rng
        self.params = TVCParams(**hw)
        self.presets = {name: 0 for name in TABLES}
        self.freq_ratio = DEFAULT_FREQ_RATIO
        self.golden = GoldenTVC(freq_ratio=self.freq_ratio, **hw)
        self.expected = deque()   # (iteration of accept, Decision)
        self.iteration = 0
        self.log = deque(maxlen=12)   # recent accepted transactions, for failure messages
        self.decisions = self.records = self.presets_applied = self.stalls = 0
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())

    async def reset(self):
        dut = self.dut
        dut.record__valid.value = 0
        dut.decide__valid.value = 0
        dut.preset__load.value = 0
        dut.freq_ratio.value = self.freq_ratio
        for name in TABLES:
            getattr(dut, f"preset__{name}").value = self.presets[name]
        dut.rst.value = 1
        for _ in range(2):
            await FallingEdge(dut.clk)
        dut.rst.value = 0   # the next rising edge loads the presets

    async def run(self, ops, valid_probability, window):
        """Drive ``ops`` with each port valid with ``valid_probability`` per cycle while it has
        data; return when all are accepted and all results checked.

        The record and decide ports each take their transactions in trace order, and may run
        up to ``window`` transactions ahead of the oldest one not yet accepted (so records and
        decides overlap, meet in the same cycle, and overtake each other); a preset or config
        waits until every transaction before it is accepted (they have no ready)."""
        dut, rng, golden = self.dut, self.rng, self.golden
        indexed = list(enumerate(ops))
        records = deque((i, item) for i, item in indexed if item["op"] == "record")
        decides = deque((i, item) for i, item in indexed if item["op"] == "decide")
        others = deque((i, item) for i, item in indexed if item["op"] in ("config", "preset"))
        done = [False] * (len(ops) + 1)
        oldest = 0                      # every transaction before this one is accepted
        record_valid = decide_valid = False
        while records or decides or others or record_valid or decide_valid or self.expected:
            await FallingEdge(dut.clk)
            self.iteration += 1
            self.check_outputs()
            busy = int(dut.busy.value)
            ready = int(dut.record__ready.value)
            assert ready == int(dut.decide__ready.value) == 1 - busy
            if not busy:
                self.check_state()
            while done[oldest]:
                oldest += 1
            # A stream's valid stays high (payload unchanged) until accepted.
            if (not decide_valid and decides and decides[0][0] <= oldest + window
                    and rng.random() < valid_probability):
                decide_index, item = decides.popleft()
                dut.decide__payload.value = pack_decide(
                    self.params, item["kv_len"], item["now"], item["pending"])
                decide_valid, decide_item = True, item
            if (not record_valid and records and records[0][0] <= oldest + window
                    and rng.random() < valid_probability):
                record_index, item = records.popleft()
                table = item["table"]
                if item["length"] and rng.random() < 0.01:
                    table = 3    # invalid code: rejected like a zero-length record
                dut.record__payload.value = pack_record(
                    self.params, table, item["cycles"], item["length"])
                record_valid, record_item = True, dict(item, table=table)
            load = 0
            if others and others[0][0] == oldest and rng.random() < valid_probability:
                other_index, other = others.popleft()
                done[other_index] = True
                if other["op"] == "config":
                    self.freq_ratio = other["freq_ratio"]
                    dut.freq_ratio.value = self.freq_ratio
                else:
                    self.presets[other["table"]] = other["ratio"]
                    getattr(dut, f"preset__{other['table']}").value = other["ratio"]
                    load = 1 << TABLES.index(other["table"])
            dut.decide__valid.value = decide_valid
            dut.record__valid.value = record_valid
            dut.preset__load.value = load
            self.stalls += (decide_valid or record_valid) and not ready
            # The scoreboard: this cycle's accepted transactions, in the block's order.
            golden.config(self.freq_ratio)
            if decide_valid and ready:
                d = decide_item
                self.log.append((self.iteration, d))
                self.expected.append(
                    (self.iteration, golden.decide(d["kv_len"], d["now"], d["pending"])))
                decide_valid = False
                done[decide_index] = True
                self.decisions += 1
            if record_valid and ready:
                r = record_item
                self.log.append((self.iteration, r))
                if r["table"] == 3:
                    golden.record(TABLES[0], r["cycles"], 0)   # counts an error, nothing else
                else:
                    golden.record(r["table"], r["cycles"], r["length"])
                record_valid = False
                done[record_index] = True
                self.records += 1
            if load:
                self.log.append((self.iteration, other))
                golden.preset(other["table"], other["ratio"])
                self.presets_applied += 1
        # Let the last iteration's transactions reach their edge, then drop them.
        await FallingEdge(dut.clk)
        self.iteration += 1
        self.check_outputs()
        dut.decide__valid.value = 0
        dut.record__valid.value = 0
        dut.preset__load.value = 0
        await self.idle()

    def check_outputs(self):
        dut = self.dut
        if int(dut.result__valid.value):
            assert self.expected, f"iteration {self.iteration}: result without a decide"
            accepted, decision = self.expected.popleft()
            got = unpack_result(int(dut.result__payload.value))
            assert got == decision, (f"iteration {self.iteration}: decide accepted at "
                                     f"{accepted}: RTL {got}, golden {decision}")
            assert self.iteration - accepted == DECISION_LATENCY
        elif self.expected:
            assert self.iteration - self.expected[0][0] < DECISION_LATENCY, "late result"

    async def idle(self):
        """Wait until the divider is idle; then the tables and counter must match."""
        for _ in range(4 * self.params.numerator_bits):
            await FallingEdge(self.dut.clk)
            self.iteration += 1
            self.check_outputs()
            if not int(self.dut.busy.value):
                break
        self.check_state()

    def check_state(self):
        """Not busy: every accepted record is in the tables."""
        dut, golden = self.dut, self.golden
        assert int(dut.error_count.value) == golden.error_count, (
            f"iteration {self.iteration}: error_count; last transactions {list(self.log)}")
        for name in TABLES:
            assert int(getattr(dut, f"average__{name}").value) == golden.average(name), (
                f"iteration {self.iteration}: avg({name}); last transactions {list(self.log)}")


@cocotb.test()
async def tvc_matches_golden(dut):
    p = params()
    hw = p["hw"]
    rng = random.Random(p["seed"])
    tb = TB(dut, hw, rng)
    await tb.reset()
    hwp = TVCParams(**hw)
    chunk = p["chunk"]
    made, seed = 0, p["seed"]
    while made < p["decisions"]:
        seed += 1
        for generator, kwargs in ((random_trace, {"record_share": 0.1}), (realistic_trace, {}),
                                  (boundary_trace, {})):
            ops = generator(chunk, seed=seed, params=hwp, **kwargs)
            # Alternate random valid gaps and back-to-back streams.
            await tb.run(ops, valid_probability=rng.choice((0.3, 0.7, 1.0)),
                         window=rng.choice((1, 2, 8)))
            made += chunk
    dut._log.info("TVC %s: %d decisions, %d records, %d presets, %d stalled cycles, "
                  "%d errors counted, %d iterations", hw, tb.decisions, tb.records,
                  tb.presets_applied, tb.stalls, tb.golden.error_count, tb.iteration)
    assert tb.decisions >= p["decisions"]
    assert tb.stalls > 0 and tb.golden.error_count > 0 and tb.presets_applied > 0
