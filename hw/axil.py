"""The AXI4-Lite port: one ``wiring.Signature`` for every block that has one.

:class:`AXILiteSignature` is the bus seen from the master (``Out`` = driven by the master); a
slave takes it as ``In(AXILiteSignature(...))`` (the CSR and the controller as ``s_axil``), a
master as ``Out(...)`` (the UART bridge as ``m_axil``), and blocks are joined with
``wiring.connect``. No ``prot``: every access is treated alike.

Its signals and Verilog ports keep the AMBA names that cocotbext-axi
(``AxiLiteBus.from_prefix(dut, "s_axil")``), the C++ harness, vendor IP packagers and FuseSoC users
expect: ``<member>_<signal>`` (``s_axil_awaddr``), one underscore, where Amaranth would join a
signature path with two. :func:`port_name` is that rule for the flattened port list
(:func:`ahasd.hw.blocks.to_verilog`, :func:`ahasd.hw.blocks.port_list`).
"""

from amaranth.hdl import Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.regmap import DATA_WIDTH
from ahasd.spec.params import check_int

__all__ = ["AXILiteSignature", "port_name"]


class AXILiteSignature(wiring.Signature):
    """AXI4-Lite, master's view: ``awaddr awvalid awready wdata wstrb wvalid wready bresp bvalid
    bready araddr arvalid arready rdata rresp rvalid rready``.

    Parameters
    ----------
    addr_width : int
        Byte-address width (1..32). The data width is the register width,
        :data:`ahasd.hw.regmap.DATA_WIDTH` (32).
    """

    def __init__(self, addr_width):
        check_int("addr_width", addr_width, 1, 32)
        self.addr_width = addr_width
        strb = DATA_WIDTH // 8
        super().__init__({
            "awaddr": Out(addr_width), "awvalid": Out(1), "awready": In(1),
            "wdata": Out(DATA_WIDTH), "wstrb": Out(strb), "wvalid": Out(1), "wready": In(1),
            "bresp": In(2), "bvalid": In(1), "bready": Out(1),
            "araddr": Out(addr_width), "arvalid": Out(1), "arready": In(1),
            "rdata": In(DATA_WIDTH), "rresp": In(2), "rvalid": In(1), "rready": Out(1),
        })

    def __eq__(self, other):
        return isinstance(other, AXILiteSignature) and other.addr_width == self.addr_width

    def __hash__(self):
        return hash((AXILiteSignature, self.addr_width))

    def __repr__(self):
        return f"AXILiteSignature({self.addr_width})"

    def create(self, *, path=None, src_loc_at=0):
        """The interface, its signals named ``<path>_<signal>`` (``s_axil_awaddr``)."""
        iface = wiring.PureInterface(self, path=path, src_loc_at=1 + src_loc_at)
        prefix = "__".join(str(part) for part in path) if path else "axil"
        for name, member in self.members.items():
            setattr(iface, name, Signal(member.shape, name=f"{prefix}_{name}",
                                        init=member.init, src_loc_at=1 + src_loc_at))
        return iface


def _unflipped(signature):
    return signature.flip() if isinstance(signature, wiring.FlippedSignature) else signature


def port_name(signature, path):
    """The flat (Verilog) name of the port at ``path`` of a component with ``signature``: the
    path joined with ``__`` (Amaranth's convention), but with ``_`` inside an AXI4-Lite member
    (``("s_axil", "awaddr")`` -> ``s_axil_awaddr``)."""
    name = str(path[0])
    for prev, part in zip(path, path[1:]):
        signature = signature.members[prev].signature
        joint = "_" if isinstance(_unflipped(signature), AXILiteSignature) else "__"
        name += joint + str(part)
    return name
