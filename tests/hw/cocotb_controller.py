"""cocotb tests of the controller top (ahasd.hw.controller.Controller): the registers over
AXI4-Lite (cocotbext-axi), EDC and TVC decisions against their golden models, interrupts, and a
random register fuzz running while descriptors flow through all three queues in two clock
domains, scoreboarded with the golden queue models of ahasd.sim.blocks.queues.

Run by tests/hw/test_controller.py.
"""

import logging
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge, with_timeout
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from ahasd.tb.cocotb_run import params
from ahasd.hw.csr import AXI_PREFIX
from ahasd.hw.regmap import load
from ahasd.sim.blocks.csr import CSRModel, OKAY, SLVERR
from ahasd.sim.blocks.descriptors import DraftDescriptor, FeedbackDescriptor, PreverifyDescriptor
from ahasd.sim.blocks.edc import EDC as GoldenEDC
from ahasd.sim.blocks.queues import QueueModel, SquashQueueModel
from ahasd.sim.blocks.tvc import TVC as GoldenTVC

TIMEOUT_NS = 5000
PIM_PERIOD_PS = 1250   # 800 MHz
NPU_PERIOD_PS = 1000   # 1 GHz


def _record(table, cycles, length):
    """Pack a TVC record payload: table [1:0], cycles [33:2], length [49:34]."""
    return table | cycles << 2 | length << 34


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.p = params()
        self.rng = random.Random(self.p.get("seed", 7))
        self.regmap = load()
        self.depths = (self.p["draft_depth"], self.p["feedback_depth"], self.p["preverify_depth"])
        cocotb.start_soon(Clock(dut.clk, PIM_PERIOD_PS, unit="ps").start())
        cocotb.start_soon(Clock(dut.npu_clk, NPU_PERIOD_PS, unit="ps").start())
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, AXI_PREFIX), dut.clk, dut.rst)
        self.axil.write_if.log.setLevel(logging.WARNING)
        self.axil.read_if.log.setLevel(logging.WARNING)
        # Traffic state
        self.traffic = False        # sources offer new descriptors
        self.squashing = False      # the NPU may squash
        self.p_valid = 0.5
        self.p_ready = 0.6
        self.draft_q = SquashQueueModel()
        self.feedback_q = QueueModel()
        self.counts = {}
        self.preverify = []
        self.decisions = []
        self.batch = 0
        self.cur_draft = None
        self.cur_feedback = None
        self.cur_record = None
        self.records = []          # PIM records to offer: (table, cycles, length)
        self.feedbacks = []        # feedback results the NPU will push (directed tests)
        self.auto_feedback = True  # the NPU answers each popped draft with a random result
        self.popped_drafts = []
        self.requests = QueueModel()   # draft requests taken, waiting for their task start
        self.cur_request = None
        self.tasks = []
        self.p_done = 0.3
        self.done_pulses = 0       # directed tests: cycles of task_done to drive
        self.feedback_seen = []

    def count(self, name, n=1):
        self.counts[name] = self.counts.get(name, 0) + n

    async def reset(self):
        d = self.dut
        for name in ("draft_in__valid", "draft_in__payload", "feedback_out__ready",
                     "record__valid", "record__payload", "draft_request__valid",
                     "draft_request__payload", "task_done",
                     "draft_out__ready", "squash", "feedback_in__valid", "feedback_in__payload",
                     "tvc_inputs__kv_len", "tvc_inputs__now", "tvc_inputs__pending"):
            getattr(d, name).value = 0
        d.rst.value = 1
        d.npu_rst.value = 1
        for _ in range(4):
            await RisingEdge(d.clk)
        d.rst.value = 0
        d.npu_rst.value = 0
        for _ in range(4):
            await RisingEdge(d.clk)
        cocotb.start_soon(self._pim_side())
        cocotb.start_soon(self._npu_side())

    # ---- the two clock domains' drivers and monitors ------------------------------------------
    async def _pim_side(self):
        d = self.dut
        while True:
            await FallingEdge(d.clk)
            await ReadOnly()
            if int(d.draft_squash.value):
                self.draft_q.w_squash()
            if int(d.draft_in__valid.value):
                if int(d.draft_in__ready.value):
                    self.draft_q.push(self.cur_draft)
                    self.count("draft_q_pushes")
                    self.cur_draft = None
                else:
                    self.count("draft_q_pushbacks")
            if int(d.feedback_out__valid.value) and int(d.feedback_out__ready.value):
                item = int(d.feedback_out__payload.value)
                self.feedback_q.pop(item)
                self.feedback_seen.append(FeedbackDescriptor.unpack(item))
                self.count("feedback_q_pops")
            if int(d.draft_request__valid.value) and int(d.draft_request__ready.value):
                self.requests.push(self.cur_request)
                self.cur_request = None
            if int(d.task__start.value):
                task = int(d.task__payload.value)
                kind, length = task & 1, task >> 1
                self.tasks.append((kind, length))
                if kind == 1:   # PREVERIFY
                    self.preverify.append(PreverifyDescriptor(verify_length=length, urgent=0))
                    self.count("preverify_q_pops")
                else:
                    self.requests.pop(length)
            if int(d.record__valid.value) and int(d.record__ready.value):
                self.cur_record = None
            if int(d.decision__valid.value):
                self.decisions.append(int(d.decision__draft.value))
            await RisingEdge(d.clk)
            rng = self.rng
            if self.cur_draft is None and self.traffic and rng.random() < self.p_valid:
                self.batch += 1
                self.cur_draft = DraftDescriptor(
                    batch_id=self.batch & 0xFFFF, length=rng.randrange(1, 9),
                    kv_base=rng.getrandbits(16), mean_entropy=rng.getrandbits(16)).pack()
            d.draft_in__valid.value = self.cur_draft is not None
            if self.cur_draft is not None:
                d.draft_in__payload.value = self.cur_draft
            if self.cur_record is None and self.records:
                self.cur_record = _record(*self.records.pop(0))
            d.record__valid.value = self.cur_record is not None
            if self.cur_record is not None:
                d.record__payload.value = self.cur_record
            if self.cur_request is None and self.traffic and rng.random() < self.p_valid:
                self.cur_request = rng.randrange(1, 256)
            d.draft_request__valid.value = self.cur_request is not None
            if self.cur_request is not None:
                d.draft_request__payload.value = self.cur_request
            done = rng.random() < self.p_done or self.done_pulses > 0
            self.done_pulses = max(0, self.done_pulses - 1)
            d.task_done.value = done
            d.feedback_out__ready.value = rng.random() < self.p_ready

    async def _npu_side(self):
        d = self.dut
        squash = False
        while True:
            await FallingEdge(d.npu_clk)
            await ReadOnly()
            if int(d.draft_out__valid.value) and int(d.draft_out__ready.value):
                item = int(d.draft_out__payload.value)
                self.draft_q.pop(item)
                self.popped_drafts.append(item)
                self.count("draft_q_pops")
                # A result for about one batch in six: each result is also a TVC record, and
                # TVC takes one record per ~26 cycles (sequential divider).
                if self.auto_feedback and self.traffic and self.rng.random() < 0.15:
                    rng = self.rng
                    self.feedbacks.append(FeedbackDescriptor(
                        accepted_length=rng.randrange(9), full=rng.getrandbits(1),
                        cycles=rng.getrandbits(20), kv_length=rng.randrange(1, 4096)).pack())
            if squash and int(d.squash_ready.value):
                self.draft_q.squash()
                self.count("squashes")
                squash = False
            if int(d.feedback_in__valid.value):
                if int(d.feedback_in__ready.value):
                    self.feedback_q.push(self.cur_feedback)
                    self.count("feedback_q_pushes")
                    self.cur_feedback = None
                else:
                    self.count("feedback_q_pushbacks")
            await RisingEdge(d.npu_clk)
            rng = self.rng
            if not squash and self.squashing and rng.random() < 0.01:
                squash = True
            d.squash.value = squash
            if self.cur_feedback is None and self.feedbacks and rng.random() < self.p_valid:
                self.cur_feedback = self.feedbacks.pop(0)
            d.feedback_in__valid.value = self.cur_feedback is not None
            if self.cur_feedback is not None:
                d.feedback_in__payload.value = self.cur_feedback
            d.draft_out__ready.value = rng.random() < self.p_ready

    async def cycles(self, n):
        for _ in range(n):
            await RisingEdge(self.dut.clk)

    async def quiesce(self):
        """Stop the sources and drain every queue to the consumers."""
        self.traffic = False
        self.squashing = False
        self.p_ready = 1.0
        self.p_done = 1.0
        # A draft request is a request, not data: withdraw one not yet taken (drafting may be
        # withheld by a stop decision for as long as no verification result comes).
        await RisingEdge(self.dut.clk)
        await ReadOnly()
        if not int(self.dut.draft_request__ready.value):
            await RisingEdge(self.dut.clk)
            self.cur_request = None
        for _ in range(2000):
            await self.cycles(10)
            if (self.cur_draft is None and self.cur_feedback is None and not self.feedbacks
                    and self.cur_record is None and not self.records
                    and not int(self.dut.draft_out__valid.value)
                    and not int(self.dut.feedback_out__valid.value)
                    and len(self.requests) == 0
                    and await self.read_reg("DRAFT_Q_STATUS") >> 16 & 1
                    and await self.read_reg("FEEDBACK_Q_STATUS") >> 16 & 1
                    and await self.read_reg("PREVERIFY_Q_STATUS") >> 16 & 1
                    and not (await self.read_reg("TVC_STATUS")) >> 8 & 1):
                await self.cycles(20)
                return
        state = {name: await self.read_reg(name) for name in
                 ("DRAFT_Q_STATUS", "FEEDBACK_Q_STATUS", "PREVERIFY_Q_STATUS", "TVC_STATUS")}
        raise AssertionError(f"the queues did not drain: {state}, draft {self.cur_draft}, "
                             f"feedback {self.cur_feedback}/{len(self.feedbacks)}, record "
                             f"{self.cur_record}/{len(self.records)}")

    # ---- registers ------------------------------------------------------------------------
    async def read(self, address):
        resp = await with_timeout(self.axil.read(address, 4), TIMEOUT_NS, "ns")
        return int.from_bytes(resp.data, "little"), int(resp.resp)

    async def write(self, address, data, strobe=0xF):
        lanes = [i for i in range(4) if strobe >> i & 1]
        first, last = lanes[0], lanes[-1]
        payload = ((data >> 8 * first) & ((1 << 8 * (last - first + 1)) - 1)).to_bytes(
            last - first + 1, "little")
        resp = await with_timeout(self.axil.write(address + first, payload), TIMEOUT_NS, "ns")
        return int(resp.resp)

    async def read_reg(self, ident):
        value, resp = await self.read(self.regmap[ident].address)
        assert resp == OKAY
        return value

    async def write_reg(self, ident, value):
        assert await self.write(self.regmap[ident].address, value) == OKAY

    async def draft(self, entropy):
        """Push one draft with ``entropy`` (UQ4.12) and return the controller's decision."""
        self.batch += 1
        before = len(self.decisions)
        self.cur_draft = DraftDescriptor(batch_id=self.batch & 0xFFFF, length=4, kv_base=0,
                                         mean_entropy=entropy).pack()
        for _ in range(200):
            await RisingEdge(self.dut.clk)
            if len(self.decisions) > before:
                return self.decisions[-1]
        raise AssertionError("no decision")


def status_values(tb):
    """What the status registers read after reset (hardware state with no traffic)."""
    d, f, p = tb.depths
    return {
        ("PARAMS", "draft_depth"): d, ("PARAMS", "feedback_depth"): f,
        ("PARAMS", "preverify_depth"): p,
        ("DRAFT_Q_STATUS", "empty"): 1, ("FEEDBACK_Q_STATUS", "empty"): 1,
        ("PREVERIFY_Q_STATUS", "empty"): 1,
        ("EDC_STATUS", "last_continue"): 1,
        ("PARAMS", "ranks"): 16, ("GTS_STATUS", "draft_allowed"): 1,
        ("TVC_NVCT_AVG", "ratio"): tb.regmap["TVC_NVCT_PRESET"].reset,
        ("TVC_PDCT_AVG", "ratio"): tb.regmap["TVC_PDCT_PRESET"].reset,
        ("TVC_PVCT_AVG", "ratio"): tb.regmap["TVC_PVCT_PRESET"].reset,
    }


@cocotb.test()
async def registers_after_reset(dut):
    """Every register reads its reset value / the hardware's idle state; holes answer SLVERR."""
    tb = TB(dut)
    await tb.reset()
    model = CSRModel(tb.regmap)
    for (ident, name), value in status_values(tb).items():
        model.drive(ident, name, value)
    for address in range(0, 1 << tb.p["addr_width"], 4):
        value, resp = await tb.read(address)
        expected, code = model.read(address)
        assert (value, resp) == (expected, code), \
            f"0x{address:02X}: 0x{value:08X}/{resp}, expected 0x{expected:08X}/{code}"


@cocotb.test()
async def decisions_match_golden_models(dut):
    """EDC decisions, TVC pre-verification inserts and table averages follow sim.edc / sim.tvc
    for a directed sequence of drafts, verification results and PIM records."""
    tb = TB(dut)
    await tb.reset()
    rng = tb.rng
    edc = GoldenEDC()
    rm = tb.regmap
    tvc = GoldenTVC(freq_ratio=rm["TVC_FREQ_RATIO"].reset,
                    presets={"nvct": rm["TVC_NVCT_PRESET"].reset,
                             "pdct": rm["TVC_PDCT_PRESET"].reset,
                             "pvct": rm["TVC_PVCT_PRESET"].reset})
    max_len = rm["TVC_CTRL"].field("max_len").reset
    tb.auto_feedback = False
    tb.p_ready = 1.0
    tb.p_done = 1.0
    expected_inserts = []
    stops = 0
    for step in range(tb.p.get("golden_steps", 120)):
        kv_len, now, pending = rng.randrange(4096), rng.getrandbits(15), rng.randrange(12)
        dut.tvc_inputs__kv_len.value = kv_len
        dut.tvc_inputs__now.value = now
        dut.tvc_inputs__pending.value = pending
        entropy = rng.choice([rng.getrandbits(16), rng.randrange(8000), rng.randrange(30000, 65536)])
        decision = await tb.draft(entropy)
        golden = edc.draft_fx(entropy)
        assert decision == int(golden.cont), f"step {step}: decision {decision}, golden {golden}"
        if not decision:
            stops += 1
            d = tvc.decide(kv_len, now, pending)
            if d.insert:
                expected_inserts.append(min(d.length, max_len))
        await tb.cycles(12)
        # Verify the oldest batch about half of the time (the NPU side of the queue).
        if rng.random() < 0.5 or len(edc.fifo) >= 6:
            result = FeedbackDescriptor(accepted_length=rng.randrange(9), full=rng.getrandbits(1),
                                        cycles=rng.getrandbits(16), kv_length=rng.randrange(1, 2048))
            if rng.random() < 0.5:
                # A PIM record just before: the result arrives while TVC's divider is busy and
                # must wait for it (never be dropped).
                record = (rng.choice([1, 2]), rng.getrandbits(14), rng.randrange(1, 64))
                tb.records.append(record)
                while tb.records or tb.cur_record is not None:
                    await RisingEdge(dut.clk)
                tvc.record(["nvct", "pdct", "pvct"][record[0]], *record[1:])
            tb.feedbacks.append(result.pack())
            seen = len(tb.feedback_seen)
            for _ in range(400):
                await RisingEdge(dut.clk)
                if len(tb.feedback_seen) > seen:
                    break
            edc.verify(bool(result.full))
            tvc.record("nvct", result.cycles, result.kv_length)
            await tb.cycles(40)   # the divider
        if rng.random() < 0.2:
            table = rng.choice([1, 2])
            length = rng.choice([0, rng.randrange(1, 64)])
            cycles = rng.getrandbits(14)
            tb.records.append((table, cycles, length))
            await tb.cycles(40)
            tvc.record(["nvct", "pdct", "pvct"][table], cycles, length)
    await tb.cycles(50)
    assert [d.verify_length for d in tb.preverify] == expected_inserts
    assert all(d.urgent == 0 for d in tb.preverify)
    assert stops > 0 and expected_inserts, "the sequence exercised no stop / no insert"
    assert await tb.read_reg("EDC_DECISIONS") == edc.decisions
    assert await tb.read_reg("EDC_SUPPRESSED") == edc.suppressed
    assert await tb.read_reg("EDC_VERIFICATIONS") == edc.verifications
    assert await tb.read_reg("EDC_SQUASHES") == edc.squashes
    assert await tb.read_reg("EDC_STATUS") & 0xFF == edc.llr
    assert await tb.read_reg("TVC_DECISIONS") == stops
    assert await tb.read_reg("TVC_INSERTS") == len(expected_inserts)
    assert await tb.read_reg("TVC_ERRORS") == tvc.error_count
    for table in ("nvct", "pdct", "pvct"):
        assert await tb.read_reg(f"TVC_{table.upper()}_AVG") == tvc.average(table)


@cocotb.test()
async def interrupts_and_overrides(dut):
    """Each interrupt source sets its status bit, drives irq when enabled, clears on W1C;
    EDC_CTRL.mode overrides decisions; CTRL.soft_reset restarts EDC."""
    tb = TB(dut)
    await tb.reset()
    fields = {f.name: f.mask for f in tb.regmap["INT_STATUS"].fields}
    await tb.write_reg("INT_ENABLE", fields["edc_stop"])
    await tb.write_reg("EDC_CTRL", 2)                  # always stop
    await tb.write_reg("TVC_CTRL", 0x82)               # TVC off
    assert await tb.draft(100) == 0
    await tb.cycles(3)
    assert int(dut.irq.value) == 1
    assert await tb.read_reg("INT_STATUS") == fields["edc_stop"]
    assert await tb.read_reg("INT_RAW") & fields["edc_stop"]
    await tb.write_reg("INT_STATUS", fields["edc_stop"])
    await tb.cycles(2)
    assert int(dut.irq.value) == 0 and await tb.read_reg("INT_STATUS") == 0
    assert await tb.read_reg("INT_COUNT") == 1
    assert await tb.read_reg("TVC_DECISIONS") == 0    # TVC disabled: no request
    await tb.write_reg("EDC_CTRL", 1)                  # always continue
    assert await tb.draft(60000) == 1
    assert await tb.read_reg("INT_STATUS") == 0
    # Draft-queue threshold: the NPU does not pop, so the queue fills.
    tb.p_ready = 0.0
    await tb.write_reg("DRAFT_Q_THRESHOLD", 4)
    await tb.write_reg("INT_ENABLE", fields["draft_q"])
    assert await tb.read_reg("INT_STATUS") == 0
    for _ in range(4):
        await tb.draft(1000)
    await tb.cycles(5)
    assert await tb.read_reg("INT_STATUS") & fields["draft_q"] and int(dut.irq.value) == 1
    assert await tb.read_reg("DRAFT_Q_STATUS") & 0xFFFF == 4
    await tb.write_reg("INT_ENABLE", 0)
    await tb.cycles(1)
    assert int(dut.irq.value) == 0                     # status still set, but masked
    await tb.write_reg("INT_STATUS", 0x3F)
    assert await tb.read_reg("INT_STATUS") == 0
    # TVC record error and insert.
    tb.records.append((1, 100, 0))
    await tb.cycles(10)
    assert await tb.read_reg("INT_STATUS") == fields["tvc_error"]
    assert await tb.read_reg("TVC_ERRORS") == 1
    await tb.write_reg("TVC_CTRL", 0x30)               # TVC on, max_len 3
    await tb.write_reg("EDC_CTRL", 2)
    dut.tvc_inputs__kv_len.value = 4000
    dut.tvc_inputs__now.value = 0
    dut.tvc_inputs__pending.value = 9
    tb.p_ready = 1.0
    await tb.draft(5)
    await tb.cycles(20)
    assert await tb.read_reg("INT_STATUS") & fields["tvc_insert"]
    assert [d.verify_length for d in tb.preverify] == [3]
    assert await tb.read_reg("TVC_STATUS") & 0xF == 3
    # Soft reset: EDC history and counters restart; registers keep their values.
    assert await tb.read_reg("EDC_DECISIONS") > 0
    await tb.write_reg("CTRL", 0b011)
    assert await tb.read_reg("EDC_DECISIONS") == 0
    assert await tb.read_reg("EDC_CTRL") == 2
    assert await tb.read_reg("CTRL") == 1


@cocotb.test()
async def register_fuzz_with_traffic(dut):
    """Random register accesses (10k by default) while descriptors flow through all queues with
    random stalls and squashes: every access answers in time with the right response, storage
    registers hold what was written, and no queue loses, duplicates, reorders or invents a
    descriptor. Afterwards the queue counters match the traffic exactly."""
    tb = TB(dut)
    await tb.reset()
    rm = tb.regmap
    model = CSRModel(rm)
    holes = [a for a in range(0, 1 << tb.p["addr_width"], 4) if rm.at(a) is None]
    addresses = [r.address for r in rm.registers] + holes
    tb.traffic = True
    tb.squashing = True
    rng = tb.rng
    for i in range(tb.p.get("transactions", 10000)):
        address = rng.choice(addresses)
        if rng.random() < 0.5:
            data = rng.getrandbits(32)
            if rm.at(address) is rm["CTRL"] and rng.random() < 0.8:
                data |= 1                       # mostly keep the controller enabled
            strobe = rng.choice([0xF, 0xF, 0x1, 0x2, 0x4, 0x8, 0x3, 0xC])
            resp = await tb.write(address, data, strobe)
            assert resp == model.write(address, data, strobe), f"write 0x{address:02X}"
        else:
            value, resp = await tb.read(address)
            reg = rm.at(address)
            if reg is None:
                assert resp == SLVERR, f"read 0x{address:02X}"
            else:
                assert resp == OKAY, f"read 0x{address:02X}"
                for f in reg.fields:   # fields the hardware never changes must match the model
                    if f.kind in ("config", "storage", "const", "pulse"):
                        got = (value & f.mask) >> f.lsb
                        want = (model.peek(reg.ident) & f.mask) >> f.lsb
                        assert got == want, f"{reg.ident}.{f.name}: {got:#x}, expected {want:#x}"
        if i % 1000 == 999:
            tb.p_valid = rng.choice([0.2, 0.5, 0.9])
            tb.p_ready = rng.choice([0.1, 0.5, 0.9])
    await tb.quiesce()
    assert tb.draft_q.drain() == [] and len(tb.feedback_q) == 0
    assert tb.counts.get("draft_q_pops", 0) > 100 and tb.counts.get("squashes", 0) > 3
    assert all(1 <= d.verify_length <= 8 for d in tb.preverify)

    # Counters: clear, run more traffic without register writes, compare with what was seen.
    await tb.write_reg("CTRL", 0b101)   # enable + clear_counters
    tb.counts = {}
    discarded_before = tb.draft_q.discarded
    preverify_before = len(tb.preverify)
    tb.traffic = True
    tb.squashing = True
    tb.p_valid, tb.p_ready = 0.7, 0.4
    await tb.cycles(3000)
    await tb.quiesce()
    tb.count("preverify_q_pops", 0)
    for name in ("draft_q_pushes", "draft_q_pops", "draft_q_pushbacks", "feedback_q_pushes",
                 "feedback_q_pops", "feedback_q_pushbacks", "preverify_q_pops", "squashes"):
        got = await tb.read_reg(name.upper())
        assert got == tb.counts.get(name, 0), f"{name}: {got}, expected {tb.counts.get(name, 0)}"
    pushes = await tb.read_reg("PREVERIFY_Q_PUSHES")
    assert pushes == len(tb.preverify) - preverify_before
    assert tb.draft_q.drain() == []
    assert await tb.read_reg("SQUASH_DISCARDED") == tb.draft_q.discarded - discarded_before


@cocotb.test()
async def task_scheduling(dut):
    """GTS behind the controller: draft requests run while drafting is allowed, a stop decision
    withholds them until a verification result comes, pre-verify tasks go first, and the rank
    enables follow the mask registers."""
    tb = TB(dut)
    await tb.reset()
    tb.p_done = 0.0
    tb.p_ready = 1.0
    tb.auto_feedback = False
    await tb.write_reg("GTS_DRAFT_MASK", 0x00FF)
    await tb.write_reg("GTS_PREVERIFY_MASK", 0xFF00)
    await tb.write_reg("EDC_CTRL", 1)                  # always continue
    assert await tb.draft(100) == 1
    tb.cur_request = 5
    await tb.cycles(5)
    assert tb.tasks == [(0, 5)]
    assert int(dut.rank_en.value) == 0x00FF
    assert (await tb.read_reg("GTS_STATUS")) & 0xF == 0b1001   # DRAFT, drafting allowed
    # A stop decision withholds the next request, even with the ranks idle.
    await tb.write_reg("TVC_CTRL", 0x82)               # TVC off
    await tb.write_reg("EDC_CTRL", 2)                  # always stop
    assert await tb.draft(100) == 0
    tb.done_pulses = 1
    tb.cur_request = 7
    await tb.cycles(50)
    assert tb.tasks == [(0, 5)] and int(dut.rank_en.value) == 0
    assert (await tb.read_reg("GTS_STATUS")) & 0xF == 0b0000   # IDLE, drafting withheld
    # A verification result allows drafting again.
    tb.feedbacks.append(FeedbackDescriptor(accepted_length=3, full=1, cycles=500,
                                           kv_length=100).pack())
    for _ in range(100):
        await RisingEdge(dut.clk)
        if len(tb.tasks) == 2:
            break
    assert tb.tasks == [(0, 5), (0, 7)]
    # Pre-verification first: while the draft task runs, a stop decision makes TVC insert a
    # pre-verify task; a result re-allows drafting and a new request waits as well.
    await tb.write_reg("TVC_CTRL", 0x50)               # TVC on, max_len 5
    dut.tvc_inputs__kv_len.value = 4000
    dut.tvc_inputs__now.value = 0
    dut.tvc_inputs__pending.value = 9
    assert await tb.draft(100) == 0
    await tb.cycles(40)      # the decide waits for the NVCT record's divider (34 cycles)
    assert (await tb.read_reg("PREVERIFY_Q_STATUS")) & 0xFFFF == 1
    tb.feedbacks.append(FeedbackDescriptor(accepted_length=1, full=0, cycles=900,
                                           kv_length=120).pack())
    await tb.cycles(60)
    assert (await tb.read_reg("GTS_STATUS")) >> 3 & 1   # drafting allowed again
    tb.cur_request = 9
    await tb.cycles(10)
    assert tb.tasks == [(0, 5), (0, 7)]                # the ranks are still busy
    tb.done_pulses = 1
    await tb.cycles(4)
    assert tb.tasks == [(0, 5), (0, 7), (1, 5)]
    assert int(dut.rank_en.value) == 0xFF00
    tb.done_pulses = 1
    await tb.cycles(4)
    assert tb.tasks == [(0, 5), (0, 7), (1, 5), (0, 9)]
    assert await tb.read_reg("GTS_SWITCHES") == 3      # DRAFT -> PREVERIFY -> DRAFT, + first
