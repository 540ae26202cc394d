"""UART to AXI4-Lite master bridge: reach a register bus from two pins (8N1, no flow control).

Protocol (bytes on the wire, multi-byte fields most significant byte first):

=========  ======================================  ==========================================
request    bytes                                   reply
=========  ======================================  ==========================================
write      ``0x57`` ('W'), address (2), data (4)   ``bresp`` (1 byte: 0 OKAY, 2 SLVERR)
read       ``0x52`` ('R'), address (2)             ``rresp`` (1), data (4)
other      any other first byte                    ``0xEE`` (the byte is dropped)
=========  ======================================  ==========================================

A write drives AW and W together with all byte strobes set; the bridge waits for both
handshakes, then for B; a read waits for AR, then R. One transaction at a time. Receive samples
each bit in its middle (``divisor`` clock cycles per bit, the start bit's middle found after
``divisor // 2`` cycles of a low line); a frame whose stop bit is low is dropped.
"""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.axil import AXILiteSignature
from ahasd.hw.construction import rejecting_construction
from ahasd.spec.params import check_int

__all__ = ["UARTAXILiteBridge", "CMD_WRITE", "CMD_READ", "REPLY_BAD_COMMAND"]

CMD_WRITE = 0x57
CMD_READ = 0x52
REPLY_BAD_COMMAND = 0xEE


class UARTAXILiteBridge(wiring.Component):
    """UART (8N1) to AXI4-Lite master.

    Parameters
    ----------
    divisor : int
        Clock cycles per UART bit (clock / baud rate), at least 4.
    addr_width : int
        AXI byte-address width, 1..16 (the request carries 16 address bits; higher bits than
        ``addr_width`` are dropped).

    Ports
    -----
    rx : in
        Serial input (idle high).
    tx : out
        Serial output (idle high).
    m_axil : Out(:class:`ahasd.hw.axil.AXILiteSignature`), ports ``m_axil_awaddr`` ...
        AXI4-Lite master (no ``prot``).
    """

    def __init__(self, *, divisor=104, addr_width=8):
        with rejecting_construction(self):
            check_int("divisor", divisor, 4)
            check_int("addr_width", addr_width, 1, 16)
        self.divisor = divisor
        self.addr_width = addr_width
        super().__init__({"rx": In(1, init=1), "tx": Out(1, init=1),
                          "m_axil": Out(AXILiteSignature(addr_width))})

    def _rx(self, m):
        """Byte receiver: (byte, strobe) with strobe high for one cycle per good frame."""
        rx = Signal(init=1)
        rx_meta = Signal(init=1)
        m.d.sync += [rx_meta.eq(self.rx), rx.eq(rx_meta)]     # two-flop synchroniser
        timer = Signal(range(self.divisor))
        bits = Signal(range(10))
        shift = Signal(8)
        byte = Signal(8)
        strobe = Signal()
        m.d.sync += strobe.eq(0)
        with m.FSM(name="rx"):
            with m.State("IDLE"):
                with m.If(~rx):
                    m.d.sync += [timer.eq(self.divisor // 2 - 1), bits.eq(0)]
                    m.next = "START"
            with m.State("START"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Elif(rx):
                    m.next = "IDLE"                         # a glitch, not a start bit
                with m.Else():
                    m.d.sync += timer.eq(self.divisor - 1)
                    m.next = "BITS"
            with m.State("BITS"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Elif(bits == 8):
                    with m.If(rx):
                        m.d.sync += [byte.eq(shift), strobe.eq(1)]
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += [shift.eq(Cat(shift[1:], rx)), bits.eq(bits + 1),
                                 timer.eq(self.divisor - 1)]
        return byte, strobe

    def _tx(self, m):
        """Byte transmitter: (data, start, busy)."""
        data = Signal(8)
        start = Signal()
        busy = Signal()
        frame = Signal(10, init=0x3FF)
        timer = Signal(range(self.divisor))
        left = Signal(range(11))
        m.d.comb += [self.tx.eq(frame[0]), busy.eq(left != 0)]
        with m.If(left == 0):
            with m.If(start):
                m.d.sync += [frame.eq(Cat(Const(0, 1), data, Const(1, 1))), left.eq(10),
                             timer.eq(self.divisor - 1)]
        with m.Elif(timer != 0):
            m.d.sync += timer.eq(timer - 1)
        with m.Else():
            m.d.sync += [frame.eq(Cat(frame[1:], Const(1, 1))), left.eq(left - 1),
                         timer.eq(self.divisor - 1)]
        return data, start, busy

    def elaborate(self, platform):
        m = Module()
        a = lambda name: getattr(self.m_axil, name)     # noqa: E731
        byte, got = self._rx(m)
        tx_data, tx_start, tx_busy = self._tx(m)
        cmd = Signal(8)
        addr = Signal(16)
        wdata = Signal(32)
        count = Signal(range(7))            # request bytes still to come
        reply = Signal(40)                  # reply bytes, first in the top byte
        reply_left = Signal(range(6))
        aw_done, w_done = Signal(), Signal()
        m.d.comb += [a("awaddr").eq(addr), a("araddr").eq(addr), a("wdata").eq(wdata),
                     a("wstrb").eq(0xF)]
        m.d.comb += tx_data.eq(reply[32:])

        with m.FSM(name="bridge"):
            with m.State("CMD"):
                with m.If(got):
                    m.d.sync += cmd.eq(byte)
                    with m.If(byte == CMD_WRITE):
                        m.d.sync += count.eq(6)
                        m.next = "ARGS"
                    with m.Elif(byte == CMD_READ):
                        m.d.sync += count.eq(2)
                        m.next = "ARGS"
                    with m.Else():
                        m.d.sync += [reply.eq(REPLY_BAD_COMMAND << 32), reply_left.eq(1)]
                        m.next = "REPLY"
            with m.State("ARGS"):
                with m.If(got):
                    # Address then data arrive most significant byte first.
                    with m.If((cmd == CMD_READ) | (count > 4)):
                        m.d.sync += addr.eq(Cat(byte, addr[:8]))
                    with m.Else():
                        m.d.sync += wdata.eq(Cat(byte, wdata[:24]))
                    m.d.sync += count.eq(count - 1)
                    with m.If(count == 1):
                        m.d.sync += [aw_done.eq(0), w_done.eq(0)]
                        with m.If(cmd == CMD_READ):
                            m.next = "READ"
                        with m.Else():
                            m.next = "WRITE"
            with m.State("WRITE"):
                m.d.comb += [a("awvalid").eq(~aw_done), a("wvalid").eq(~w_done)]
                with m.If(a("awready") & ~aw_done):
                    m.d.sync += aw_done.eq(1)
                with m.If(a("wready") & ~w_done):
                    m.d.sync += w_done.eq(1)
                with m.If((aw_done | a("awready")) & (w_done | a("wready"))):
                    m.next = "BRESP"
            with m.State("BRESP"):
                m.d.comb += a("bready").eq(1)
                with m.If(a("bvalid")):
                    m.d.sync += [reply.eq(a("bresp") << 32), reply_left.eq(1)]
                    m.next = "REPLY"
            with m.State("READ"):
                m.d.comb += a("arvalid").eq(1)
                with m.If(a("arready")):
                    m.next = "RDATA"
            with m.State("RDATA"):
                m.d.comb += a("rready").eq(1)
                with m.If(a("rvalid")):
                    m.d.sync += [reply.eq(Cat(a("rdata"), a("rresp"), Const(0, 6))),
                                 reply_left.eq(5)]
                    m.next = "REPLY"
            with m.State("REPLY"):
                with m.If(reply_left == 0):
                    m.next = "CMD"
                with m.Elif(~tx_busy):
                    m.d.comb += tx_start.eq(1)
                    m.d.sync += [reply.eq(reply << 8), reply_left.eq(reply_left - 1)]
        return m
