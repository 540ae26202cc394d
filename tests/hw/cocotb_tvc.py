"""cocotb scoreboard for the Verilated TVC: every decision against the golden model.

Run by ``tests/hw/test_tvc_cocotb.py`` (through ``ahasd.tb.cocotb_run.run_cocotb``), once per
parameter set. Traces: random (edge-biased), realistic and boundary (decides on ``L *
avg(PVCT) == C_left * 256``), see :mod:`ahasd.sim.traces.tvc`.

The ``record`` and ``decide`` streams are the shared stream sources
(:mod:`ahasd.tb.cocotb_streams`, payloads packed through :func:`ahasd.hw.tvc.record_layout` /
:func:`~ahasd.hw.tvc.decide_layout`), with random idle cycles (:func:`ahasd.tb.generators.pauses`)
or back to back; ``result`` is a shared sink unpacking into :class:`ahasd.sim.blocks.tvc.Decision`.
Each port takes its transactions in trace order and may run up to ``window`` transactions ahead
of the oldest one not yet accepted (so records and decides overlap, meet in the same cycle and
overtake each other); a preset or ``freq_ratio`` change (no ready) waits until every transaction
before it is accepted. ``ready`` (``~busy``) and every other output come from registers, so
the drivers run at the falling edge only (:func:`ahasd.tb.cocotb_streams.run_at_falling_edge`).
Each cycle the scoreboard applies the accepted transactions to
:class:`ahasd.sim.blocks.tvc.TVC` in the order the block defines for a cycle: decide, record,
preset, with that cycle's ``freq_ratio`` for all.
"""

import random
from collections import deque

import cocotb
from amaranth import unsigned
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from ahasd.hw.tvc import DECISION_LATENCY, decide_layout, record_layout, result_layout
from ahasd.sim.blocks.tvc import DEFAULT_FREQ_RATIO, TABLES, Decision, TVCParams
from ahasd.sim.blocks.tvc import TVC as GoldenTVC
from ahasd.sim.traces.tvc import boundary_trace, random_trace, realistic_trace
from ahasd.tb.cocotb_domains import Domain, reset, start_clocks
from ahasd.tb.cocotb_run import params
from ahasd.tb.cocotb_streams import Step, StreamSink, StreamSource, run_at_falling_edge
from ahasd.tb.generators import pauses

#: A record table code no table has: the block rejects it like a zero-length record.
BAD_TABLE = len(TABLES)


class TB:
    """Stream drivers, preset and ratio inputs, and the scoreboard."""

    def __init__(self, dut, hw, rng):
        self.dut, self.rng = dut, rng
        p = self.params = TVCParams(**hw)
        self.freq_ratio = DEFAULT_FREQ_RATIO
        self.golden = GoldenTVC(freq_ratio=self.freq_ratio, **hw)
        self.expected = deque()   # (cycle of accept, Decision)
        self.cycle = 0
        self.log = deque(maxlen=12)   # recent accepted transactions, for failure messages
        self.decisions = self.records = self.presets_applied = 0
        self.ops = {"record": deque(), "decide": deque(), "other": deque()}
        self.offered = {}         # port -> (trace index, transaction) of the offered item
        self.done, self.oldest, self.window, self.p_valid = [False], 0, 1, 1.0
        self.loading = None       # the preset driven in this cycle
        clk = dut.clk
        self.decide = StreamSource(dut, "decide", clk, decide_layout(p), start=False,
                                   fill=self._fill("decide"), on_accept=self._decided)
        self.record = StreamSource(dut, "record", clk, record_layout(p, table=unsigned(2)),
                                   fill=self._fill("record"), on_accept=self._recorded,
                                   start=False)
        self.result = StreamSink(dut, "result", clk, result_layout(p), cls=Decision,
                                 on_item=self._result, keep=False, start=False)
        dut.preset__load.value = 0
        dut.freq_ratio.value = self.freq_ratio
        for name in TABLES:   # loaded in the first cycle after reset, as the golden model's 0
            getattr(dut, f"preset__{name}").value = 0
        self.parts = [self.result, Step(sample=self._check_cycle, drive=self._advance),
                      self.decide, self.record, Step(sample=self._preset, drive=self._other)]

    async def start(self):
        domains = [Domain("clk", "rst", 10_000)]
        start_clocks(self.dut, domains)
        await reset(self.dut, domains, length=2, settle=0)
        cocotb.start_soon(run_at_falling_edge(self.dut.clk, self.parts))

    # ---- drive: which transaction each port offers ------------------------------------------
    def _advance(self):
        while self.done[self.oldest]:
            self.oldest += 1

    def _fill(self, port):
        queue = self.ops[port]

        def fill():
            if not queue or queue[0][0] > self.oldest + self.window:
                return None
            index, op = queue.popleft()
            if port == "decide":
                item = {"kv_len": op["kv_len"], "now": op["now"], "pending": op["pending"]}
            else:
                code = TABLES.index(op["table"])
                if op["length"] and self.rng.random() < 0.01:
                    code = BAD_TABLE
                item = {"table": code, "cycles": op["cycles"], "length": op["length"]}
            self.offered[port] = (index, item)
            return item
        return fill

    def _other(self):
        dut, others = self.dut, self.ops["other"]
        dut.preset__load.value = 0
        if not others or others[0][0] != self.oldest or self.rng.random() >= self.p_valid:
            return
        index, op = others.popleft()
        self.done[index] = True
        if op["op"] == "config":
            self.freq_ratio = op["freq_ratio"]
            dut.freq_ratio.value = self.freq_ratio
        else:
            getattr(dut, f"preset__{op['table']}").value = op["ratio"]
            dut.preset__load.value = 1 << TABLES.index(op["table"])
            self.loading = op

    # ---- sample: the scoreboard, in the block's order ---------------------------------------
    def _check_cycle(self):
        self.cycle += 1
        dut = self.dut
        if self.expected:
            assert self.cycle - self.expected[0][0] < DECISION_LATENCY, \
                f"cycle {self.cycle}: result of the decide accepted at {self.expected[0][0]} late"
        busy = int(dut.busy.value)
        assert int(dut.record__ready.value) == int(dut.decide__ready.value) == 1 - busy
        if not busy:
            self.check_state()
        self.golden.config(self.freq_ratio)

    def _result(self, got):
        assert self.expected, f"cycle {self.cycle + 1}: result without a decide"
        accepted, decision = self.expected.popleft()
        assert got == decision, (f"cycle {self.cycle + 1}: decide accepted at {accepted}: "
                                 f"RTL {got}, golden {decision}")
        assert self.cycle + 1 - accepted == DECISION_LATENCY

    def _decided(self, item):
        index, _ = self.offered.pop("decide")
        self.log.append((self.cycle, item))
        self.expected.append((self.cycle, self.golden.decide(**item)))
        self.done[index] = True
        self.decisions += 1

    def _recorded(self, item):
        index, _ = self.offered.pop("record")
        self.log.append((self.cycle, item))
        if item["table"] == BAD_TABLE:
            self.golden.record(TABLES[0], item["cycles"], 0)   # counts an error, nothing else
        else:
            self.golden.record(TABLES[item["table"]], item["cycles"], item["length"])
        self.done[index] = True
        self.records += 1

    def _preset(self):
        if self.loading is not None:
            self.log.append((self.cycle, self.loading))
            self.golden.preset(self.loading["table"], self.loading["ratio"])
            self.presets_applied += 1
            self.loading = None

    def check_state(self):
        """Not busy: every accepted record is in the tables."""
        dut, golden = self.dut, self.golden
        assert int(dut.error_count.value) == golden.error_count, (
            f"cycle {self.cycle}: error_count; last transactions {list(self.log)}")
        for name in TABLES:
            assert int(getattr(dut, f"average__{name}").value) == golden.average(name), (
                f"cycle {self.cycle}: avg({name}); last transactions {list(self.log)}")

    # ---- a run ------------------------------------------------------------------------------
    async def run(self, ops, valid_probability, window):
        """Drive ``ops`` with each port valid with ``valid_probability`` per cycle while it has
        a transaction; return when all are accepted, all results checked and the block idle."""
        for index, op in enumerate(ops):
            kind = op["op"] if op["op"] in ("record", "decide") else "other"
            self.ops[kind].append((index, op))
        self.done, self.oldest = [False] * (len(ops) + 1), 0   # the last: a sentinel
        self.window, self.p_valid = window, valid_probability
        for source in (self.decide, self.record):
            source.set_idle_generator(pauses(1 - valid_probability, self.rng))
        clk = self.dut.clk
        while (any(self.ops.values()) or self.decide.busy or self.record.busy or self.expected
               or self.loading is not None):
            await RisingEdge(clk)
        for _ in range(4 * self.params.numerator_bits):   # the divider finishes
            await FallingEdge(clk)
            await ReadOnly()
            if not int(self.dut.busy.value):
                break
        self.check_state()
        await RisingEdge(clk)

    @property
    def stalls(self):
        return self.decide.stalls + self.record.stalls


@cocotb.test()
async def tvc_matches_golden(dut):
    p = params()
    hw = p["hw"]
    rng = random.Random(p["seed"])
    tb = TB(dut, hw, rng)
    await tb.start()
    chunk = p["chunk"]
    made, seed = 0, p["seed"]
    while made < p["decisions"]:
        seed += 1
        for generator, kwargs in ((random_trace, {"record_share": 0.1}), (realistic_trace, {}),
                                  (boundary_trace, {})):
            ops = generator(chunk, seed=seed, params=tb.params, **kwargs)
            # Alternate random valid gaps and back-to-back streams.
            await tb.run(ops, valid_probability=rng.choice((0.3, 0.7, 1.0)),
                         window=rng.choice((1, 2, 8)))
            made += chunk
    dut._log.info("TVC %s: %d decisions, %d records, %d presets, %d offers held (cycles x "
                  "ports), %d errors counted, %d cycles", hw, tb.decisions, tb.records,
                  tb.presets_applied, tb.stalls, tb.golden.error_count, tb.cycle)
    assert tb.decisions >= p["decisions"]
    assert tb.stalls > 0 and tb.golden.error_count > 0 and tb.presets_applied > 0
