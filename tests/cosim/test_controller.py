"""The Verilated controller top on the harness, both clocks and AXI4-Lite, scoreboarded against the
golden models: registers (ahasd.sim.blocks.csr.CSRModel), every EDC decision (sim.blocks.edc), TVC
inserts and table averages (sim.blocks.tvc), the three queues (sim.blocks.queues) and the GTS task
order, for a random + realistic descriptor flow with random stalls and squashes."""

import math
import random

import pytest

from ahasd.cosim.controller import VerilatedController
from ahasd.sim.blocks.csr import OKAY, SLVERR, CSRModel
from ahasd.sim.blocks.edc import EDC as GoldenEDC
from ahasd.sim.blocks.edc import entropy_to_fx
from ahasd.sim.blocks.queues import QueueModel, SquashQueueModel
from ahasd.sim.blocks.tvc import TVC as GoldenTVC
from ahasd.spec.descriptors import DraftDescriptor, FeedbackDescriptor

# Small queues, so that full queues, push-back and threshold crossings happen often.
DEPTHS = {"draft_depth": 8, "feedback_depth": 4, "preverify_depth": 4}
TABLES = ("nvct", "pdct", "pvct")


def record_word(table, cycles, length):
    """A TVC record payload: table [1:0], cycles [33:2], length [49:34]."""
    return table | cycles << 2 | length << 34


@pytest.fixture
def ctl():
    with VerilatedController(**DEPTHS) as c:
        yield c


def status_values(rm):
    """What the status registers read after reset (the idle hardware)."""
    d, f, p = DEPTHS.values()
    return {
        ("PARAMS", "draft_depth"): d, ("PARAMS", "feedback_depth"): f,
        ("PARAMS", "preverify_depth"): p, ("PARAMS", "ranks"): 16,
        ("DRAFT_Q_STATUS", "empty"): 1, ("FEEDBACK_Q_STATUS", "empty"): 1,
        ("PREVERIFY_Q_STATUS", "empty"): 1, ("EDC_STATUS", "last_continue"): 1,
        ("GTS_STATUS", "draft_allowed"): 1,
        **{(f"TVC_{t.upper()}_AVG", "ratio"): rm[f"TVC_{t.upper()}_PRESET"].reset for t in TABLES},
    }


def test_registers_after_reset(ctl):
    """Every address reads its reset value / the idle hardware state; holes answer SLVERR."""
    model = CSRModel(ctl.regmap)
    for (ident, name), value in status_values(ctl.regmap).items():
        model.drive(ident, name, value)
    reads = {a: ctl.read(a) for a in range(0, 256, 4)}
    ctl.run()
    for address, result in reads.items():
        assert result.value == model.read(address), f"0x{address:02X}"


def realistic_flow(rng, drafts, feedbacks):
    """Draft batches with log-normal mean entropies (median 3 nats) and random ones; verification
    results whose acceptance is likelier at low entropy, over a growing KV cache."""
    out_drafts, out_feedbacks = [], []
    for n in range(drafts):
        if rng.random() < 0.7:
            fx = min(entropy_to_fx(rng.lognormvariate(math.log(3.0), 0.5)), 0xFFFF)
        else:
            fx = rng.getrandbits(16)
        out_drafts.append(DraftDescriptor(batch_id=n & 0xFFFF, length=rng.randrange(1, 9),
                                          kv_base=(100 + 4 * n) & 0xFFFF, mean_entropy=fx))
    for n in range(feedbacks):
        kv = 100 + 16 * n
        full = rng.random() < (0.7 if rng.random() < 0.5 else 0.3)
        out_feedbacks.append(FeedbackDescriptor(
            accepted_length=8 if full else rng.randrange(8), full=int(full),
            cycles=kv * rng.randrange(100, 1000), kv_length=kv % 4096 or 1))
    return out_drafts, out_feedbacks


def flow(ctl, rng, drafts, feedbacks, records, requests, squashes):
    """Push a whole descriptor flow with random idle cycles and stalls, run it to the end and
    return what was pushed (in push order)."""
    for name, p_idle in (("draft_in", 0.5), ("feedback_in", 0.6), ("record", 0.8),
                         ("draft_request", 0.5), ("squash", 0.99)):
        ctl.gaps(name, p_idle, rng.getrandbits(32))
    ctl.ready("draft_out", (0.6, rng.getrandbits(32)))
    ctl.ready("feedback_out", (0.5, rng.getrandbits(32)))
    ctl.task_done((0.3, rng.getrandbits(32)))
    pushed = {"draft_in": [d.pack() for d in drafts], "feedback_in": [f.pack() for f in feedbacks],
              "record": [record_word(*r) for r in records], "draft_request": requests}
    for name, items in pushed.items():
        for item in items:
            ctl.push(name, item)
    for _ in range(squashes):
        ctl.push("squash")
    for _ in range(200):
        ctl.wait(2000)
        left = {name: ctl.pending(name) for name in pushed}
        ctl.run()
        left = {name: r.value for name, r in left.items()}
        if not any(left.values()):
            break
        if left["draft_request"] and not any(v for k, v in left.items() if k != "draft_request"):
            # Drafting withheld by a stop decision: a verification result allows it again.
            extra = FeedbackDescriptor(accepted_length=1, full=1, cycles=900, kv_length=120)
            ctl.push("feedback_in", extra.pack())
            pushed["feedback_in"].append(extra.pack())
    else:
        raise AssertionError(f"the flow did not drain: {left}")
    ctl.ready("draft_out", "always")
    ctl.ready("feedback_out", "always")
    ctl.task_done("always")
    ctl.wait(500)
    ctl.run()
    return pushed


def check_queues(ctl, pushed):
    """The draft queue (epoch squash) and the feedback queue against their golden models, events
    merged in simulated time (a producer's event first at equal times: the clock-domain crossing
    never shows an item at the consumer in the instant it is pushed)."""
    log, t = ctl.log, ctl.time_ps
    draft_q, feedback_q = SquashQueueModel(), QueueModel()
    events = [(t("sync", c), 0, "w_squash", None) for c, in log["draft_squash"]]
    events += [(t("sync", c), 1, "push", item) for (c, _), item
               in zip(log["draft_in"], pushed["draft_in"], strict=True)]
    events += [(t("npu", c), 2, "pop", item) for c, item in log["draft_out"]]
    events += [(t("npu", c), 3, "squash", None) for c, _ in log["squash"]]
    for _, _, kind, item in sorted(events, key=lambda e: e[:2]):
        getattr(draft_q, kind)(*(() if item is None else (item,)))
    assert draft_q.drain() == []
    for (_, _), item in zip(log["feedback_in"], pushed["feedback_in"], strict=True):
        feedback_q.push(item)
    for _, item in log["feedback_out"]:
        feedback_q.pop(item)
    assert len(feedback_q) == 0
    return draft_q


def check_edc(ctl, pushed, mode_draft=None):
    """Every decision against the golden EDC stepped on the PIM-side events of each cycle: the
    draft pushes (their mean entropy) and the verification results handed over (their ``full``),
    a verify before a draft in the same cycle; the decision comes one cycle after its draft."""
    log = ctl.log
    cycles = {}
    for (c, _), item in zip(log["draft_in"], pushed["draft_in"]):
        cycles.setdefault(c, [None, None])[0] = DraftDescriptor.unpack(item).mean_entropy
    for c, item in log["feedback_out"]:
        cycles.setdefault(c, [None, None])[1] = bool(FeedbackDescriptor.unpack(item).full)
    edc, expected = GoldenEDC(), []
    for c in sorted(cycles):
        draft, verify = cycles[c]
        decision = edc.step(draft, verify)
        if decision is not None:
            expected.append((c + 1, int(decision.cont if mode_draft is None else mode_draft)))
    assert log["decision"] == expected
    return edc


def read_regs(ctl, names):
    results = {name: ctl.read(ctl.regmap[name].address) for name in names}
    ctl.run()
    assert all(r.value[1] == OKAY for r in results.values())
    return {name: r.value[0] for name, r in results.items()}


def test_random_and_realistic_flow_matches_golden_models(ctl):
    rng = random.Random(2024)
    ctl.set_tvc_inputs(kv_len=2000, now=300, pending=6)   # a stop asks TVC about these
    drafts, feedbacks = realistic_flow(rng, 6000, 1000)
    records = [(rng.choice([1, 2]), rng.getrandbits(14), rng.randrange(1, 64)) for _ in range(240)]
    requests = [rng.randrange(1, 256) for _ in range(1200)]
    pushed = flow(ctl, rng, drafts, feedbacks, records, requests, squashes=100)
    log = ctl.log
    draft_q = check_queues(ctl, pushed)
    edc = check_edc(ctl, pushed)
    # GTS: the draft requests start as DRAFT tasks in order, each after it was taken; the
    # pre-verify tasks carry TVC's lengths (at most TVC_CTRL.max_len).
    taken = QueueModel()
    starts = iter(log["task"])
    for (c, _), length in zip(log["draft_request"], pushed["draft_request"], strict=True):
        taken.push((c, length))
    preverify = []
    for c, payload in starts:
        kind, length = payload & 1, payload >> 1
        if kind:
            preverify.append(length)
        else:
            accepted_at, want = taken.pop()
            assert (length, c > accepted_at) == (want, True)
    assert len(taken) == 0 and preverify and all(1 <= n <= 8 for n in preverify)
    regs = read_regs(ctl, [
        "DRAFT_Q_PUSHES", "DRAFT_Q_POPS", "DRAFT_Q_PUSHBACKS", "SQUASHES", "SQUASH_DISCARDED",
        "FEEDBACK_Q_PUSHES", "FEEDBACK_Q_POPS", "FEEDBACK_Q_PUSHBACKS", "PREVERIFY_Q_PUSHES",
        "PREVERIFY_Q_POPS", "EDC_DECISIONS", "EDC_SUPPRESSED", "EDC_VERIFICATIONS",
        "EDC_SQUASHES", "EDC_FIFO_DROPS", "EDC_STATUS", "TVC_DECISIONS", "TVC_INSERTS",
        "DRAFT_Q_STATUS", "FEEDBACK_Q_STATUS", "PREVERIFY_Q_STATUS"])
    waits = {name: sum(w for _, w in log[name]) for name in ("draft_in", "feedback_in")}
    assert regs == {**regs,
                    "DRAFT_Q_PUSHES": len(log["draft_in"]), "DRAFT_Q_POPS": len(log["draft_out"]),
                    "DRAFT_Q_PUSHBACKS": waits["draft_in"], "SQUASHES": len(log["squash"]),
                    "SQUASH_DISCARDED": draft_q.discarded,
                    "FEEDBACK_Q_PUSHES": len(log["feedback_in"]),
                    "FEEDBACK_Q_POPS": len(log["feedback_out"]),
                    "FEEDBACK_Q_PUSHBACKS": waits["feedback_in"],
                    "PREVERIFY_Q_PUSHES": len(preverify), "PREVERIFY_Q_POPS": len(preverify),
                    "EDC_DECISIONS": edc.decisions, "EDC_SUPPRESSED": edc.suppressed,
                    "EDC_VERIFICATIONS": edc.verifications, "EDC_SQUASHES": edc.squashes,
                    "TVC_INSERTS": len(preverify),
                    "DRAFT_Q_STATUS": 1 << 16, "FEEDBACK_Q_STATUS": 1 << 16,
                    "PREVERIFY_Q_STATUS": 1 << 16}
    assert regs["EDC_STATUS"] & 0xFF == edc.llr
    stops = sum(1 for _, d in log["decision"] if not d)
    assert 0 < regs["TVC_DECISIONS"] <= stops          # stops during a request merge into it
    # The flow exercised what it is meant to: push-back, squashes that discarded, stops.
    assert waits["draft_in"] and waits["feedback_in"] and draft_q.discarded and stops
    assert len(log["squash"]) == 100 and len(log["draft_in"]) == 6000


def test_decisions_and_inserts_match_golden_edc_and_tvc(ctl):
    """A directed sequence, spaced so that the order of events at TVC is known: each draft's
    decision against the golden EDC, each stop's pre-verification insert against the golden
    TVC (length capped by max_len), then the EDC and TVC registers."""
    rng = random.Random(5)
    rm = ctl.regmap
    edc = GoldenEDC()
    tvc = GoldenTVC(freq_ratio=rm["TVC_FREQ_RATIO"].reset,
                    presets={t: rm[f"TVC_{t.upper()}_PRESET"].reset for t in TABLES})
    max_len = rm["TVC_CTRL"].field("max_len").reset
    ctl.task_done("always")
    inserts, stops, feedbacks = [], 0, 0
    for step in range(120):
        kv_len, now, pending = rng.randrange(4096), rng.getrandbits(15), rng.randrange(12)
        ctl.set_tvc_inputs(kv_len, now, pending)
        entropy = rng.choice([rng.getrandbits(16), rng.randrange(8000),
                              rng.randrange(30000, 65536)])
        ctl.push("draft_in", DraftDescriptor(batch_id=step, length=4, kv_base=0,
                                             mean_entropy=entropy).pack())
        ctl.harness.until_count(ctl.sinks["decision"], step + 1, "sync", 200)
        ctl.wait(12)
        ctl.run()
        golden = edc.draft_fx(entropy)
        assert ctl.log["decision"][-1][1] == int(golden.cont), f"step {step}"
        if not golden.cont:
            stops += 1
            d = tvc.decide(kv_len, now, pending)
            if d.insert:
                inserts.append(min(d.length, max_len))
        if rng.random() < 0.5 or len(edc.fifo) >= 6:
            if rng.random() < 0.5:   # a PIM record first: the result waits for TVC's divider
                record = (rng.choice([1, 2]), rng.getrandbits(14), rng.randrange(1, 64))
                ctl.push("record", record_word(*record))
                tvc.record(TABLES[record[0]], *record[1:])
            result = FeedbackDescriptor(
                accepted_length=rng.randrange(9), full=rng.getrandbits(1),
                cycles=rng.getrandbits(16), kv_length=rng.randrange(1, 2048))
            ctl.push("feedback_in", result.pack())
            feedbacks += 1
            ctl.harness.until_count(ctl.sinks["feedback_out"], feedbacks, "sync", 400)
            ctl.wait(40)                   # the divider
            edc.verify(bool(result.full))
            tvc.record("nvct", result.cycles, result.kv_length)
        if rng.random() < 0.2:
            table, length = rng.choice([1, 2]), rng.choice([0, rng.randrange(1, 64)])
            cycles = rng.getrandbits(14)
            ctl.push("record", record_word(table, cycles, length))
            ctl.wait(40)
            tvc.record(TABLES[table], cycles, length)
    ctl.wait(50)
    ctl.run()
    preverify = [p >> 1 for _, p in ctl.log["task"] if p & 1]
    assert preverify == inserts and stops > 0 and inserts
    regs = read_regs(ctl, ["EDC_DECISIONS", "EDC_SUPPRESSED", "EDC_VERIFICATIONS",
                           "EDC_SQUASHES", "TVC_DECISIONS", "TVC_INSERTS", "TVC_ERRORS"]
                     + [f"TVC_{t.upper()}_AVG" for t in TABLES])
    assert regs == {"EDC_DECISIONS": edc.decisions, "EDC_SUPPRESSED": edc.suppressed,
                    "EDC_VERIFICATIONS": edc.verifications, "EDC_SQUASHES": edc.squashes,
                    "TVC_DECISIONS": stops, "TVC_INSERTS": len(inserts),
                    "TVC_ERRORS": tvc.error_count,
                    **{f"TVC_{t.upper()}_AVG": tvc.average(t) for t in TABLES}}
    assert tvc.error_count > 0          # records of length 0 were among them


def test_register_fuzz_with_traffic(ctl):
    """Random register accesses in batches while descriptors flow through the queues with
    random stalls and squashes: every access answers in time with the right response, the
    fields only the bus changes match CSRModel, and no queue loses, duplicates, reorders or
    invents a descriptor."""
    rng = random.Random(11)
    rm = ctl.regmap
    model = CSRModel(rm)
    holes = [a for a in range(0, 256, 4) if rm.at(a) is None]
    addresses = [r.address for r in rm.registers] + holes
    drafts, feedbacks = realistic_flow(rng, 600, 120)
    for name, p_idle in (("draft_in", 0.4), ("feedback_in", 0.7), ("squash", 0.98)):
        ctl.gaps(name, p_idle, rng.getrandbits(32))
    ctl.ready("draft_out", (0.5, 3))
    ctl.ready("feedback_out", (0.5, 4))
    pushed = {"draft_in": [d.pack() for d in drafts], "feedback_in": [f.pack() for f in feedbacks]}
    for name, items in pushed.items():
        for item in items:
            ctl.push(name, item)
    for _ in range(12):
        ctl.push("squash")
    accesses = 0
    for _ in range(20):
        queued = []
        for _ in range(100):
            address = rng.choice(addresses)
            if rng.random() < 0.5:
                data = rng.getrandbits(32)
                if rm.at(address) is rm["CTRL"] and rng.random() < 0.8:
                    data |= 1                       # mostly keep the controller enabled
                strobe = rng.choice([0xF, 0xF, 0x1, 0x2, 0x4, 0x8, 0x3, 0xC])
                queued.append(("w", address, ctl.write(address, data, strobe),
                               model.write(address, data, strobe)))
            else:
                reg = rm.at(address)   # what the bus-only fields hold at this point of the batch
                queued.append(("r", address, ctl.read(address),
                               model.peek(reg.ident) if reg else None))
        ctl.run()
        for kind, address, result, want in queued:
            accesses += 1
            if kind == "w":
                assert result.value == want, f"write 0x{address:02X}"
                continue
            value, resp = result.value
            reg = rm.at(address)
            assert resp == (SLVERR if reg is None else OKAY), f"read 0x{address:02X}"
            for f in (reg.fields if reg else ()):
                if f.kind in ("config", "storage", "const", "pulse"):
                    got, exp = (value & f.mask) >> f.lsb, (want & f.mask) >> f.lsb
                    assert got == exp, f"{reg.ident}.{f.name}: {got:#x}, expected {exp:#x}"
    ctl.ready("draft_out", "always")
    ctl.ready("feedback_out", "always")
    ctl.harness.drain("sync", 200_000)
    ctl.wait(200)
    ctl.run()
    pushed["squash"] = [None] * 12
    draft_q = check_queues(ctl, pushed)
    assert accesses == 2000 and len(ctl.log["draft_out"]) > 100 and draft_q.squashes == 12
