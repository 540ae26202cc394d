"""Event counters read from another clock domain, clearable from the reading side."""

from amaranth import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import on_fpga, rejecting_construction
from ahasd.hw.prefix import gray_difference, split_increment
from ahasd.spec.params import COUNTER_BITS, check_bool, check_domain, check_int

__all__ = ["EventCounter"]


class EventCounter(wiring.Component):
    """Count one-cycle events of ``domain``; read and clear the count in ``read_domain``.

    The counter itself runs in the event's domain, so no event is lost however fast that clock
    is. When the domains differ its value crosses as a Gray code (registered, then a two-flop
    synchroniser): it changes by at most one bit per event-domain cycle, so the reader sees
    either the old or the new value, never a mix. A clear does not reach back into the event
    domain: the reader stores the value behind the count it shows as an offset and reports the
    difference (registered), so the count restarts from 0 without a handshake.

    Parameters (keyword-only)
    -------------------------
    width : int
        Counter bits (wraps); default :data:`ahasd.spec.params.COUNTER_BITS` (32).
    domain, read_domain : str
        Domain of ``event`` and of ``clear`` / ``count`` (default both ``"sync"``).
    carry_select : bool or None
        With a domain crossing, how the count's subtraction is built (``gray_difference``):
        ``True`` the halves side by side and a carry select (for 800 MHz at 28 nm), ``False``
        one subtraction (on an FPGA, one carry chain into the count's register, in the same
        slices). ``None`` (default): by the target the block is elaborated for, ``False`` for
        an FPGA (:func:`ahasd.hw.construction.on_fpga`), else ``True``. The count is the same
        in every cycle either way.
    late_event : bool
        Within one domain only (default False): the event is registered before it counts, so
        that a late event (a decision behind a table lookup) drives one flip-flop instead of the
        counter's enables. ``count`` is then the stored count or the stored ``count + 1``,
        selected by the registered event (a multiplexer after registers, not a register), and
        reads exactly as without it.

    Ports
    -----
    event : In(1), ``domain``
        One count per cycle it is high.
    clear : In(1), ``read_domain``
        The count reads 0 from the next cycle (events not yet seen by the reader still count).
    count : Out(width), ``read_domain``
        Events since reset or the last clear (wraps), a register. Within one domain it shows an
        event from the next cycle; with a domain crossing it lags the events by the Gray
        register, the synchroniser and its own register (three or four read-domain cycles).
    """

    def __init__(self, *, width=COUNTER_BITS, domain="sync", read_domain="sync",
                 late_event=False, carry_select=None):
        with rejecting_construction(self):
            check_int("width", width, 1, 64)
            check_domain("domain", domain)
            check_domain("read_domain", read_domain)
            check_bool("late_event", late_event)
            if carry_select is not None:
                check_bool("carry_select", carry_select)
            if late_event and domain != read_domain:
                raise ValueError(f"late_event needs domain == read_domain, not {domain!r} and "
                                 f"{read_domain!r}")
        self.late_event = late_event
        self.carry_select = carry_select
        self.width = width
        self.domain = domain
        self.read_domain = read_domain
        super().__init__({"event": In(1), "clear": In(1), "count": Out(width)})

    def elaborate(self, platform):
        m = Module()
        w = self.width
        if self.late_event:
            # `stored` and `stored + 1` are registers; the event of the last cycle (`pending`)
            # selects between them and is added to them one cycle late. A clear drops it.
            stored = Signal(w)
            incremented = Signal(w, init=1)
            pending = Signal()
            # A copy of `pending` for the count's multiplexer (the reader's side, a CSR read
            # multiplexer), kept apart from the one that drives the registers' enables.
            shown = Signal(attrs={"keep": 1})
            d = m.d[self.domain]
            d += [pending.eq(self.event), shown.eq(self.event)]
            m.d.comb += self.count.eq(Mux(shown, incremented, stored))
            with m.If(self.clear):
                d += [stored.eq(0), incremented.eq(1)]
            with m.Elif(pending):
                d += [stored.eq(incremented), incremented.eq(split_increment(m, incremented))]
            return m
        if self.domain == self.read_domain:
            # The count itself, and `count + 1` ready before the event arrives: the event (a
            # late FIFO handshake) only selects, no carry chain follows it. A clear keeps this
            # cycle's event (the count reads it from the next cycle).
            incremented = Signal(w, init=1)
            with m.If(self.clear):
                m.d[self.domain] += [self.count.eq(self.event),
                                     incremented.eq(Mux(self.event, 2, 1))]
            with m.Elif(self.event):
                m.d[self.domain] += [self.count.eq(incremented),
                                     incremented.eq(split_increment(m, incremented))]
            return m
        # `raw + 1` (and its Gray code) are ready before the event arrives, as above.
        raw = Signal(w)
        incremented = Signal(w, init=1)
        gray = Signal(w)
        with m.If(self.event):
            m.d[self.domain] += [raw.eq(incremented),
                                 incremented.eq(split_increment(m, incremented)),
                                 gray.eq(incremented ^ (incremented >> 1))]
        gray_sync = Signal(w)
        m.submodules.sync = FFSynchronizer(gray, gray_sync, o_domain=self.read_domain, stages=2)
        # The count is a register: Gray to binary and the offset's subtraction end there
        # instead of running on into the reader's logic (a CSR read multiplexer). So the count
        # lags the synchroniser by a cycle. The two share that cycle (`gray_difference`: XOR
        # suffix trees kept through synthesis, the lower half's difference for both parities of
        # the upper half, a carry select; at 28 nm 0.97 ns alone, 1.13 ns in the controller,
        # was 1.80; carry chains on ECP5). `seen_prev` is the value the count on display was
        # computed from: a clear stores it as the offset, and the count reads 0 from the next
        # cycle.
        seen_prev = Signal(w)
        offset = Signal(w)
        r = self.read_domain
        carry_select = self.carry_select
        if carry_select is None:    # by the target: carry chains on an FPGA (module docstring)
            carry_select = not on_fpga(platform)
        difference, seen = gray_difference(m, gray_sync, offset, carry_select=carry_select)
        m.d[r] += seen_prev.eq(seen)
        with m.If(self.clear):
            m.d[r] += [offset.eq(seen_prev), self.count.eq(0)]
        with m.Else():
            m.d[r] += self.count.eq(difference)
        return m
