"""AXI4-Lite register file whose decoder is generated at elaboration from the register map.

The register map (:func:`ahasd.hw.regmap.load`, compiled from ``hw/regs.rdl``) is the only
description of the registers: this module walks it and builds the storage, the write decode and
the read multiplexer, so the RTL cannot drift from the C header or the documentation.
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.axil import AXILiteSignature
from ahasd.hw.construction import rejecting_construction
from ahasd.hw.regmap import DATA_WIDTH, load
from ahasd.spec.params import check_int

__all__ = ["CSR", "AXI_PREFIX", "RESP_OKAY", "RESP_SLVERR", "field_ports"]

#: Name of the AXI4-Lite slave member: ports ``s_axil_awaddr`` ..., as cocotbext-axi's
#: ``AxiLiteBus.from_prefix(dut, "s_axil")`` and vendor IP packagers expect them.
AXI_PREFIX = "s_axil"

RESP_OKAY = 0b00
RESP_SLVERR = 0b10


def field_ports(field):
    """Hardware-side ports of one field, as ``{name: member}`` (directions seen from the CSR).

    ``config`` / ``pulse``: ``<field>`` Out. ``status``: ``<field>`` In. ``intr``: ``<field>_set``
    In (an event pulse) and ``<field>`` Out (the sticky status). ``counter``: ``<field>_incr`` In
    and, with ``hwclr``, ``<field>_clr`` In. ``const`` / ``storage``: none.
    """
    name, width = field.name, field.width
    if field.kind in ("config", "pulse"):
        return {name: Out(width)}
    if field.kind == "status":
        return {name: In(width)}
    if field.kind == "intr":
        return {f"{name}_set": In(width), name: Out(width)}
    if field.kind == "counter":
        ports = {f"{name}_incr": In(1)}
        if field.hwclr:
            ports[f"{name}_clr"] = In(1)
        return ports
    return {}


class CSR(wiring.Component):
    """AXI4-Lite slave register file generated from a :class:`~ahasd.hw.regmap.RegisterMap`.

    Parameters
    ----------
    regmap : RegisterMap, optional
        The registers (default: :func:`ahasd.hw.regmap.load` of ``hw/regs.rdl``).
    addr_width : int
        Byte-address width of the AXI4-Lite port (default 8, a 256-byte window); must hold the
        map. Bits 1..0 of an address are ignored (byte strobes select the bytes).

    Ports
    -----
    s_axil : In(:class:`ahasd.hw.axil.AXILiteSignature`), ports ``s_axil_awaddr`` ...
        AXI4-Lite slave (no ``prot``: all accesses are treated alike).
        One write and one read in flight at a time. AW and W may arrive in either order or
        together; the write is performed once both are held, then B is raised and held until
        ``bready``. A read returns one cycle after its AR handshake and R is held until ``rready``.
        Addresses that hold no register answer ``SLVERR`` (writes there change nothing); writes
        to read-only fields are ignored and answered ``OKAY``. No handshake waits on anything but
        the master's own ``bready`` / ``rready``, so the slave never hangs the bus.
    regs.<register>.<port> : per-field ports (see :func:`field_ports`)
        ``<register>`` is the lower-case register identifier (``draft_q_status``).

    Field behaviour (per :data:`ahasd.hw.regmap.KINDS`): ``config`` / ``storage`` take the
    written bytes; ``pulse`` outputs the written value for one cycle (the cycle after the write)
    and reads 0; ``intr`` is set by ``_set`` and cleared by writing 1, a set winning over a
    same-cycle clear; ``counter`` counts ``_incr`` pulses, saturates, and ``_clr`` wins over
    ``_incr``.
    """

    def __init__(self, *, regmap=None, addr_width=8):
        self.regmap = regmap if regmap is not None else load()
        with rejecting_construction(self):
            check_int("addr_width", addr_width, 3, 32)
            if self.regmap.size > 1 << addr_width:
                raise ValueError(f"addr_width {addr_width} is too narrow for the register map "
                                 f"(it spans 0x{self.regmap.size:X} bytes)")
        self.addr_width = addr_width
        regs = {}
        for reg in self.regmap.registers:
            ports = {}
            for f in reg.fields:
                ports.update(field_ports(f))
            if ports:
                regs[reg.port_name] = Out(wiring.Signature(ports))
        super().__init__({AXI_PREFIX: In(AXILiteSignature(addr_width)),
                          "regs": Out(wiring.Signature(regs))})

    def _axi(self, name):
        return getattr(self.s_axil, name)

    def elaborate(self, platform):
        m = Module()
        ax = self._axi
        word_lsb = (DATA_WIDTH // 8 - 1).bit_length()

        # ---- write channel: hold AW and W until both are there, one write in flight --------
        aw_full = Signal()
        aw_addr = Signal(self.addr_width)
        w_full = Signal()
        w_data = Signal(DATA_WIDTH)
        w_strb = Signal(DATA_WIDTH // 8)
        b_valid = Signal()
        b_resp = Signal(2)
        m.d.comb += [
            ax("awready").eq(~aw_full),
            ax("wready").eq(~w_full),
            ax("bvalid").eq(b_valid),
            ax("bresp").eq(b_resp),
        ]
        with m.If(ax("awvalid") & ~aw_full):
            m.d.sync += [aw_full.eq(1), aw_addr.eq(ax("awaddr"))]
        with m.If(ax("wvalid") & ~w_full):
            m.d.sync += [w_full.eq(1), w_data.eq(ax("wdata")), w_strb.eq(ax("wstrb"))]
        # B is raised only once the previous response has been taken, so at most one is owed.
        do_write = Signal()
        m.d.comb += do_write.eq(aw_full & w_full & ~b_valid)
        with m.If(do_write):
            m.d.sync += [aw_full.eq(0), w_full.eq(0), b_valid.eq(1)]
        with m.If(b_valid & ax("bready")):
            m.d.sync += b_valid.eq(0)
        w_mask = Signal(DATA_WIDTH)
        m.d.comb += w_mask.eq(Cat(*(bit.replicate(8) for bit in w_strb)))
        w_word = aw_addr[word_lsb:]
        write_hit = Signal()

        # ---- read channel: address decoded in the AR cycle, R registered ----------------
        r_valid = Signal()
        r_data = Signal(DATA_WIDTH)
        r_resp = Signal(2)
        m.d.comb += [
            ax("arready").eq(~r_valid),
            ax("rvalid").eq(r_valid),
            ax("rdata").eq(r_data),
            ax("rresp").eq(r_resp),
        ]
        do_read = Signal()
        m.d.comb += do_read.eq(ax("arvalid") & ~r_valid)
        with m.If(r_valid & ax("rready")):
            m.d.sync += r_valid.eq(0)
        r_word = ax("araddr")[word_lsb:]

        # ---- the registers ----------------------------------------------------------------
        read_values = {}
        with m.Switch(w_word):
            for reg in self.regmap.registers:
                with m.Case(reg.address >> word_lsb):
                    m.d.comb += write_hit.eq(1)
        for reg in self.regmap.registers:
            ports = getattr(self.regs, reg.port_name, None)
            selected = Signal(name=f"{reg.port_name}_we")
            m.d.comb += selected.eq(do_write & (w_word == reg.address >> word_lsb))
            parts = []
            for f in reg.fields:
                data = w_data[f.lsb:f.msb + 1]
                mask = w_mask[f.lsb:f.msb + 1]
                value = self._field(m, reg, f, ports, selected, data, mask)
                parts.append((f.lsb, value))
            word = Signal(DATA_WIDTH, name=f"{reg.port_name}_rd")
            for lsb, value in parts:
                m.d.comb += word[lsb:lsb + len(value)].eq(value)
            read_values[reg.address >> word_lsb] = word

        with m.If(do_write):
            m.d.sync += b_resp.eq(Mux(write_hit, RESP_OKAY, RESP_SLVERR))
        with m.If(do_read):
            m.d.sync += r_valid.eq(1)
            with m.Switch(r_word):
                for index, word in read_values.items():
                    with m.Case(index):
                        m.d.sync += [r_data.eq(word), r_resp.eq(RESP_OKAY)]
                with m.Default():
                    m.d.sync += [r_data.eq(0), r_resp.eq(RESP_SLVERR)]
        return m

    def _field(self, m, reg, f, ports, selected, data, mask):
        """Build field ``f``; return the value software reads."""
        name = f"{reg.port_name}_{f.name}"
        if f.kind == "const":
            return Const(f.reset, f.width)
        if f.kind == "status":
            return getattr(ports, f.name)
        if f.kind in ("config", "storage"):
            value = Signal(f.width, init=f.reset, name=name)
            with m.If(selected):
                m.d.sync += value.eq((value & ~mask) | (data & mask))
            if f.kind == "config":
                m.d.comb += getattr(ports, f.name).eq(value)
            return value
        if f.kind == "pulse":
            pulse = Signal(f.width, name=name)
            m.d.sync += pulse.eq(Mux(selected, data & mask, 0))
            m.d.comb += getattr(ports, f.name).eq(pulse)
            return Const(0, f.width)
        if f.kind == "intr":
            value = Signal(f.width, init=f.reset, name=name)
            clear = Mux(selected, data & mask, 0)
            m.d.sync += value.eq((value & ~clear) | getattr(ports, f"{f.name}_set"))
            m.d.comb += getattr(ports, f.name).eq(value)
            return value
        if f.kind == "counter":
            value = Signal(f.width, init=f.reset, name=name)
            with m.If(getattr(ports, f"{f.name}_incr") & (value != (1 << f.width) - 1)):
                m.d.sync += value.eq(value + 1)
            if f.hwclr:
                with m.If(getattr(ports, f"{f.name}_clr")):
                    m.d.sync += value.eq(0)
            return value
        raise AssertionError(f.kind)  # regmap.load admits only the kinds above
