"""ahasd.hw.csr.CSR: parameter checks, lint, and the cocotb register tests (tests/hw/cocotb_csr.py)."""

import pytest
from amaranth.hdl import Fragment

from ahasd.hw.csr import CSR
from ahasd.hw.regmap import load


def test_addr_width_is_validated():
    with pytest.raises(ValueError, match=r"addr_width must be an integer in 3\.\.32, not 2"):
        CSR(addr_width=2)
    with pytest.raises(ValueError, match=r"addr_width must be an integer in 3\.\.32, not '8'"):
        CSR(addr_width="8")
    with pytest.raises(ValueError, match=r"addr_width 7 is too narrow for the register map "
                                         r"\(it spans 0x100 bytes\)"):
        CSR(addr_width=7)


def test_ports_follow_the_register_map():
    csr = CSR()
    regmap = load()
    assert len(csr.regs.ctrl.soft_reset) == 1
    assert len(csr.regs.tvc_freq_ratio.ratio) == 16
    assert hasattr(csr.regs.int_status, "edc_stop_set")
    assert hasattr(csr.regs.int_count, "count_clr")
    assert len(csr.regs.draft_q_pushes.count) == 32
    assert not hasattr(csr.regs, "id")       # constants have no port
    assert len(csr.s_axil.awaddr) == 8
    assert {r.port_name for r in regmap.registers} >= set(csr.regs.signature.members)
    Fragment.get(csr, None)   # elaborates (and marks the component as used)


def test_lint_clean(tmp_path):
    from ahasd.commands.verilog import write_verilog
    write_verilog("csr", tmp_path)


@pytest.mark.cocotb
@pytest.mark.slow
def test_csr_cocotb():
    from ahasd.tb.cocotb_run import run_cocotb
    # A 1 KiB window: unmapped holes inside the map and above it.
    run_cocotb(CSR(addr_width=10), "csr", "cocotb_csr",
               params={"addr_width": 10, "seed": 2026, "transactions": 10000})
