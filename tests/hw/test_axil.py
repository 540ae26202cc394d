"""The one AXI4-Lite signature: the AMBA port names every block exports with it, its checks."""

import pytest
from amaranth.hdl import Fragment, Module
from amaranth.lib import wiring

from ahasd.hw.axil import AXILiteSignature, port_name
from ahasd.hw.blocks import port_list
from ahasd.hw.csr import CSR
from ahasd.hw.uart_axil import UARTAXILiteBridge

SIGNALS = ["awaddr", "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bresp",
           "bvalid", "bready", "araddr", "arvalid", "arready", "rdata", "rresp", "rvalid",
           "rready"]
MASTER_DRIVES = {"awaddr", "awvalid", "wdata", "wstrb", "wvalid", "bready", "araddr", "arvalid",
                 "rready"}


def names(component, prefix):
    inputs, outputs = port_list(component)
    return ({n: w for n, w in inputs if n.startswith(prefix)},
            {n: w for n, w in outputs if n.startswith(prefix)})


@pytest.mark.parametrize("make, prefix, slave", [
    (lambda: CSR(addr_width=8), "s_axil", True),
    (lambda: UARTAXILiteBridge(addr_width=8), "m_axil", False),
])
def test_flat_port_names_are_the_amba_ones(make, prefix, slave):
    component = make()
    inputs, outputs = names(component, prefix)
    driven_by_master = {f"{prefix}_{s}" for s in MASTER_DRIVES}
    assert set(inputs) | set(outputs) == {f"{prefix}_{s}" for s in SIGNALS}
    assert set(inputs if slave else outputs) == driven_by_master
    assert inputs.get(f"{prefix}_awaddr", outputs.get(f"{prefix}_awaddr")) == 8
    assert (inputs | outputs)[f"{prefix}_wdata"] == 32
    assert (inputs | outputs)[f"{prefix}_wstrb"] == 4
    # The interface's own signals carry the same names (Verilog of a parent block).
    assert getattr(component, prefix).awaddr.name == f"{prefix}_awaddr"
    Fragment.get(component, None)


def test_port_name_rule():
    sig = wiring.Signature({"s_axil": wiring.In(AXILiteSignature(4)),
                            "x": wiring.Out(wiring.Signature({"y": wiring.Out(1)}))})
    assert port_name(sig, ("s_axil", "rdata")) == "s_axil_rdata"
    assert port_name(sig, ("x", "y")) == "x__y"
    assert port_name(sig, ("x",)) == "x"


def test_master_connects_to_slave():
    mod = Module()
    bridge, csr = UARTAXILiteBridge(addr_width=8), CSR(addr_width=8)
    mod.submodules.bridge, mod.submodules.csr = bridge, csr
    wiring.connect(mod, bridge.m_axil, csr.s_axil)
    Fragment.get(mod, None)
    assert AXILiteSignature(8) == AXILiteSignature(8) != AXILiteSignature(9)


def test_errors():
    with pytest.raises(ValueError, match="addr_width must be an integer in 1..32, not 0"):
        AXILiteSignature(0)
