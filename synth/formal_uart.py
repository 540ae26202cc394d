"""Formal proofs of the UART to AXI4-Lite bridge (:mod:`ahasd.hw.uart_axil`), block ``uart``.

The bridge is proved at ``divisor`` :data:`DIVISOR` (4 cycles a bit: a frame is 40 cycles) in
three cuts, so that no proof needs a whole request of UART frames (7 bytes, 280 cycles):

* **the receiver** (the real bridge, the ``rx`` pin free; its byte stream observed):
  ``rx_stop_bit`` (a byte is delivered only from a frame whose stop bit was sampled high: a
  frame with a low stop bit is dropped), ``rx_frame`` (a delivered byte is the frame's eight
  data bits sampled in their middles, LSB first, after a start bit sampled low, each sample
  exactly ``divisor`` cycles after the previous one). The expectations read a history of the
  pin, not the receiver's counters.
* **the transmitter** (its byte stream in from a free byte stream, the ``tx`` pin observed):
  ``tx_frame`` (every byte started while idle is one frame on the pin: a low start bit, the
  data LSB first, a high stop bit, ``divisor`` cycles each; busy exactly for the frame; the
  line high otherwise), by a bit/sub-bit counter model.
* **the bus side**: the bridge's byte streams cut (received bytes and the transmitter's busy
  are free inputs, the proofs above cover what they stand for) against an AXI4-Lite slave that
  takes AW and W in any order (``awready``, ``wready``, ``arready`` free; B only after both AW
  and W of a write, R only after AR, each held with a stable payload until taken; the
  assumptions of the wrapper). The host sends a request only when the previous one has been
  answered (the protocol: one transaction at a time). ``axi_master_rules`` (AW, W and AR
  valid held until their handshake, address, data and strobes stable meanwhile),
  ``one_request_per_command`` (a write command gives one AW with its address and one W with its
  data and all strobes, a read command one AR, none without: every request is checked against
  a parser of the host's bytes), ``reply_per_response`` (each B gives one reply byte, its
  ``bresp``; each R five, ``rresp`` then the data MSB first; an unknown command one ``0xEE``;
  no reply byte otherwise).

Each property has a broken copy: the bridge's own source with one line changed
(:func:`source_mutant`: the line must be found exactly once, else the fixture fails).
"""

import inspect
import sys
import textwrap

from amaranth import Cat, Const, Mux, Signal
from amaranth.hdl import Assert, Assume

from ahasd.synth import formal

__all__ = ["DIVISOR", "ADDR_WIDTH", "PROPERTIES", "MUTANTS", "source_mutant"]

#: Clock cycles per UART bit proved (the smallest the bridge takes).
DIVISOR = 4
#: AXI address width proved (the request's 16 address bits are cut to it).
ADDR_WIDTH = 4

_P = formal.Property
PROPERTIES = [
    _P("uart", "rx_stop_bit", "bmc", 48, "a byte only from a frame whose stop bit is high",
       mutant_depth=48),
    _P("uart", "rx_frame", "bmc", 48,
       "a byte is the frame's data bits, sampled mid-bit LSB first after a low start bit",
       mutant_depth=48),
    _P("uart", "tx_frame", "bmc", 48,
       "a started byte is one 8N1 frame on tx, busy exactly for it, tx high otherwise",
       mutant_depth=48),
    _P("uart", "axi_master_rules", "prove", 10,
       "AW, W, AR valid held until accepted, payloads stable meanwhile (slave: AW, W any order)",
       mutant_depth=16),
    _P("uart", "one_request_per_command", "bmc", 16,
       "one AW and one W per write command, one AR per read, with the command's address and "
       "data, none without", mutant_depth=16),
    _P("uart", "reply_per_response", "bmc", 16,
       "one reply byte per B (bresp), five per R (rresp, data MSB first), 0xEE per bad "
       "command, none without", mutant_depth=16),
]

#: Property -> (method of the bridge, line as written, line in the broken copy).
_EDITS = {
    "rx_stop_bit": ("_rx", "with m.If(rx):", "with m.If(1):"),
    "rx_frame": ("_rx", "shift.eq(Cat(shift[1:], rx))", "shift.eq(Cat(rx, shift[:-1]))"),
    "tx_frame": ("_tx", "Cat(Const(0, 1), data, Const(1, 1))",
                 "Cat(Const(0, 1), data, Const(0, 1))"),
    "axi_master_rules": ("elaborate", 'with m.If((aw_done | a("awready")) & (w_done | a("wready"))):',
                         'with m.If(aw_done | a("awready")):'),
    "one_request_per_command": ("elaborate", "m.d.sync += count.eq(6)",
                                "m.d.sync += count.eq(5)"),
    "reply_per_response": ("elaborate", 'Cat(a("rdata"), a("rresp"), Const(0, 6))',
                           'Cat(a("rresp"), Const(0, 6), a("rdata"))'),
}

MUTANTS = {
    "rx_stop_bit": "the stop bit not checked (a frame with a low stop bit accepted)",
    "rx_frame": "received bits shifted in MSB first",
    "tx_frame": "the frame's stop bit sent low",
    "axi_master_rules": "a write reaches the response phase after AW, before its W handshake",
    "one_request_per_command": "a write command taken with 5 argument bytes, not 6",
    "reply_per_response": "the read reply sends the data before rresp",
}


def source_mutant(base, origin, method, old, new):
    """``base`` with ``method`` replaced by ``origin.method``'s source with ``old`` changed to
    ``new``; ``old`` must occur exactly once (a fixture that no longer locates fails)."""
    source = textwrap.dedent(inspect.getsource(getattr(origin, method)))
    if source.count(old) != 1:
        raise formal.FormalError(f"mutant of {origin.__name__}.{method} does not locate: "
                                 f"{old!r} found {source.count(old)} times")
    namespace = dict(vars(sys.modules[origin.__module__]))
    exec(compile(source.replace(old, new), f"<mutant of {origin.__name__}.{method}>", "exec"),
         namespace)
    return type(f"{base.__name__}Mutant", (base,), {method: namespace[method]})


def _bridge_class(cut_rx, cut_tx, base):
    """``base`` (the bridge or its broken copy) with its receiver's and transmitter's byte
    streams observable (``obs_*``) and, where cut, replaced by free inputs (``cut_*``, driven
    by the wrapper)."""
    class Bridge(base):
        def __init__(self, **params):
            super().__init__(**params)
            self.obs_byte, self.obs_got = Signal(8, name="obs_byte"), Signal(name="obs_got")
            self.obs_tx_data = Signal(8, name="obs_tx_data")
            self.obs_tx_start, self.obs_tx_busy = Signal(name="obs_tx_start"), \
                Signal(name="obs_tx_busy")
            self.cut_byte, self.cut_got = Signal(8, name="cut_byte"), Signal(name="cut_got")
            self.cut_data, self.cut_start = Signal(8, name="cut_data"), Signal(name="cut_start")
            self.cut_busy = Signal(name="cut_busy")

        def _rx(self, m):
            byte, got = (self.cut_byte, self.cut_got) if cut_rx else super()._rx(m)
            m.d.comb += [self.obs_byte.eq(byte), self.obs_got.eq(got)]
            return byte, got

        def _tx(self, m):
            if cut_tx:
                # The bridge drives data and start; busy is the wrapper's free input.
                return self.obs_tx_data, self.obs_tx_start, self.cut_busy
            data, start, busy = super()._tx(m)
            # Cut on the bridge side: the transmitter takes a free byte stream.
            m.d.comb += [data.eq(self.cut_data), start.eq(self.cut_start),
                         self.obs_tx_data.eq(self.cut_data), self.obs_tx_start.eq(self.cut_start),
                         self.obs_tx_busy.eq(busy)]
            return Signal(8, name="unused_data"), Signal(name="unused_start"), busy
    return Bridge


#: Property -> (received bytes cut, transmitter cut).
_CUTS = {"rx_stop_bit": (False, True), "rx_frame": (False, True), "tx_frame": (True, False)}


def _dut(selected, mutant):
    cuts = {_CUTS.get(name, (True, True)) for name in selected}
    if len(cuts) != 1:
        raise ValueError(f"uart properties of different cuts: {sorted(selected)}")
    from ahasd.hw.uart_axil import UARTAXILiteBridge
    base = UARTAXILiteBridge
    if mutant is not None:
        method, old, new = _EDITS[mutant]
        base = source_mutant(base, base, method, old, new)
    return _bridge_class(*cuts.pop(), base)(divisor=DIVISOR, addr_width=ADDR_WIDTH)


def _receiver(m, dut, free):
    """``rx_stop_bit`` and ``rx_frame`` from a history of the pin: a byte delivered in cycle t
    had its stop bit sampled from the pin at t - 3 (two synchroniser flops and the delivery
    register), data bit i at t - 3 - (8 - i) * divisor, the start bit at t - 3 - 9 * divisor."""
    d = DIVISOR
    history = Signal(3 + 9 * d, init=(1 << (3 + 9 * d)) - 1, name="m_rx_history")
    m.d.sync += history.eq(Cat(free["rx"], history[:-1]))      # history[j]: the pin j+1 ago
    at = lambda k: history[2 + k * d]                        # noqa: E731 (k bits before stop)
    data = Cat(*(at(8 - i) for i in range(8)))
    return {"rx_stop_bit": ~dut.obs_got | at(0),
            "rx_frame": ~dut.obs_got | (~at(9) & (dut.obs_byte == data))}


def _transmitter(m, dut, free):
    """``tx_frame`` by a model counting bits (0 start, 1..8 data, 9 stop) and sub-bit cycles."""
    d = DIVISOR
    active = Signal(name="m_tx_active")
    bit = Signal(range(10), name="m_tx_bit")
    sub = Signal(range(d), name="m_tx_sub")
    data = Signal(8, name="m_tx_data")
    with m.If(active):
        with m.If(sub != d - 1):
            m.d.sync += sub.eq(sub + 1)
        with m.Elif(bit != 9):
            m.d.sync += [sub.eq(0), bit.eq(bit + 1)]
        with m.Else():
            m.d.sync += active.eq(0)
    with m.Elif(dut.obs_tx_start):
        m.d.sync += [active.eq(1), bit.eq(0), sub.eq(0), data.eq(dut.obs_tx_data)]
    frame = Cat(Const(0, 1), data, Const(1, 1))
    expected = frame.bit_select(bit, 1)
    return {"tx_frame": (dut.obs_tx_busy == active) & (dut.tx == Mux(active, expected, 1))}


def _slave(m, ax):
    """Assumptions: an AXI4-Lite slave that takes AW and W in any order. Returns the handshakes."""
    hs = {c: ax[f"{c}valid"] & ax[f"{c}ready"] for c in ("aw", "w", "b", "ar", "r")}
    aw_n, w_n, ar_n = (Signal(2, name=f"s_{c}_owed") for c in ("aw", "w", "ar"))
    m.d.sync += [aw_n.eq(aw_n + hs["aw"] - hs["b"]), w_n.eq(w_n + hs["w"] - hs["b"]),
                 ar_n.eq(ar_n + hs["ar"] - hs["r"])]
    m.d.comb += [Assume(~ax["bvalid"] | ((aw_n != 0) & (w_n != 0))),
                 Assume(~ax["rvalid"] | (ar_n != 0))]
    for c, payload in (("b", ax["bresp"]), ("r", Cat(ax["rdata"], ax["rresp"]))):
        waiting = formal._past(m, ax[f"{c}valid"] & ~ax[f"{c}ready"], f"s_{c}_wait")
        before = formal._past(m, payload, f"s_{c}_payload")
        m.d.comb += Assume(~waiting | (ax[f"{c}valid"] & (payload == before)))
    return hs


def _host(m, dut, free, hs):
    """The host's side: a parser of the bytes it sends (the requests they must give) and the
    reply bytes owed; assumes a new request only after the previous one is answered."""
    from ahasd.hw.uart_axil import CMD_READ, CMD_WRITE, REPLY_BAD_COMMAND
    got, byte = free["cut_got"], free["cut_byte"]
    cmd = Signal(8, name="h_cmd")
    left = Signal(range(7), name="h_left")           # argument bytes still to come
    args = Signal(48, name="h_args")
    in_args = Signal(name="h_in_args")
    pending = Signal(name="h_pending")               # sent, answer not complete
    quiet = Signal(2, init=3, name="h_quiet")        # cycles since the last reply byte started
    owed = {c: Signal(name=f"h_owed_{c}") for c in ("aw", "w", "ar")}
    addr = Signal(16, name="h_addr")
    data = Signal(32, name="h_data")
    replies = [Signal(8, name=f"h_reply_{i}") for i in range(5)]
    replies_left = Signal(range(6), name="h_replies_left")
    m.d.comb += Assume(~got | (~pending & (quiet == 3)))
    with m.If(quiet != 3):
        m.d.sync += quiet.eq(quiet + 1)
    with m.If(got & ~in_args):
        m.d.sync += cmd.eq(byte)
        with m.If((byte == CMD_WRITE) | (byte == CMD_READ)):
            m.d.sync += [in_args.eq(1), left.eq(Mux(byte == CMD_WRITE, 6, 2))]
        with m.Else():
            m.d.sync += [pending.eq(1), replies[0].eq(REPLY_BAD_COMMAND), replies_left.eq(1)]
    with m.If(got & in_args):
        m.d.sync += [args.eq(Cat(byte, args[:-8])), left.eq(left - 1)]
        with m.If(left == 1):
            full = Cat(byte, args[:40])                # the last 6 (or 2) bytes, last lowest
            m.d.sync += [in_args.eq(0), pending.eq(1)]
            with m.If(cmd == CMD_WRITE):
                m.d.sync += [addr.eq(full[32:48]), data.eq(full[:32]), owed["aw"].eq(1),
                             owed["w"].eq(1)]
            with m.Else():
                m.d.sync += [addr.eq(full[:16]), owed["ar"].eq(1)]
    for c in owed:
        with m.If(hs[c]):
            m.d.sync += owed[c].eq(0)
    ax = {n: getattr(dut.m_axil, n) for n in ("bresp", "rresp", "rdata")}
    with m.If(hs["b"]):
        m.d.sync += [replies[0].eq(ax["bresp"]), replies_left.eq(1)]
    with m.If(hs["r"]):
        m.d.sync += [replies[0].eq(ax["rresp"])] + [
            replies[1 + i].eq(ax["rdata"][24 - 8 * i:32 - 8 * i]) for i in range(4)]
        m.d.sync += replies_left.eq(5)
    start = dut.obs_tx_start & ~free["cut_busy"]
    with m.If(start):
        m.d.sync += [replies[i].eq(replies[i + 1]) for i in range(4)]
        m.d.sync += [replies_left.eq(replies_left - 1), quiet.eq(0)]
        with m.If(replies_left == 1):
            m.d.sync += pending.eq(0)
    return owed, addr, data, replies[0], replies_left, start


def _bus(m, dut, free):
    """``axi_master_rules``, ``one_request_per_command``, ``reply_per_response``."""
    ax = {n: getattr(dut.m_axil, n) for n in (
        "awaddr", "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bresp", "bvalid",
        "bready", "araddr", "arvalid", "arready", "rdata", "rresp", "rvalid", "rready")}
    hs = _slave(m, ax)
    owed, addr, data, reply, replies_left, start = _host(m, dut, free, hs)
    rules = Const(1)
    for c, payload in (("aw", ax["awaddr"]), ("w", Cat(ax["wdata"], ax["wstrb"])),
                       ("ar", ax["araddr"])):
        waiting = formal._past(m, ax[f"{c}valid"] & ~ax[f"{c}ready"], f"p_{c}_wait")
        before = formal._past(m, payload, f"p_{c}_payload")
        rules &= ~waiting | (ax[f"{c}valid"] & (payload == before))
    requests = ((~ax["awvalid"] | (owed["aw"] & (ax["awaddr"] == addr[:ADDR_WIDTH]))) &
                (~ax["wvalid"] | (owed["w"] & (ax["wdata"] == data) & (ax["wstrb"] == 0xF))) &
                (~ax["arvalid"] | (owed["ar"] & (ax["araddr"] == addr[:ADDR_WIDTH]))))
    replies = ~start | ((replies_left != 0) & (dut.obs_tx_data == reply))
    return {"axi_master_rules": rules, "one_request_per_command": requests,
            "reply_per_response": replies}


def _build(selected, mutant):
    dut = _dut(selected, mutant)

    def build(m, dut, free, selected):
        formal._Ports(m, dut, free)                   # the bridge's inputs: free
        for name in ("cut_byte", "cut_got", "cut_busy", "cut_data", "cut_start"):
            m.d.comb += getattr(dut, name).eq(free[name])
        names = set(selected)
        checks = {}
        if names & {"rx_stop_bit", "rx_frame"}:
            checks.update(_receiver(m, dut, free))
        if "tx_frame" in names:
            checks.update(_transmitter(m, dut, free))
        if names - {"rx_stop_bit", "rx_frame", "tx_frame"}:
            checks.update(_bus(m, dut, free))
        for name in selected:
            m.d.comb += Assert(checks[name], name)
    widths = {"cut_byte": 8, "cut_got": 1, "cut_busy": 1, "cut_data": 8, "cut_start": 1}
    return formal._Harness("uart", selected, dut, build, extra=widths)


formal.register("uart", PROPERTIES, MUTANTS, _build)
