"""TVC RTL (ahasd.hw.tvc) in Amaranth's simulator: against the golden model, and directed cycle
checks of the ordering, backpressure, latency and error rules documented in the class."""

import pytest
from amaranth.hdl import Value

from ahasd.hw.blocks import port_list
from ahasd.hw.tvc import DECISION_LATENCY, TVC
from ahasd.sim.blocks.tvc import TVC as GoldenTVC
from ahasd.sim.blocks.tvc import Decision, TVCParams
from ahasd.sim.traces.tvc import apply, boundary_trace, random_trace, realistic_trace
from ahasd.tb.amaranth_sim import simulate
from ahasd.tb.tvc_driver import drive, pack_decide, pack_record, unpack_result

PARAM_SETS = [
    {},
    {"depth": 2, "ratio_bits": 12, "max_preverify_len": 3},
    {"depth": 16, "ratio_bits": 32, "max_preverify_len": 16, "counter_bits": 3},
    # Entries wider than the dividend (no saturation possible), one entry, one length.
    {"depth": 1, "ratio_bits": 40, "max_preverify_len": 1, "cycles_bits": 5, "length_bits": 3},
]


def ports(dut):
    """Port name -> the Value to set/get in the simulator (views cast to their bits)."""
    def find(name):
        obj = dut
        for part in name.split("__"):
            obj = getattr(obj, part)
        return Value.cast(obj)
    inputs, outputs = port_list(dut)
    return ({name: find(name) for name, _ in inputs}, {name: find(name) for name, _ in outputs})


def run_simulation(dut, testbench):
    simulate(dut, testbench, clocks=1e-8)


def run_driver(ops, params):
    """Run ``ops`` through :func:`drive` on the RTL in Amaranth's simulator."""
    dut = TVC(**params)
    inputs, outputs = ports(dut)
    box = {}

    async def testbench(ctx):
        gen = drive(ops, dut.params)
        values = next(gen)
        try:
            while True:
                for name, value in values.items():
                    ctx.set(inputs[name], value)
                sampled = {name: ctx.get(port) for name, port in outputs.items()}
                await ctx.tick()
                values = gen.send(sampled)
        except StopIteration as stop:
            box["result"] = stop.value

    run_simulation(dut, testbench)
    return box["result"]


@pytest.mark.parametrize("params", PARAM_SETS, ids=["default", "small", "wide", "tiny"])
@pytest.mark.parametrize("generator", [random_trace, realistic_trace, boundary_trace])
def test_matches_golden(generator, params):
    count = 100 if params.get("ratio_bits", 24) > 24 else 250   # slow divider: fewer
    ops = generator(count, seed=len(params) + 11, params=TVCParams(**params))
    golden = GoldenTVC(**params)
    expected = [d for d in (apply(golden, item) for item in ops) if d is not None]
    got = run_driver(ops, params)
    assert got.decisions == expected
    assert set(got.decision_latency) == {DECISION_LATENCY}
    assert got.final["error_count"] == golden.error_count
    for table in ("nvct", "pdct", "pvct"):
        assert got.final[f"average__{table}"] == golden.average(table)


@pytest.mark.parametrize("kwargs, message", [
    ({"depth": 3}, r"depth must be a power of two in 1\.\.64, not 3"),
    ({"ratio_bits": 41}, r"ratio_bits must be an integer in 9\.\.40, not 41"),
    ({"max_preverify_len": 65}, r"max_preverify_len must be an integer in 1\.\.64, not 65"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TVC(**kwargs)


class Cycles:
    """Directed stimulus: hold input values, step one cycle at a time, sample outputs."""

    def __init__(self, ctx, dut):
        self.ctx, self.dut = ctx, dut
        self.inputs, self.outputs = ports(dut)

    async def step(self, **values):
        """Set inputs (others keep their value), sample outputs, then clock once."""
        for name, value in values.items():
            self.ctx.set(self.inputs[name], value)
        sampled = {name: self.ctx.get(port) for name, port in self.outputs.items()}
        await self.ctx.tick()
        return sampled

    def record(self, table, cycles, length):
        return {"record__valid": 1,
                "record__payload": pack_record(self.dut.params, table, cycles, length)}

    def decide(self, kv_len, now, pending):
        return {"decide__valid": 1,
                "decide__payload": pack_decide(self.dut.params, kv_len, now, pending)}

    IDLE = {"record__valid": 0, "decide__valid": 0, "preset__load": 0}

    async def until_idle(self, limit=100):
        for _ in range(limit):
            out = await self.step(**self.IDLE)
            if not out["busy"]:
                return out
        raise AssertionError("still busy")


def directed(test, **params):
    dut = TVC(**params)

    async def testbench(ctx):
        await test(Cycles(ctx, dut))

    run_simulation(dut, testbench)


def test_reset_loads_presets_then_ready():
    async def test(c):
        out = await c.step(preset__nvct=256 * 4, preset__pdct=8, preset__pvct=1 << 23)
        assert out["busy"] and not out["record__ready"] and not out["decide__ready"]
        out = await c.step()
        assert not out["busy"] and out["record__ready"] and out["decide__ready"]
        assert (out["average__nvct"], out["average__pdct"], out["average__pvct"]) == (
            1024, 8, 1 << 23)
    directed(test)


def test_decision_latency_and_throughput():
    async def test(c):
        await c.step(preset__nvct=256 * 100, preset__pvct=256 * 10)
        results = []
        for cycle in range(12):
            args = c.decide(kv_len=cycle, now=0, pending=9) if cycle < 6 else c.IDLE
            out = await c.step(**args)
            if cycle < 6:
                assert out["decide__ready"]          # one decide per cycle
            if out["result__valid"]:
                results.append((cycle, unpack_result(out["result__payload"])))
        # C_left = 100 * kv_len; L * 10 <= C_left: kv_len 0 -> 0, 1 -> 8 (capped).
        assert results == [(cycle + DECISION_LATENCY, Decision(cycle > 0, 8 if cycle else 0))
                           for cycle in range(6)]
    directed(test)


def test_record_backpressure_and_divider_latency():
    async def test(c):
        dut = c.dut
        await c.step(preset__pdct=0)
        out = await c.step(**c.record("pdct", 1000, 3))    # accepted
        assert out["record__ready"]
        waited = 0
        while True:                                         # next record held until ready
            out = await c.step(**c.record("pdct", 2000, 3))
            waited += 1
            if out["record__ready"]:
                break
            assert not out["decide__ready"] and out["busy"]
        assert waited == dut.record_latency == 34
        out = await c.until_idle()
        assert out["average__pdct"] == (85333 + 170666) >> 2   # both shifted in, once each
        # A saturating quotient is found in the first divider cycle.
        out = await c.step(**c.record("pvct", (1 << 32) - 1, 1))
        out = await c.step(**c.IDLE)
        assert out["busy"]
        out = await c.step()
        assert not out["busy"] and out["average__pvct"] == ((1 << 32) - 1) >> 2
    directed(test)


@pytest.mark.parametrize("params", [{}, {"ratio_bits": 12, "depth": 2}], ids=["default", "narrow"])
def test_ratio_saturation_boundary(params):
    """A quotient of exactly ``2**ratio_bits`` saturates (found in the first divider cycle), one
    below it is divided in full; both sides of the threshold, for two lengths."""
    p = TVCParams(**params)
    golden = GoldenTVC(**params)

    async def test(c):
        for length in (1, 3):
            for delta in (-1, 0, 1):
                # numerator = cycles * 256 = length * 2**rb + delta * 256
                cycles = (length << (p.ratio_bits - 8)) + delta
                golden.preset("pdct", 0)
                await c.step(preset__pdct=0, preset__load=0b010)
                ratio = golden.record("pdct", cycles, length)
                saturates = (cycles << 8) >= length << p.ratio_bits
                assert (ratio == p.ratio_max) == (saturates or (cycles << 8) // length
                                                  == p.ratio_max)
                out = await c.step(**c.record("pdct", cycles, length), preset__load=0)
                assert out["record__ready"]
                busy = 0
                while True:
                    out = await c.step(**c.IDLE)
                    if not out["busy"]:
                        break
                    busy += 1
                assert busy == (1 if saturates else c.dut.record_latency - 1), (length, delta)
                assert out["average__pdct"] == golden.average("pdct"), (length, delta)
    directed(test, **params)


def test_same_cycle_decide_then_record():
    async def test(c):
        await c.step(preset__nvct=256, preset__pvct=256)
        # The decide reads the tables before the record of the same cycle changes them.
        await c.step(**c.decide(kv_len=5, now=0, pending=9), **c.record("pvct", 0, 1))
        out = await c.step(**c.IDLE)
        assert out["busy"]
        for _ in range(DECISION_LATENCY - 2):
            await c.step()
        out = await c.step()
        assert out["result__valid"] and unpack_result(out["result__payload"]) == Decision(True, 5)
    directed(test)


def test_preset_after_record_discards_it():
    async def test(c):
        await c.step(preset__pdct=11, preset__pvct=22)
        # Same cycle, same table: the record comes first, the preset overwrites it.
        out = await c.step(**c.record("pdct", 1000, 1), preset__load=0b010)
        assert out["record__ready"]
        out = await c.step(**c.IDLE)
        assert not out["busy"] and out["average__pdct"] == 11
        # Same cycle, other table: the record lands later.
        await c.step(**c.record("pdct", 1000, 1), preset__pvct=33, preset__load=0b100)
        out = await c.until_idle()
        assert out["average__pvct"] == 33 and out["average__pdct"] == (3 * 11 + 256000) >> 2
        # While the divider works on a record, a preset of its table stops it.
        await c.step(**c.record("pdct", 5, 1))
        await c.step(**c.IDLE)
        await c.step(preset__pdct=44, preset__load=0b010)
        out = await c.step(preset__load=0)
        assert not out["busy"] and out["average__pdct"] == 44
    directed(test)


def test_rejected_records_count_and_change_nothing():
    async def test(c):
        await c.step(preset__nvct=7)
        for expected in (1, 2, 3, 3, 3):            # counter_bits=2: saturates at 3
            out = await c.step(**c.record("nvct", 100, 0))
            assert out["record__ready"]
            await c.step(**c.IDLE)
            out = await c.step()
            assert out["error_count"] == expected and not out["busy"]
        await c.step(**{"record__valid": 1,
                        "record__payload": pack_record(c.dut.params, 3, 100, 1)})  # bad table
        out = await c.step(**c.IDLE)
        assert not out["busy"] and out["error_count"] == 3 and out["average__nvct"] == 7
    directed(test, counter_bits=2)


@pytest.mark.parametrize("params", PARAM_SETS[1:], ids=["small", "wide", "tiny"])
def test_other_parameter_sets_are_lint_clean(tmp_path, params):
    from ahasd.hw.blocks import to_verilog
    from ahasd.synth.verilator import lint
    path = tmp_path / "tvc.v"
    path.write_text(to_verilog(TVC(**params), "tvc"))
    lint(path, "tvc")     # raises VerilatorError on any warning beyond the documented waivers


def test_every_cycle_decides_around_table_changes():
    """A decide every cycle while presets and a record change the tables: each decide sees the
    tables of its accept cycle (decide, record, preset within a cycle), the decide of the next
    cycle the change, whatever the registered thresholds behind the comparators."""
    presets = {"nvct": 256 * 100, "pdct": 0, "pvct": 256 * 10}
    golden = GoldenTVC(presets=presets)
    # cycle -> (table, value) of a preset strobed in that cycle
    changes = {3: ("pvct", 256 * 30), 4: ("pdct", 256 * 40), 6: ("nvct", 256 * 90),
               7: ("pvct", 256 * 7), 9: ("pdct", 256 * 3)}
    record_cycle = 11

    async def test(c):
        await c.step(**{f"preset__{t}": v for t, v in presets.items()},
                     freq_ratio=golden.freq_ratio)
        expected, got = [], []
        accepted = []
        for cycle in range(60):
            kv_len, now, pending = 1 + cycle % 3, 5 * cycle, 2 + cycle % 8
            args = {**c.decide(kv_len, now, pending), "preset__load": 0, "record__valid": 0}
            if cycle in changes:
                table, value = changes[cycle]
                args.update({f"preset__{table}": value,
                             "preset__load": 1 << ("nvct", "pdct", "pvct").index(table)})
            if cycle == record_cycle:
                args.update(c.record("pvct", 123_456, 5))
            out = await c.step(**args)
            if out["decide__ready"]:
                accepted.append(cycle)
                expected.append(golden.decide(kv_len, now, pending))
            if cycle == record_cycle:
                assert out["record__ready"]
                golden.record("pvct", 123_456, 5)
            if cycle in changes:
                golden.preset(*changes[cycle])
            if out["result__valid"]:
                got.append((cycle, unpack_result(out["result__payload"])))
        for _ in range(DECISION_LATENCY):
            out = await c.step(**c.IDLE)
        # Decides wait while the divider works, then resume with the new ratio.
        assert accepted[:record_cycle + 1] == list(range(record_cycle + 1))
        assert accepted[record_cycle + 1] == record_cycle + c.dut.record_latency
        assert [cycle for cycle, _ in got] == [a + DECISION_LATENCY for a in accepted
                                               if a + DECISION_LATENCY < 60]
        assert [d for _, d in got] == expected[:len(got)]
        assert len({d.length for d in expected}) >= 4   # the changes change the decisions
    directed(test)


def test_second_record_port_has_priority_and_its_own_products():
    """With ``second_record``, ``record_first`` is taken before a ``record`` offered with it,
    and each port's NVCT records saturate exactly at the boundary (each port has its own
    products and check): to_pim(cycles) = 3 * 2**24 saturates for length 3, one less not."""
    from ahasd.spec.tvc import to_pim
    fr, length, top = 13107 + 4321, 3, (1 << 32) - 1

    def cycles_for(target):   # the smallest cycle count with to_pim(cycles) >= target
        lo, hi = 0, 1 << 32
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if to_pim(mid, fr) < target else (lo, mid)
        return lo

    sat = cycles_for(length << 24)
    below = sat - 1
    assert to_pim(sat, fr) >= length << 24 > to_pim(below, fr)

    def ratio(cycles):
        return min((to_pim(cycles, fr) << 8) // length, top)

    async def test(c):
        p = c.dut.params
        await c.step(preset__nvct=0, freq_ratio=fr, **c.IDLE, record_first__valid=0)
        await c.step()
        entries = [0] * p.depth
        for first_cycles, second_cycles in ((sat, below), (below, sat), (below, below)):
            offered = {"record_first": first_cycles, "record": second_cycles}
            order = []
            while offered:
                args = {f"{port}__valid": 0 for port in ("record", "record_first")}
                for port, cycles in offered.items():
                    args[f"{port}__valid"] = 1
                    args[f"{port}__payload"] = pack_record(p, "nvct", cycles, length)
                out = await c.step(**args)
                for port in list(offered):
                    if out[f"{port}__ready"]:
                        order.append(port)
                        entries = [ratio(offered.pop(port))] + entries[:-1]
                        break
            assert order == ["record_first", "record"]
            out = await c.step(record__valid=0, record_first__valid=0)
            out = await c.until_idle()
            assert out["average__nvct"] == sum(entries) >> p.depth_log2, entries
        assert ratio(sat) == top and ratio(below) < top
    directed(test, second_record=True)


def test_back_to_back_records_and_decides_see_each_write():
    """Records offered without a gap, saturating and divided, of each table and of one table
    several times in a row, with a decide offered in every cycle: in every cycle TVC is not busy
    its averages are the golden model's (also in the first cycle after each write, when the
    average registers take the new value), and every decide, including those accepted in that
    first cycle, decides as the golden model does."""
    top = (1 << 32) - 1
    records = [("nvct", top, 1), ("nvct", 5_000, 3), ("nvct", top, 2), ("pvct", 77_777, 9),
               ("pvct", top, 1), ("pdct", 300_000, 7), ("pdct", top, 1), ("pdct", top, 1),
               ("nvct", 123_456, 5), ("pvct", 9_999, 1), ("pvct", 4_000, 3), ("nvct", top, 1)]
    presets = {"nvct": 256 * 3, "pdct": 256 * 2, "pvct": 256 * 5}
    golden = GoldenTVC(presets=presets)

    async def test(c):
        await c.step(**{f"preset__{t}": v for t, v in presets.items()},
                     freq_ratio=golden.freq_ratio)
        expected, got, pending_records = [], [], list(records)
        cycle = 0
        while pending_records or len(got) < len(expected):
            kv_len, now, pending = 3 + cycle % 5, 7 * cycle, 1 + cycle % 9
            args = dict(c.IDLE)
            if pending_records:
                args.update(c.record(*pending_records[0]), **c.decide(kv_len, now, pending))
            out = await c.step(**args)
            if not out["busy"]:
                assert [out[f"average__{t}"] for t in ("nvct", "pdct", "pvct")] == [
                    golden.average(t) for t in ("nvct", "pdct", "pvct")], cycle
            if args["decide__valid"] and out["decide__ready"]:
                expected.append(golden.decide(kv_len, now, pending))
            if pending_records and out["record__ready"]:
                golden.record(*pending_records.pop(0))
            if out["result__valid"]:
                got.append(unpack_result(out["result__payload"]))
            cycle += 1
            assert cycle < 2000
        assert got == expected
        assert len(set(expected)) >= 4      # the writes change the decisions
    directed(test)


# Parameter corners of the decision pipeline's widths (ahasd.hw.tvc_decisions): a 1-bit
# kv_len with 64 lengths (bounds wider than S's rows), the widest operands, the narrowest
# ratio, and cycle counts just past one and two 8-bit pieces (one and two pieces below
# 2**14 in floor(B / 2**14)), a C_npu one bit wider than the default's, and one as wide as
# floor(B / 2**14) (S's offset as large as C_npu).
WIDTH_CORNERS = [
    {"ratio_bits": 40, "length_bits": 1, "cycles_bits": 1, "max_preverify_len": 64},
    {"ratio_bits": 40, "length_bits": 32, "cycles_bits": 48, "max_preverify_len": 64},
    {"ratio_bits": 9, "length_bits": 32, "cycles_bits": 48, "max_preverify_len": 5},
    {"ratio_bits": 9, "length_bits": 1, "cycles_bits": 9, "max_preverify_len": 1},
    {"ratio_bits": 17, "length_bits": 7, "cycles_bits": 17, "max_preverify_len": 15},
    {"ratio_bits": 33, "length_bits": 16, "cycles_bits": 32, "max_preverify_len": 8},
    {"ratio_bits": 32, "length_bits": 10, "cycles_bits": 32, "max_preverify_len": 8},
]


def extreme_decides(params, count, seed):
    """Presets, clock ratios and decides at the ends of their ranges (0, 1, the maximum, powers
    of two) and between: the widest and the most negative C_left, thresholds above and below
    every product. Each block of ten decides starts with the extreme corners of the decide."""
    import random
    rng = random.Random(seed)
    p = TVCParams(**params)
    top = {"ratio": p.ratio_max, "kv_len": (1 << p.length_bits) - 1,
           "now": (1 << p.cycles_bits) - 1, "freq_ratio": (1 << 16) - 1}
    corners = [(top["kv_len"], 0), (top["kv_len"], top["now"]), (0, top["now"]), (0, 0)]

    def pick(bits):
        top = (1 << bits) - 1
        return rng.choice((0, 1, top, top - 1 if top else 0, 1 << rng.randrange(bits),
                           rng.getrandbits(bits), rng.getrandbits(bits)))

    ops = []
    for i in range(count):
        if i % 10 == 0:
            block = i // 10
            # The first blocks: the largest S with the smallest thresholds, then the reverse.
            fixed = {0: (top["ratio"], 0, 0, 0),
                     1: (top["ratio"], top["ratio"], top["ratio"], top["freq_ratio"]),
                     2: (0, top["ratio"], top["ratio"], top["freq_ratio"])}.get(block)
            values = fixed or (pick(p.ratio_bits), pick(p.ratio_bits), pick(p.ratio_bits),
                               pick(16))
            ops += [{"op": "preset", "table": table, "ratio": value}
                    for table, value in zip(("nvct", "pdct", "pvct"), values)]
            ops.append({"op": "config", "freq_ratio": values[3]})
        kv_len, now = (corners[i % 10] if i % 10 < len(corners)
                       else (pick(p.length_bits), pick(p.cycles_bits)))
        pending = top["kv_len"] if i % 10 < len(corners) else pick(p.length_bits)
        ops.append({"op": "decide", "kv_len": kv_len, "now": now, "pending": pending})
    return ops


@pytest.mark.parametrize("params", WIDTH_CORNERS,
                         ids=["bounds-wider", "widest", "narrow-ratio", "one-length", "odd", "wide-c-npu",
                              "offset-as-large"])
def test_decisions_at_extreme_operands(params):
    """Every decision equals the golden model's with operands at their extremes, for parameter
    sets that set the decision pipeline's row and bound widths differently."""
    ops = extreme_decides(params, 150, seed=len(params) + params["ratio_bits"])
    golden = GoldenTVC(**params)
    expected = [d for d in (apply(golden, item) for item in ops) if d is not None]
    got = run_driver(ops, params)
    assert got.decisions == expected
    assert {d.length for d in expected} != {0}


def test_averages_read_back_while_a_record_divides():
    """While the divider works on a record, each average reads as before the record (the
    record's table's register holds the saturated value meanwhile); after it, the new one; a
    preset during the division stops it and shows at once."""
    async def test(c):
        await c.step(preset__nvct=1000, preset__pdct=2000, preset__pvct=3000)
        before = (1000, 2000, 3000)
        out = await c.step(**c.record("pdct", 5_000, 3))
        assert out["record__ready"]
        cycles = 0
        while True:
            out = await c.step(**c.IDLE)
            if not out["busy"]:
                break
            cycles += 1
            assert (out["average__nvct"], out["average__pdct"], out["average__pvct"]) == before
        assert cycles == c.dut.record_latency - 1
        assert out["average__pdct"] == (3 * 2000 + (5_000 << 8) // 3) >> 2
        await c.step(**c.record("nvct", 7_000, 5))
        for _ in range(5):
            out = await c.step(**c.IDLE)
            assert out["busy"] and out["average__nvct"] == 1000
        out = await c.step(preset__nvct=42, preset__load=0b001)
        assert out["average__nvct"] == 1000
        out = await c.step(preset__load=0)
        assert not out["busy"] and out["average__nvct"] == 42
    directed(test)


@pytest.mark.parametrize("table", ["pdct", "nvct"])
def test_first_quotient_bit_boundary(table):
    """The quotient's first bit is checked beside the saturation (for PDCT in the accept cycle,
    for NVCT from the products): ratios of 2**31 - 1, 2**31 and just above, for two lengths,
    divide as the golden model does (``freq_ratio`` 1.0: an NVCT record's cycles are PIM
    cycles)."""
    p = TVCParams()
    golden = GoldenTVC()
    golden.freq_ratio = 1 << 14

    async def test(c):
        for length in (1, 3):
            for delta in (-1, 0, 1):
                cycles = (length << (p.ratio_bits - 9)) + delta  # cycles * 256 / length ~ 2**31
                golden.preset(table, 0)
                await c.step(**{f"preset__{table}": 0}, freq_ratio=1 << 14,
                             preset__load=1 << ("nvct", "pdct", "pvct").index(table))
                golden.record(table, cycles, length)
                out = await c.step(**c.record(table, cycles, length), preset__load=0)
                assert out["record__ready"]
                out = await c.until_idle()
                assert out[f"average__{table}"] == golden.average(table), (length, delta)
    directed(test)
