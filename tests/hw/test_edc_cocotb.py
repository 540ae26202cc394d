"""cocotb + Verilator tier: the EDC RTL against the golden model over >= 100k random events plus
traces with long accept and reject runs, for three parameter sets."""

import pytest

from ahasd.hw.edc import EDC
from ahasd.tb.cocotb_run import run_cocotb

PARAM_SETS = {
    "default": {},
    "d4_pht256": {"history_depth": 4, "bucket_bits": 3, "llr_bits": 2, "fifo_depth_log2": 2,
                  "h_max_nats": 8.0},
    "d16_pht1k": {"history_depth": 16, "bucket_bits": 3, "llr_bits": 4, "counter_bits": 3,
                  "counter_reset": 3, "fifo_depth_log2": 4},
}


@pytest.mark.cocotb
@pytest.mark.parametrize("name", list(PARAM_SETS))
def test_edc_rtl_matches_golden(name):
    hw = PARAM_SETS[name]
    run_cocotb(EDC(**hw), "edc", "cocotb_edc",
               params={"hw": hw, "seed": 7, "random_cycles": 110_000, "trace_cycles": 20_000,
                       "min_random_events": 100_000})


@pytest.mark.cocotb
@pytest.mark.regress
@pytest.mark.parametrize("name", list(PARAM_SETS))
def test_edc_rtl_matches_golden_million(name, record_property):
    hw = PARAM_SETS[name]
    run_cocotb(EDC(**hw), "edc", "cocotb_edc",
               params={"hw": hw, "seed": 11, "random_cycles": 1_050_000,
                       "trace_cycles": 200_000, "min_random_events": 1_000_000})
    record_property("regress_summary", f"EDC {name}: >= 1,000,000 random events over "
                                       f"1,050,000 cycles + 200,000 trace cycles, equal to "
                                       f"the golden model")
