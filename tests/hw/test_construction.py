"""ahasd.hw.construction.rejecting_construction: a component whose constructor rejects its
parameters leaves no UnusedElaboratable warning behind; one that was built and dropped does
(so the check below can see the warning)."""

import gc
import warnings

import pytest
from amaranth.hdl import Fragment, Module, UnusedElaboratable

from ahasd.hw.gemv import GEMV
from ahasd.hw.uart_axil import UARTAXILiteBridge


def unused_warnings(make):
    # Amaranth enables the warning once anything was elaborated in the process.
    Fragment.get(Module(), None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnusedElaboratable)
        make()
        gc.collect()
    return [w for w in caught if issubclass(w.category, UnusedElaboratable)]


def test_a_rejected_component_does_not_warn():
    def rejected(cls, **kwargs):
        def make():
            with pytest.raises(ValueError):
                cls(**kwargs)
        return make
    assert unused_warnings(rejected(UARTAXILiteBridge, divisor=3)) == []
    assert unused_warnings(rejected(GEMV, max_n=0)) == []


def test_a_built_and_dropped_component_warns():
    assert len(unused_warnings(lambda: UARTAXILiteBridge(divisor=4))) == 1


def test_fpga_targets():
    """The FPGA flow's family names and platform objects are FPGAs; no target and the formal
    flow are not."""
    from ahasd.hw.construction import FPGA_TARGETS, on_fpga
    assert FPGA_TARGETS == ("ecp5", "ice40")
    assert [on_fpga(p) for p in (None, "formal", "ecp5", "ice40", "xilinx", object())] == [
        False, False, True, True, False, True]
