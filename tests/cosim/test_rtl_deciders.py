"""RTL in the loop: ``ahasd simulate --rtl`` takes the EDC and TVC decisions from the Verilated
controller top (ahasd.cosim.deciders.RtlDeciders), and its results are those of the golden run.

* RtlDeciders against GoldenDeciders call by call on a random event stream (every decision, the
  saturation counts, zero-length and clamped records, repeated TVC decisions per stop);
* the CLI (``ahasd simulate --rtl``): tests/cli/test_simulate_rtl.py.
"""

import random

import pytest

from ahasd.cosim.deciders import RtlDeciders
from ahasd.sim.blocks.tvc import DEFAULT_FREQ_RATIO
from ahasd.sim.system.deciders import GoldenDeciders

PARAMS = {"freq_ratio": DEFAULT_FREQ_RATIO, "tvc_params": {"ratio_bits": 32},
          "prescale_bits": 8}


def events(rng, n):
    """Engine-like calls: drafts and verifications, PDCT/PVCT/NVCT records (some of zero length,
    some past the 32-bit cycle input) and TVC decisions, several between two drafts."""
    for _ in range(n):
        r = rng.random()
        if r < 0.3:
            yield "edc_draft", (rng.choice([rng.uniform(0, 10), rng.uniform(0, 20)]),)
        elif r < 0.5:
            yield "edc_verify", (rng.random() < 0.6,)
        elif r < 0.75:
            table = rng.choice(["nvct", "pdct", "pvct"])
            kv = rng.randrange(100, 3000)
            per = {"nvct": kv * rng.randrange(20_000, 60_000), "pdct": rng.randrange(10**6, 10**7),
                   "pvct": rng.randrange(10**6, 3 * 10**7)}[table]
            length = {"nvct": kv, "pdct": 1, "pvct": rng.randrange(1, 9)}[table]
            if rng.random() < 0.03:
                length = 0                        # a record TVC rejects
            if rng.random() < 0.01:
                per = rng.randrange(1 << 40, 1 << 42)   # past cycles_bits after the prescale
            yield "tvc_record", (table, per, length)
        else:
            kv = rng.randrange(100, 3000)
            yield "tvc_decide", (kv, rng.randrange(0, kv * 60_000), rng.randrange(0, 40))


def test_rtl_deciders_match_golden_call_by_call():
    rng = random.Random(7)
    golden = GoldenDeciders(**PARAMS)
    with RtlDeciders(**PARAMS) as rtl:
        for d in (golden, rtl):
            d.tvc_preset("nvct", 2000 * 40_000, 2000)
            d.tvc_preset("pdct", 4 * 10**6, 1)
            d.tvc_preset("pvct", 8 * 10**6, 1)
        seen = {"edc_draft": set(), "tvc_decide": set()}
        decides = 0
        for n, (op, args) in enumerate(events(rng, 1500)):
            want, got = getattr(golden, op)(*args), getattr(rtl, op)(*args)
            assert got == want, f"call {n}: {op}{args}: RTL {got}, golden {want}"
            if op in seen:
                seen[op].add(want)
            decides += op == "tvc_decide"
        assert rtl.tvc_decisions == decides > 100
    assert seen["edc_draft"] == {True, False}
    assert 0 in seen["tvc_decide"] and len(seen["tvc_decide"]) > 2, seen["tvc_decide"]
    assert (rtl.saturated_records, rtl.saturated_decisions) == \
        (golden.saturated_records, golden.saturated_decisions)
    assert golden.saturated_records > 0 and golden.saturated_decisions > 0


def test_presets_after_records_are_refused():
    with RtlDeciders(**PARAMS) as rtl:
        rtl.tvc_record("pdct", 10**6, 1)
        with pytest.raises(RuntimeError, match="write them before the first record"):
            rtl.tvc_preset("pdct", 10**6, 1)


def test_bad_parameters():
    with pytest.raises(ValueError, match="committed variant only, not 'anchor'"):
        RtlDeciders(edc_variant="anchor", **PARAMS)
    with pytest.raises(ValueError, match="tvc cycles_bits must be 32"):
        RtlDeciders(**{**PARAMS, "tvc_params": {"cycles_bits": 40}})
    with pytest.raises(ValueError, match="max_preverify_len must be in 1..8 for TVC_CTRL.max_len, "
                                         "not 9"):
        RtlDeciders(**{**PARAMS, "tvc_params": {"max_preverify_len": 9}})
