"""cocotb + Verilator tier: the TVC RTL against the golden model over >= 100k decisions
interleaved with records, presets and clock-ratio changes (random and realistic traces, random
valid gaps and back-to-back streams), for three parameter sets."""

import pytest

from ahasd.hw.tvc import TVC
from ahasd.tb.cocotb_run import run_cocotb

# name -> (hardware parameters, decisions in the default run). Runs go in steps of 6000 (three
# traces of 2000), so 54k + 42k + 12k = 108k decisions in all; the wide set is the slowest per
# decision (34 divider steps). Its max_preverify_len is 5, not 16: 16 comparators quadruple the
# Verilog and its Verilator build time (test_hw_tvc covers 16 in Amaranth's simulator).
PARAM_SETS = {
    "default": ({}, 50_000),
    "d2_r12_l3": ({"depth": 2, "ratio_bits": 12, "max_preverify_len": 3, "counter_bits": 4},
                  40_000),
    "d16_r32_l5": ({"depth": 16, "ratio_bits": 32, "max_preverify_len": 5, "cycles_bits": 24,
                    "length_bits": 12}, 10_000),
}


@pytest.mark.cocotb
@pytest.mark.parametrize("name", list(PARAM_SETS))
def test_tvc_rtl_matches_golden(name):
    hw, decisions = PARAM_SETS[name]
    run_cocotb(TVC(**hw), "tvc", "cocotb_tvc",
               params={"hw": hw, "seed": 5, "decisions": decisions, "chunk": 2_000})


@pytest.mark.cocotb
@pytest.mark.regress
@pytest.mark.parametrize("name", list(PARAM_SETS))
def test_tvc_rtl_matches_golden_million(name, record_property):
    hw, _ = PARAM_SETS[name]
    run_cocotb(TVC(**hw), "tvc", "cocotb_tvc",
               params={"hw": hw, "seed": 17, "decisions": 1_000_000, "chunk": 10_000})
    record_property("regress_summary", f"TVC {name}: 1,000,000 decisions equal to the golden "
                                       f"model")
