"""cocotb + Verilator tier: the entropy unit RTL against its golden mirror on V = 32000 streams
(flat, peaked, random) and short streams with output backpressure."""

import pytest

from ahasd.hw.entropy import EntropyUnit
from ahasd.tb.cocotb_run import run_cocotb


@pytest.mark.cocotb
@pytest.mark.slow
def test_entropy_rtl_matches_golden_32k():
    run_cocotb(EntropyUnit(), "entropy", "cocotb_entropy",
               params={"seed": 3, "vocab": 32000, "short": 20})
