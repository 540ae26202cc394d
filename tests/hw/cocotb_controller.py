"""cocotb tests of the controller top (ahasd.hw.controller.Controller): the registers over
AXI4-Lite (cocotbext-axi), EDC and TVC decisions against their golden models, interrupts, and a
random register fuzz running while descriptors flow through all three queues in two clock
domains, scoreboarded with the golden queue models of ahasd.sim.blocks.queues.

The clocks, resets, bus, stream drivers and scoreboards are :class:`ahasd.tb.controller_bench.
ControllerTB`. Every register access by name goes through the project's one Python driver,
``tb.driver`` (:class:`ahasd.firmware.driver.AsyncControllerDriver` on cocotbext-axi's
``AxiLiteMaster``); only the tests of the bus itself (every address of the window, holes, byte
strobes, response codes) use the raw word accesses ``tb.read`` / ``tb.write``. Run by
tests/hw/test_controller.py.
"""

import cocotb
from cocotb.triggers import RisingEdge
from cocotb.utils import get_sim_time

from ahasd.firmware.driver import EDC_MODES, INTERRUPTS
from ahasd.hw.regmap import counter_fields
from ahasd.sim.blocks.csr import OKAY, SLVERR, CSRModel
from ahasd.sim.blocks.edc import EDC as GoldenEDC
from ahasd.sim.blocks.tvc import TVC as GoldenTVC
from ahasd.spec.descriptors import FeedbackDescriptor
from ahasd.tb.controller_bench import PIM_PERIOD_PS
from ahasd.tb.controller_bench import ControllerTB as TB


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
    await tb.driver.check()   # ID and register-map version, as firmware starts
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
        tb.tvc_inputs(kv_len, now, pending)
        entropy = rng.choice([rng.getrandbits(16), rng.randrange(8000),
                              rng.randrange(30000, 65536)])
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
            result = FeedbackDescriptor(accepted_length=rng.randrange(9),
                                        full=rng.getrandbits(1), cycles=rng.getrandbits(16),
                                        kv_length=rng.randrange(1, 2048))
            if rng.random() < 0.5:
                # A PIM record just before: the result arrives while TVC's divider is busy and
                # must wait for it (never be dropped).
                record = tb.send_record(rng.choice([1, 2]), rng.getrandbits(14),
                                        rng.randrange(1, 64))
                while tb.record.busy:
                    await RisingEdge(dut.clk)
                tvc.record(*record)
            tb.feedback_in.send(result)
            seen = len(tb.feedback_seen)
            for _ in range(400):
                await RisingEdge(dut.clk)
                if len(tb.feedback_seen) > seen:
                    break
            edc.verify(bool(result.full))
            tvc.record("nvct", result.cycles, result.kv_length)
            await tb.cycles(40)   # the divider
        if rng.random() < 0.2:
            record = tb.send_record(rng.choice([1, 2]), rng.getrandbits(14),
                                    rng.choice([0, rng.randrange(1, 64)]))
            await tb.cycles(40)
            tvc.record(*record)
    await tb.cycles(50)
    assert [d.verify_length for d in tb.preverify] == expected_inserts
    assert all(d.urgent == 0 for d in tb.preverify)
    assert stops > 0 and expected_inserts, "the sequence exercised no stop / no insert"
    drv = tb.driver
    counters = await drv.counters()
    assert counters["EDC_DECISIONS"] == edc.decisions
    assert counters["EDC_SUPPRESSED"] == edc.suppressed
    assert counters["EDC_VERIFICATIONS"] == edc.verifications
    assert counters["EDC_SQUASHES"] == edc.squashes
    assert await drv.field("EDC_STATUS", "llr") == edc.llr
    assert counters["TVC_DECISIONS"] == stops
    assert counters["TVC_INSERTS"] == len(expected_inserts)
    assert counters["TVC_ERRORS"] == tvc.error_count
    for table in ("nvct", "pdct", "pvct"):
        assert await drv.read(f"TVC_{table.upper()}_AVG") == tvc.average(table)


@cocotb.test()
async def interrupts_and_overrides(dut):
    """Each interrupt source sets its status bit, drives irq when enabled, clears on W1C;
    EDC_CTRL.mode overrides decisions; CTRL.soft_reset restarts EDC."""
    tb = TB(dut)
    await tb.reset()
    drv = tb.driver
    await drv.enable_interrupts("edc_stop")
    await drv.set_edc_mode("never")
    await drv.configure_tvc(enabled=False, max_len=8, load_presets=False)
    assert await tb.draft(100) == 0
    await tb.cycles(3)
    assert int(dut.irq.value) == 1
    assert await drv.pending_interrupts() == {"edc_stop"}
    assert await drv.field("INT_RAW", "edc_stop")
    await drv.acknowledge("edc_stop")
    await tb.cycles(2)
    assert int(dut.irq.value) == 0 and await drv.pending_interrupts() == set()
    assert await drv.read("INT_COUNT") == 1
    assert await drv.read("TVC_DECISIONS") == 0    # TVC disabled: no request
    await drv.set_edc_mode("always")
    assert await tb.draft(60000) == 1
    assert await drv.pending_interrupts() == set()
    # Draft-queue threshold: the NPU does not pop, so the queue fills.
    tb.p_ready = 0.0
    await drv.set_queue_threshold("draft_q", 4)
    await drv.enable_interrupts("draft_q")
    assert await drv.pending_interrupts() == set()
    for _ in range(4):
        await tb.draft(1000)
    await tb.cycles(5)
    assert "draft_q" in await drv.pending_interrupts() and int(dut.irq.value) == 1
    assert (await drv.queue_status("draft_q"))["fill"] == 4
    await drv.enable_interrupts()
    await tb.cycles(1)
    assert int(dut.irq.value) == 0                     # status still set, but masked
    await drv.acknowledge(*INTERRUPTS)
    assert await drv.pending_interrupts() == set()
    # TVC record error and insert.
    tb.send_record(1, 100, 0)                          # length 0: an error
    await tb.cycles(10)
    assert await drv.pending_interrupts() == {"tvc_error"}
    assert await drv.read("TVC_ERRORS") == 1
    await drv.configure_tvc(enabled=True, max_len=3, load_presets=False)
    await drv.set_edc_mode("never")
    tb.tvc_inputs(4000, 0, 9)
    tb.p_ready = 1.0
    await tb.draft(5)
    await tb.cycles(20)
    assert "tvc_insert" in await drv.pending_interrupts()
    assert [d.verify_length for d in tb.preverify] == [3]
    assert await drv.field("TVC_STATUS", "last_length") == 3
    # Soft reset: EDC history and counters restart; registers keep their values.
    assert await drv.read("EDC_DECISIONS") > 0
    await drv.soft_reset()
    assert await drv.read("EDC_DECISIONS") == 0
    assert await drv.field("EDC_CTRL", "mode") == EDC_MODES["never"]
    ctrl = {name: await drv.field("CTRL", name) for name in ("enable", "soft_reset",
                                                            "clear_counters")}
    assert ctrl == {"enable": 1, "soft_reset": 0, "clear_counters": 0}, ctrl


@cocotb.test()
async def register_fuzz_with_traffic(dut):
    """Random register accesses (10k by default) while descriptors flow through all queues with
    random stalls and squashes: every access answers in time with the right response, storage
    registers hold what was written, and no queue loses, duplicates, reorders or invents a
    descriptor. Afterwards the queue counters match the traffic exactly."""
    tb = TB(dut)
    await tb.reset()
    drv = tb.driver
    rm = tb.regmap
    enable = rm["CTRL"].field("enable").mask
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
                data |= enable   # mostly keep the controller on
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
                        got, want = f.extract(value), f.extract(model.peek(reg.ident))
                        assert got == want, f"{reg.ident}.{f.name}: {got:#x}, expected {want:#x}"
        if i % 1000 == 999:
            tb.p_valid = rng.choice([0.2, 0.5, 0.9])
            tb.p_ready = rng.choice([0.1, 0.5, 0.9])
    await tb.quiesce()
    assert tb.draft_q.drain() == [] and len(tb.feedback_q) == 0
    assert tb.counts()["draft_q_pops"] > 100 and tb.counts()["squashes"] > 3
    assert all(1 <= d.verify_length <= 8 for d in tb.preverify)

    # Counters: clear, run more traffic without register writes, then check EVERY counter of
    # the register map against what the bench saw (exactly where the bench can see the events,
    # within the bounds the events allow where it cannot).
    await drv.set_fields("CTRL", enable=1, clear_counters=1)
    counters = counter_fields(rm)
    start = {r.ident: await drv.read(r.ident) for r, _ in counters}
    before = tb.counts()
    marks = {"discarded": tb.draft_q.discarded, "preverify": len(tb.preverify),
             "tasks": len(tb.tasks), "decisions": len(tb.decisions),
             "feedback": len(tb.feedback_seen), "time": get_sim_time("ps")}
    tb.traffic = True
    tb.squashing = True
    tb.p_valid, tb.p_ready = 0.7, 0.4
    await tb.cycles(3000)
    await tb.quiesce()
    end = {r.ident: await drv.read(r.ident) for r, _ in counters}
    after = tb.counts()
    assert tb.draft_q.drain() == []
    seen = {name.upper(): after[name] - before[name] for name in after}
    seen["SQUASH_DISCARDED"] = tb.draft_q.discarded - marks["discarded"]
    seen["PREVERIFY_Q_PUSHES"] = len(tb.preverify) - marks["preverify"]
    seen["TVC_INSERTS"] = seen["PREVERIFY_Q_PUSHES"]
    seen["EDC_DECISIONS"] = seen["DRAFT_Q_PUSHES"]    # every push is an EDC draft event
    seen["TVC_ERRORS"] = 0                             # no record of length 0 in this phase
    tasks = tb.tasks[marks["tasks"] - 1 if marks["tasks"] else 0:]
    kinds = [kind for kind, _ in tasks]
    changes = sum(a != b for a, b in zip(kinds, kinds[1:])) + (not marks["tasks"])
    cycles = (get_sim_time("ps") - marks["time"]) // PIM_PERIOD_PS + 1
    decisions = tb.decisions[marks["decisions"]:]
    feedback = len(tb.feedback_seen) - marks["feedback"]
    # Bounds: (low, high) of counters whose events the bench cannot see one by one.
    bounds = {
        "INT_COUNT": (0, cycles), "PREVERIFY_Q_PUSHBACKS": (0, cycles),
        "TVC_DECISIONS": (seen["TVC_INSERTS"], decisions.count(0)),
        "EDC_SUPPRESSED": (0, len(decisions)), "EDC_VERIFICATIONS": (0, feedback),
        "EDC_FIFO_DROPS": (0, seen["EDC_DECISIONS"]), "GTS_BUSY": (0, cycles),
        "GTS_STALLS": (0, cycles),
        # One more if a soft reset (a random CTRL write) left GTS idle since the last task.
        "GTS_SWITCHES": (changes, changes + 1),
    }
    bounds["EDC_SQUASHES"] = (0, end["EDC_VERIFICATIONS"] - start["EDC_VERIFICATIONS"])
    cleared = {"INT_COUNT", "TVC_DECISIONS", "TVC_INSERTS"} | {
        r.ident for r, _ in counters if len(r.path) == 2 or r.ident.startswith("SQUASH")}
    unchecked = [r.ident for r, _ in counters if r.ident not in seen and r.ident not in bounds]
    assert not unchecked, f"counters of the map without a check in the fuzz: {unchecked}"
    for reg, field in counters:
        ident = reg.ident
        got = end[ident] if ident in cleared else (end[ident] - start[ident]) % (1 << field.width)
        if ident in seen:
            assert got == seen[ident], f"{ident}: {got}, expected {seen[ident]}"
        else:
            low, high = bounds[ident]
            assert low <= got <= high, f"{ident}: {got}, expected {low}..{high}"


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
    drv = tb.driver
    await drv.set_fields("GTS_DRAFT_MASK", mask=0x00FF)
    await drv.set_fields("GTS_PREVERIFY_MASK", mask=0xFF00)
    await drv.set_edc_mode("always")
    assert await tb.draft(100) == 1
    tb.draft_request.send({"length": 5})
    await tb.cycles(5)
    assert tb.tasks == [(0, 5)]
    assert int(dut.rank_en.value) == 0x00FF
    gts = await drv.gts_status()
    assert gts["state"] == "draft" and gts["draft_allowed"], gts
    # A stop decision withholds the next request, even with the ranks idle.
    await drv.configure_tvc(enabled=False, max_len=8, load_presets=False)
    await drv.set_edc_mode("never")
    assert await tb.draft(100) == 0
    tb.done_pulses = 1
    tb.draft_request.send({"length": 7})
    await tb.cycles(50)
    assert tb.tasks == [(0, 5)] and int(dut.rank_en.value) == 0
    gts = await drv.gts_status()
    assert gts["state"] == "idle" and not gts["draft_allowed"], gts
    # A verification result allows drafting again.
    tb.feedback_in.send(FeedbackDescriptor(accepted_length=3, full=1, cycles=500,
                                           kv_length=100))
    for _ in range(100):
        await RisingEdge(dut.clk)
        if len(tb.tasks) == 2:
            break
    assert tb.tasks == [(0, 5), (0, 7)]
    # Pre-verification first: while the draft task runs, a stop decision makes TVC insert a
    # pre-verify task; a result re-allows drafting and a new request waits as well.
    await drv.configure_tvc(enabled=True, max_len=5, load_presets=False)
    tb.tvc_inputs(4000, 0, 9)
    assert await tb.draft(100) == 0
    await tb.cycles(40)      # the decide waits for the NVCT record's divider (34 cycles)
    assert await drv.field("PREVERIFY_Q_STATUS", "fill") == 1
    tb.feedback_in.send(FeedbackDescriptor(accepted_length=1, full=0, cycles=900,
                                           kv_length=120))
    await tb.cycles(60)
    assert (await drv.gts_status())["draft_allowed"]   # allowed again
    tb.draft_request.send({"length": 9})
    await tb.cycles(10)
    assert tb.tasks == [(0, 5), (0, 7)]                # the ranks are still busy
    tb.done_pulses = 1
    await tb.cycles(4)
    assert tb.tasks == [(0, 5), (0, 7), (1, 5)]
    assert int(dut.rank_en.value) == 0xFF00
    tb.done_pulses = 1
    await tb.cycles(4)
    assert tb.tasks == [(0, 5), (0, 7), (1, 5), (0, 9)]
    assert await drv.read("GTS_SWITCHES") == 3      # DRAFT -> PREVERIFY -> DRAFT, + first
