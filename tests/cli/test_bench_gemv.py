"""``ahasd bench gemv --quick``: runs the Verilated GEMV and reports consistent figures."""

import json

import pytest

from ahasd.cli import main
from ahasd.spec.dram import DRAMConfig


@pytest.mark.slow
def test_bench_gemv_quick_json(capsys):
    assert main(["bench", "gemv", "--quick", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["cases"]
    for case in figures["cases"]:
        assert case["bit_exact"]
        bound = float(DRAMConfig(burst_bytes=case["burst_bytes"], t_ccd=case["t_ccd"]).mac_bound())
        assert case["bound_macs_per_cycle"] == pytest.approx(bound)
        assert case["macs_per_cycle"] == pytest.approx(case["m"] * case["n"] / case["cycles"])
        assert case["efficiency"] == pytest.approx(case["macs_per_cycle"] / bound)
        # The bound is an upper bound of what the RTL can do; > 1 would mean a wrong bound.
        assert 0 < case["efficiency"] <= 1
        assert case["reads"] == -(-case["m"] // case["burst_bytes"]) * case["n"]
    assert figures["min_efficiency"] == min(c["efficiency"] for c in figures["cases"])
