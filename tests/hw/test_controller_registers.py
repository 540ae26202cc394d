"""Every documented register field of the controller, in the fast tier (Amaranth's simulator).

The access table is generated from the register map (``hw/regs.rdl``): each field's reset value,
whether software writes reach it and what it reads after writing all ones and all zeros, by its
kind. Every field that connects to the hardware must also name a directed test of its effect in
:data:`BEHAVIOUR`; a field added to the map without one fails
``test_every_field_has_a_directed_test``. The queues, GTS and global controls are tested in
``test_controller_queues.py`` (with the push-back counters), the counters' own behaviour (clearing,
saturation and wrap in a narrow-counter build) in ``test_controller_counters.py``.
"""

import pytest

from ahasd.hw.controller import EDC_MODES, INTERRUPTS, Controller
from ahasd.hw.regmap import load
from ahasd.sim.blocks.csr import OKAY
from ahasd.sim.blocks.edc import EDC as GoldenEDC
from ahasd.tb.controller_sim import ControllerSim
from ahasd.tb.controller_steps import DEPTHS, INSERT_INPUTS, QUEUES, golden_tvc, run, trigger, untrigger

RM = load()
FIELDS = [(r, f) for r in RM.registers for f in r.fields]
ALL_ONES = 0xFFFF_FFFF


def idle_status(dut):
    """What the ``status`` fields read with no traffic (all others read 0)."""
    d, f, p = dut.depths
    return {
        ("PARAMS", "draft_depth"): d, ("PARAMS", "feedback_depth"): f,
        ("PARAMS", "preverify_depth"): p, ("PARAMS", "ranks"): 16,
        **{(f"{q.upper()}_STATUS", "empty"): 1 for q in QUEUES},
        ("EDC_STATUS", "last_continue"): 1, ("GTS_STATUS", "draft_allowed"): 1,
        **{(f"TVC_{t}_AVG", "ratio"): RM[f"TVC_{t}_PRESET"].reset for t in ("NVCT", "PDCT",
                                                                              "PVCT")},
    }


def field_id(item):
    reg, field = item
    return f"{reg.ident}.{field.name}"


@pytest.fixture(scope="module")
def access():
    """Each register read after reset, after writing all ones and after writing all zeros
    (then restored to its reset value), with the responses."""
    sim = ControllerSim(Controller(**DEPTHS))
    seen = {}

    async def sweep(ctx):
        for reg in RM.registers:
            r0 = await sim.read(ctx, reg.address)
            w1 = await sim.write(ctx, reg.address, ALL_ONES)
            r1 = await sim.read(ctx, reg.address)
            w0 = await sim.write(ctx, reg.address, 0)
            r2 = await sim.read(ctx, reg.address)
            await sim.write(ctx, reg.address, reg.reset)
            seen[reg.ident] = {"reset": r0, "ones": r1, "zeros": r2, "resp": {w1, w0, r0[1],
                                                                             r1[1], r2[1]}}
    sim.run(sweep)
    return sim.dut, seen


@pytest.mark.parametrize("item", FIELDS, ids=map(field_id, FIELDS))
def test_field_access(access, item):
    """Reset value and software access of one field, as its kind in the map says."""
    dut, seen = access
    reg, f = item
    got = {k: f.extract(seen[reg.ident][k][0]) for k in ("reset", "ones", "zeros")}
    assert seen[reg.ident]["resp"] == {OKAY}
    ones = (1 << f.width) - 1
    if f.kind in ("config", "storage"):
        want = {"reset": f.reset, "ones": ones, "zeros": 0}
    elif f.kind == "const":
        want = dict.fromkeys(got, f.reset)
    elif f.kind == "status":
        want = dict.fromkeys(got, idle_status(dut).get((reg.ident, f.name), 0))
    else:   # pulse (reads 0), intr (nothing set it; W1C of 0), counter (no events)
        assert f.kind in ("pulse", "intr", "counter"), f.kind
        want = dict.fromkeys(got, 0)
    assert got == want


def test_unused_bits_read_zero(access):
    _, seen = access
    for reg in RM.registers:
        used = sum(f.mask for f in reg.fields)
        assert seen[reg.ident]["ones"][0] & ~used == 0, reg.ident


# ---- the directed test of each field's effect ------------------------------------------------
def _queue_tests():
    table = {}
    for q in QUEUES:
        Q = q.upper()
        table.update({f"{Q}_STATUS.fill": "test_queue_status", f"{Q}_STATUS.empty":
                      "test_queue_status", f"{Q}_STATUS.full": "test_queue_status",
                      f"{Q}_THRESHOLD.threshold": "test_queue_status",
                      f"{Q}_PUSHES.count": "test_queue_status",
                      f"{Q}_POPS.count": "test_queue_status",
                      f"{Q}_PUSHBACKS.count": "test_pushbacks"})
    return table


#: ``REGISTER.field`` -> the test (in this module or test_controller_counters.py) of its effect.
BEHAVIOUR = {
    "CTRL.enable": "test_ctrl_enable", "CTRL.soft_reset": "test_soft_reset",
    "CTRL.clear_counters": "test_counters_clear_as_documented",
    **{f"PARAMS.{f.name}": "test_field_access" for f in RM["PARAMS"].fields},
    **{f"INT_{r}.{n}": "test_interrupt" for r in ("STATUS", "ENABLE", "RAW") for n in INTERRUPTS},
    "INT_COUNT.count": "test_int_count",
    "EDC_CTRL.mode": "test_edc_mode",
    **{f"EDC_STATUS.{n}": "test_edc_mode" for n in ("llr", "pending", "last_continue")},
    **{f"EDC_{n}.count": "test_edc_mode" for n in ("DECISIONS", "SUPPRESSED", "VERIFICATIONS",
                                                   "SQUASHES", "FIFO_DROPS")},
    "TVC_FREQ_RATIO.ratio": "test_tvc_presets_and_ratio",
    **{f"TVC_{t}_{k}.ratio": "test_tvc_presets_and_ratio" for t in ("NVCT", "PDCT", "PVCT")
       for k in ("PRESET", "AVG")},
    "TVC_CTRL.load_presets": "test_tvc_presets_and_ratio", "TVC_CTRL.disable": "test_tvc_disable",
    "TVC_CTRL.max_len": "test_tvc_max_len", "TVC_DECISIONS.count": "test_tvc_max_len",
    "TVC_INSERTS.count": "test_tvc_max_len", "TVC_ERRORS.count": "test_interrupt",
    "TVC_STATUS.last_length": "test_tvc_max_len", "TVC_STATUS.deciding": "test_pushbacks",
    "TVC_STATUS.busy": "test_tvc_presets_and_ratio",
    **_queue_tests(),
    "SQUASHES.count": "test_squash_counters", "SQUASH_DISCARDED.count": "test_squash_counters",
    **{f"GTS_STATUS.{f.name}": "test_gts_registers" for f in RM["GTS_STATUS"].fields},
    **{f"GTS_{n}": "test_gts_registers" for n in ("SWITCHES.count", "DRAFT_MASK.mask",
                                                  "PREVERIFY_MASK.mask", "BUSY.count",
                                                  "STALLS.count")},
}


def test_every_field_has_a_directed_test():
    """A field that reaches the hardware (anything but a constant or plain storage) is named
    in BEHAVIOUR, with a test that exists."""
    import re
    from pathlib import Path
    here = Path(__file__)
    tests = {name for path in (here, here.with_name("test_controller_counters.py"),
                               here.with_name("test_controller_queues.py"))
             for name in re.findall(r"^def (test_\w+)", path.read_text(), re.M)}
    missing = [field_id(x) for x in FIELDS if x[1].kind not in ("const", "storage")
               and field_id(x) not in BEHAVIOUR]
    assert not missing, f"fields without a directed test: {missing}"
    stale = sorted(set(BEHAVIOUR) - {field_id(x) for x in FIELDS})
    assert not stale, f"BEHAVIOUR names fields the map lacks: {stale}"
    assert set(BEHAVIOUR.values()) <= tests, sorted(set(BEHAVIOUR.values()) - tests)


# ---- TVC --------------------------------------------------------------------------------------
def test_tvc_max_len():
    """TVC_CTRL.max_len caps each inserted pre-verification; 0 acts as 1 (not as 0 or 8), a cap
    above TVC's own longest changes nothing. Each stop asks TVC once (TVC_DECISIONS), each
    insert counts in TVC_INSERTS, TVC_STATUS.last_length is the pushed length."""
    caps = [(8, 8), (0, 1), (1, 1), (2, 2), (5, 5), (15, 8), (3, 3)]

    async def body(sim, ctx):
        sim.task_done = sim.draft_ready = True
        sim.tvc_inputs(ctx, *INSERT_INPUTS)
        assert golden_tvc().decide(*INSERT_INPUTS).length == 8
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        for n, (cap, length) in enumerate(caps, 1):
            await sim.write_reg(ctx, "TVC_CTRL", sim.word("TVC_CTRL", max_len=cap))
            assert await sim.draft(ctx, 100) == 0
            await sim.settle(ctx)
            assert sim.tasks[-1] == (1, length), f"max_len {cap}"
            assert await sim.read_field(ctx, "TVC_STATUS", "last_length") == length
            assert await sim.read_reg(ctx, "TVC_DECISIONS") == n
            assert await sim.read_reg(ctx, "TVC_INSERTS") == n
        # No insert: TVC_STATUS.last_length reads 0.
        sim.tvc_inputs(ctx, INSERT_INPUTS[0], INSERT_INPUTS[1], 0)
        await sim.draft(ctx, 100)
        await sim.settle(ctx)
        assert await sim.read_field(ctx, "TVC_STATUS", "last_length") == 0
        assert await sim.read_reg(ctx, "TVC_INSERTS") == len(caps)
        assert await sim.read_reg(ctx, "TVC_DECISIONS") == len(caps) + 1
    sim = run(body)
    assert [t for t in sim.tasks if t[0] == 1] == [(1, length) for _, length in caps]


def test_tvc_disable():
    """TVC_CTRL.disable: stop decisions ask TVC nothing and nothing is inserted."""
    async def body(sim, ctx):
        sim.task_done = True
        sim.tvc_inputs(ctx, *INSERT_INPUTS)
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        await sim.write_reg(ctx, "TVC_CTRL", sim.word("TVC_CTRL", disable=1, max_len=8))
        for _ in range(3):
            assert await sim.draft(ctx, 100) == 0
            assert await sim.read_field(ctx, "TVC_STATUS", "deciding") == 0
        await sim.settle(ctx)
        assert await sim.read_reg(ctx, "TVC_DECISIONS") == 0
        assert await sim.read_reg(ctx, "TVC_INSERTS") == 0
        await sim.write_reg(ctx, "TVC_CTRL", sim.word("TVC_CTRL", max_len=8))
        await sim.draft(ctx, 100)
        await sim.settle(ctx)
        assert await sim.read_reg(ctx, "TVC_INSERTS") == 1
    sim = run(body)
    assert sim.tasks == [(1, 8)]


def test_tvc_presets_and_ratio():
    """New presets reach the tables only on TVC_CTRL.load_presets (the averages read them
    back); TVC_FREQ_RATIO and the presets steer the decisions as in the golden model; records
    update the averages as in the golden model, TVC_STATUS.busy while the divider runs."""
    presets = {"nvct": 0x1800, "pdct": 0x0900, "pvct": 0x2A00}
    ratio = 0x5000     # 1.25: the PIM faster than the NPU
    # Inputs whose decisions differ at the default ratio and at the default presets.
    inputs = [(10, 100, 9), (60, 1000, 9), (1000, 20000, 9), (30, 100, 9), (10, 1000, 9)]

    async def body(sim, ctx):
        sim.task_done = True
        for t, v in presets.items():
            await sim.write_reg(ctx, f"TVC_{t.upper()}_PRESET", v)
        await sim.write_reg(ctx, "TVC_FREQ_RATIO", ratio)
        for t in presets:   # not loaded yet
            assert await sim.read_reg(ctx, f"TVC_{t.upper()}_AVG") == RM[
                f"TVC_{t.upper()}_PRESET"].reset
        await sim.write_reg(ctx, "TVC_CTRL", sim.word("TVC_CTRL", load_presets=1, max_len=8))
        assert await sim.read_field(ctx, "TVC_CTRL", "load_presets") == 0
        for t, v in presets.items():
            assert await sim.read_reg(ctx, f"TVC_{t.upper()}_AVG") == v
        golden = golden_tvc(ratio, presets)
        others = [golden_tvc(None, presets), golden_tvc(ratio, None)]
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        want, other_wants = [], [[], []]
        for kv_len, now, pending in inputs:
            sim.tvc_inputs(ctx, kv_len, now, pending)
            await sim.draft(ctx, 100)
            await sim.settle(ctx)
            d = golden.decide(kv_len, now, pending)
            if d.insert:
                want.append((1, d.length))
            for model, other in zip(others, other_wants):
                o = model.decide(kv_len, now, pending)
                other.append(o.length if o.insert else None)
                model.record("pdct", 5000 + kv_len, 7)
            # A record (the PIM's PDCT): the divider is busy for a while.
            await sim.offer(ctx, sim.dut.record, {"table": 1, "cycles": 5000 + kv_len,
                                                  "length": 7})
            assert await sim.read_field(ctx, "TVC_STATUS", "busy") == 1
            golden.record("pdct", 5000 + kv_len, 7)
            await sim.settle(ctx)
            assert await sim.read_field(ctx, "TVC_STATUS", "busy") == 0
        for t in presets:
            assert await sim.read_reg(ctx, f"TVC_{t.upper()}_AVG") == golden.average(t), t
        assert sim.tasks == want and 0 < len(want) < len(inputs), (sim.tasks, want)
        assert all([(1, x) for x in other if x is not None] != want for other in other_wants)
    run(body)


# ---- EDC --------------------------------------------------------------------------------------
def edc_script(rng_seed=5, steps=28):
    """Drafts and verification results whose decisions mix continue and stop."""
    import random
    rng = random.Random(rng_seed)
    script = []
    for step in range(steps):
        script.append(("draft", rng.choice([rng.randrange(3000), rng.randrange(30000, 65536)])))
        if step % 3 != 2:
            script.append(("verify", int(rng.random() < 0.4)))
    # A run of drafts without results: the pending FIFO overflows (EDC_FIFO_DROPS).
    return script + [("draft", rng.randrange(65536)) for _ in range(10)]


def test_edc_mode():
    """EDC_CTRL.mode: predict follows the EDC (golden model), always / never override it, and
    the unused code 3 acts as predict (documented), not as always or never. EDC_STATUS and
    the EDC counters follow the golden model whatever the override (they count the EDC's own
    predictions); last_continue is the decision after the override."""
    script = edc_script()

    async def body(sim, ctx):
        sim.task_done = sim.draft_ready = True
        await sim.write_reg(ctx, "TVC_CTRL", sim.word("TVC_CTRL", disable=1, max_len=8))
        # One EDC history throughout: the override does not feed back into the EDC. (No soft
        # reset between the modes: it does not clear the EDC's PHT memory.)
        golden = GoldenEDC()
        for mode in (EDC_MODES["predict"], 3, EDC_MODES["always"], EDC_MODES["never"]):
            await sim.write_reg(ctx, "EDC_CTRL", mode)
            got, predicted = [], []
            for op, value in script:
                if op == "draft":
                    got.append(await sim.draft(ctx, value))
                    predicted.append(int(golden.draft_fx(value).cont))
                else:
                    await sim.result(ctx, full=value)
                    golden.verify(bool(value))
            await sim.settle(ctx, 10)
            if mode in (EDC_MODES["predict"], 3):
                assert got == predicted, f"mode {mode}"
            else:
                assert got == [int(mode == EDC_MODES["always"])] * len(got), f"mode {mode}"
            assert 0 < sum(predicted) < len(predicted), "the script must mix decisions"
            assert await sim.read_field(ctx, "EDC_STATUS", "llr") == golden.llr
            assert await sim.read_field(ctx, "EDC_STATUS", "pending") == len(golden.fifo)
            assert await sim.read_field(ctx, "EDC_STATUS", "last_continue") == got[-1]
            for name in ("decisions", "suppressed", "verifications", "squashes", "fifo_drops"):
                assert await sim.read_reg(ctx, f"EDC_{name.upper()}") == getattr(golden, name), \
                    (mode, name)
        assert golden.fifo_drops > 0 and golden.squashes > 0
    run(body)


# ---- interrupts ---------------------------------------------------------------------------------
@pytest.mark.parametrize("source", INTERRUPTS)
def test_interrupt(source):
    """One interrupt source: its event sets INT_STATUS (also while disabled), irq only while
    enabled, INT_RAW is the current condition, writing 1 clears the bit and writing 1 to the
    other bits does not; TVC_ERRORS counts the rejected record."""
    bit = RM["INT_STATUS"].field(source).mask

    async def body(sim, ctx):
        sim.task_done = True
        await sim.write_reg(ctx, "TVC_CTRL", sim.word("TVC_CTRL", max_len=8))
        await trigger(sim, ctx, source)
        assert await sim.read_reg(ctx, "INT_STATUS") & bit
        assert await sim.read_reg(ctx, "INT_RAW") & bit
        assert ctx.get(sim.dut.irq) == 0                        # disabled
        await sim.write_reg(ctx, "INT_ENABLE", ALL_ONES & ~bit)
        await sim.write_reg(ctx, "INT_STATUS", ALL_ONES & ~bit)   # clears the others only
        assert await sim.read_reg(ctx, "INT_STATUS") == bit
        assert ctx.get(sim.dut.irq) == 0
        await sim.write_reg(ctx, "INT_ENABLE", bit)
        await sim.cycles(ctx, 1)
        assert ctx.get(sim.dut.irq) == 1
        await sim.write_reg(ctx, "INT_STATUS", bit)
        await sim.cycles(ctx, 1)
        assert await sim.read_reg(ctx, "INT_STATUS") & bit == 0
        assert ctx.get(sim.dut.irq) == 0
        assert await sim.read_reg(ctx, "INT_RAW") & bit    # the condition is still there
        if source == "tvc_error":
            assert await sim.read_reg(ctx, "TVC_ERRORS") == 1
        await untrigger(sim, ctx, source)
        assert await sim.read_reg(ctx, "INT_RAW") & bit == 0
        assert await sim.read_reg(ctx, "INT_STATUS") & bit == 0   # no event on the fall
        assert ctx.get(sim.dut.irq) == 0
    run(body)


def test_int_count():
    """INT_COUNT counts the cycles with an event of an *enabled* source (documented): events
    of disabled sources still set INT_STATUS but do not count; an event counts whether or not
    its status bit is already set; CTRL.clear_counters zeroes it."""
    mask = {n: RM["INT_STATUS"].field(n).mask for n in INTERRUPTS}

    async def body(sim, ctx):
        sim.task_done = sim.draft_ready = True
        sim.tvc_inputs(ctx, *INSERT_INPUTS)
        await sim.write_reg(ctx, "TVC_CTRL", sim.word("TVC_CTRL", max_len=8))
        await sim.write_reg(ctx, "EDC_CTRL", EDC_MODES["never"])
        await sim.write_reg(ctx, "INT_ENABLE", mask["edc_stop"])
        for _ in range(5):      # each: an edc_stop event (enabled), a tvc_insert (disabled)
            await sim.draft(ctx, 100)
            await sim.settle(ctx)
        assert await sim.read_reg(ctx, "INT_COUNT") == 5
        assert await sim.read_reg(ctx, "INT_STATUS") == mask["edc_stop"] | mask["tvc_insert"]
        await sim.write_reg(ctx, "INT_ENABLE", 0)
        await sim.write_reg(ctx, "INT_STATUS", ALL_ONES)
        for _ in range(3):
            await sim.draft(ctx, 100)
            await sim.settle(ctx)
        assert await sim.read_reg(ctx, "INT_COUNT") == 5
        assert await sim.read_reg(ctx, "INT_STATUS") == mask["edc_stop"] | mask["tvc_insert"]
        assert ctx.get(sim.dut.irq) == 0
        await sim.write_reg(ctx, "INT_ENABLE", mask["tvc_insert"])
        for _ in range(2):
            await sim.draft(ctx, 100)
            await sim.settle(ctx)
        assert await sim.read_reg(ctx, "INT_COUNT") == 7
        await sim.write_reg(ctx, "CTRL", sim.word("CTRL", enable=1, clear_counters=1))
        assert await sim.read_reg(ctx, "INT_COUNT") == 0
        assert await sim.read_reg(ctx, "INT_STATUS") != 0     # the status is not a counter
    run(body)
