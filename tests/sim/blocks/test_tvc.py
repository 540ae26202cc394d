"""Golden TVC model (ahasd.sim.blocks.tvc) and its trace format (ahasd.sim.traces.tvc)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ahasd.sim.blocks.tvc import DEFAULT_FREQ_RATIO, TVC, Decision, TVCParams, to_pim
from ahasd.sim.traces.tvc import TraceError, apply, boundary_trace, dump, parse_trace, random_trace, realistic_trace


def test_defaults():
    assert DEFAULT_FREQ_RATIO == 13107
    p = TVCParams()
    assert (p.depth, p.ratio_bits, p.max_preverify_len) == (4, 32, 8)
    # C_npu < 2**40, to_pim(now) + avg(PDCT) >> 8 < 2**35: C_left is a signed 41-bit number.
    assert (p.c_npu_bits, p.c_sub_bits, p.c_left_bits) == (40, 35, 41)


@pytest.mark.parametrize("kwargs, message", [
    ({"depth": 6}, r"depth must be a power of two in 1\.\.64, not 6"),
    ({"depth": 0}, r"depth must be a power of two in 1\.\.64, not 0"),
    ({"ratio_bits": 8}, r"ratio_bits must be an integer in 9\.\.40, not 8"),
    ({"max_preverify_len": 0}, r"max_preverify_len must be an integer in 1\.\.64, not 0"),
    ({"cycles_bits": True}, r"cycles_bits must be an integer in 1\.\.48, not True"),
    ({"length_bits": 33}, r"length_bits must be an integer in 1\.\.32, not 33"),
    ({"counter_bits": 0}, r"counter_bits must be an integer in 1\.\.32, not 0"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TVC(**kwargs)


def test_bad_arguments():
    tvc = TVC()
    with pytest.raises(ValueError, match=r"table must be one of nvct, pdct, pvct, not 'x'"):
        tvc.record("x", 1, 1)
    with pytest.raises(ValueError, match=r"cycles must be an integer in 0\.\.4294967295, not -1"):
        tvc.record("pdct", -1, 1)
    with pytest.raises(ValueError, match=r"ratio must be an integer in 0\.\.4294967295"):
        tvc.preset("pvct", 1 << 32)
    with pytest.raises(ValueError, match=r"freq_ratio must be an integer in 0\.\.65535"):
        tvc.config(65536)
    with pytest.raises(ValueError, match=r"pending must be an integer in 0\.\.65535"):
        tvc.decide(1, 1, 70000)


def test_record_converts_nvct_and_shifts_in():
    tvc = TVC()
    assert tvc.record("nvct", 1000, 3) == ((1000 * 13107 >> 14) * 256) // 3 == 68181
    assert tvc.tables["nvct"] == [68181, 0, 0, 0]
    assert tvc.record("pdct", 1000, 3) == 85333          # PIM cycles: not converted
    tvc.config(1 << 14)                                  # f_PIM = f_NPU
    assert tvc.record("nvct", 1000, 3) == 85333
    assert tvc.tables["nvct"] == [85333, 68181, 0, 0]
    assert tvc.average("nvct") == (85333 + 68181) >> 2


def test_record_saturates_and_counts_zero_length():
    tvc = TVC(counter_bits=2)
    assert tvc.record("pvct", (1 << 32) - 1, 1) == (1 << 32) - 1
    assert tvc.record("pvct", 1 << 24, 1) == (1 << 32) - 1   # exactly 2**32: saturates
    assert tvc.record("pvct", (1 << 24) - 1, 1) == (1 << 32) - 256
    before = [list(t) for t in tvc.tables.values()]
    for expected in (1, 2, 3, 3):
        assert tvc.record("nvct", 5, 0) is None
        assert tvc.error_count == expected               # saturating at 2**2 - 1
    assert [list(t) for t in tvc.tables.values()] == before


def test_decide_by_hand():
    tvc = TVC(presets={"nvct": 400 * 256, "pdct": 3000 * 256, "pvct": 12000 * 256})
    # C_npu = 400 * 100 = 40000; C_left = 40000 - (to_pim(10000) + 3000) = 40000 - 11000.
    assert to_pim(10000, DEFAULT_FREQ_RATIO) == 7999
    assert tvc.c_left(100, 10000) == 40000 - (7999 + 3000)
    assert tvc.decide(100, 10000, 8) == Decision(True, 2)     # 2 * 12000 <= 29001 < 3 * 12000
    assert tvc.decide(100, 10000, 1) == Decision(True, 1)     # min(L, pending)
    assert tvc.decide(100, 10000, 0) == Decision(False, 0)
    assert tvc.decide(100, 40000, 8) == Decision(False, 0)    # C_left < 0
    assert tvc.decide(1000, 0, 100) == Decision(True, 8)      # capped at max_preverify_len
    assert TVC(max_preverify_len=3, presets={"nvct": 400 * 256}).decide(1000, 0, 9).length == 3


def test_decide_boundary_is_inclusive():
    tvc = TVC(presets={"nvct": 256, "pvct": 10 * 256})
    # C_left = kv_len exactly; L * 10 <= C_left.
    assert tvc.decide(30, 0, 9).length == 3
    assert tvc.decide(29, 0, 9).length == 2


def test_preset_overwrites_table():
    tvc = TVC(depth=2)
    tvc.record("pdct", 100, 1)
    tvc.preset("pdct", 7)
    assert tvc.tables["pdct"] == [7, 7]


def test_parse_trace_errors():
    good = ['{"op":"config","freq_ratio":16384}', '',
            '{"op":"preset","table":"nvct","ratio":5}',
            '{"op":"record","table":"pdct","cycles":9,"length":0}',
            '{"op":"decide","kv_len":1,"now":2,"pending":3}']
    assert [item["op"] for item in parse_trace(good)] == ["config", "preset", "record", "decide"]
    cases = [
        ('{"op":"decide"', r"line 1: not JSON"),
        ('[1]', r"line 1: expected a JSON object"),
        ('{"op":"jump"}', r"line 1: op must be one of config, preset, record, decide, not 'jump'"),
        ('{"op":"decide","kv_len":1,"now":2}', r"line 1: decide: missing pending"),
        ('{"op":"config","freq_ratio":1,"x":2}', r"line 1: config: unknown x"),
        ('{"op":"record","table":"npu","cycles":1,"length":1}', r"line 1: table must be one of"),
        ('{"op":"record","table":"nvct","cycles":1.5,"length":1}',
         r"line 1: cycles must be an integer in 0\.\.4294967295, not 1\.5"),
        ('{"op":"decide","kv_len":true,"now":2,"pending":3}', r"line 1: kv_len must be an integer"),
        ('{"op":"preset","table":"nvct","ratio":4294967296}', r"line 1: ratio must be an integer"),
    ]
    for text, message in cases:
        with pytest.raises(TraceError, match=message):
            parse_trace(good[:1] and [text])
    with pytest.raises(TraceError, match=r"^line 4: "):
        parse_trace(good[:3] + ['{"op":"decide","kv_len":-1,"now":2,"pending":3}'])


@pytest.mark.parametrize("generator", [random_trace, realistic_trace])
def test_generated_traces_are_valid_and_varied(generator):
    params = TVCParams(depth=2, ratio_bits=12, max_preverify_len=4)
    ops = generator(2000, seed=3, params=params)
    assert parse_trace(dump(ops).splitlines(), params) == ops
    tvc = TVC(**{"depth": 2, "ratio_bits": 12, "max_preverify_len": 4})
    decisions = [apply(tvc, item) for item in ops]
    lengths = {d.length for d in decisions if d is not None}
    assert lengths == set(range(5))      # every outcome occurs
    assert tvc.error_count > 0


@pytest.mark.parametrize("params", [{}, {"depth": 2, "ratio_bits": 12, "max_preverify_len": 3},
                                    {"ratio_bits": 40, "cycles_bits": 5, "length_bits": 3}],
                         ids=["default", "small", "unreachable"])
def test_generators_reach_the_ratio_saturation_threshold(params):
    """By construction, not by luck: a boundary trace of any length, and a random trace of the
    fast tier's length, hold records whose quotient is 2**ratio_bits exactly and one cycle
    either side (when the widths can reach it at all)."""
    p = TVCParams(**params)

    def offsets(ops):
        return {(op["cycles"] << 8) - (op["length"] << p.ratio_bits) for op in ops
                if op["op"] == "record" and op["length"]}

    reachable = (((1 << p.cycles_bits) - 1) << 8) >= 1 << p.ratio_bits
    for seed in range(3):
        assert ({-256, 0, 256} <= offsets(boundary_trace(1, seed=seed, params=p))) == reachable
        assert (0 in offsets(random_trace(100, seed=seed, params=p))) == reachable
    golden = TVC(**params)
    for op in boundary_trace(1, seed=0, params=p):
        apply(golden, op)     # on the threshold the model saturates: no error, no overflow


ratio = st.integers(0, (1 << 24) - 1)


@settings(max_examples=300, deadline=None)
@given(nvct=ratio, pdct=ratio, pvct=ratio, freq=st.integers(0, 65535),
       kv_len=st.integers(0, 65534), now=st.integers(0, (1 << 32) - 2),
       pending=st.integers(0, 65535))
def test_decide_is_monotone_and_bounded(nvct, pdct, pvct, freq, kv_len, now, pending):
    """More KV tokens to verify never shortens the pre-verification; more NPU progress never
    lengthens it; the length never exceeds pending or max_preverify_len."""
    tvc = TVC(freq_ratio=freq, presets={"nvct": nvct, "pdct": pdct, "pvct": pvct})
    d = tvc.decide(kv_len, now, pending)
    assert d.length <= min(pending, 8) and d.insert == (d.length > 0)
    assert tvc.decide(kv_len + 1, now, pending).length >= d.length
    assert tvc.decide(kv_len, now + 1, pending).length <= d.length
    # The largest L really is the largest: L fits and L + 1 (if allowed) does not.
    free = tvc.decide(kv_len, now, 65535).length
    c_left = tvc.c_left(kv_len, now)
    assert free == 0 or free * tvc.average("pvct") <= c_left * 256
    assert free == 8 or (free + 1) * tvc.average("pvct") > c_left * 256
