"""The PIM GEMV time model against the Verilated GEMV bank's cycles on one slice (within 5 %)."""

import numpy as np
import pytest

from ahasd.sim.system.config import load_config
from ahasd.sim.system.hardware import gemv_slice_cycles
from ahasd.spec.dram import DRAMConfig


@pytest.mark.cocotb
@pytest.mark.slow
def test_model_matches_verilated_bank():
    from ahasd.bench.gemv import QUICK_CASES, run_verilated
    _, m, n, burst, t_ccd = QUICK_CASES[0]
    base = DRAMConfig(burst_bytes=burst, t_ccd=t_ccd)
    rows = -(-(-(-m // burst) * n) // (base.bursts_per_row * base.n_banks))
    dram = DRAMConfig(burst_bytes=burst, t_ccd=t_ccd, rows=rows)
    rng = np.random.default_rng(3)
    _, cycles, _ = run_verilated(dram, rng.integers(-128, 128, size=(m, n)),
                                 rng.integers(-128, 128, size=n), max_n=n, max_m=m)
    model = gemv_slice_cycles(dram, m, n, load_config().pim.efficiency_raw)
    assert model == pytest.approx(cycles, rel=0.05)
