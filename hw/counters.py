"""Event counters read from another clock domain, clearable from the reading side."""

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.spec.params import COUNTER_BITS, check_domain, check_int

__all__ = ["EventCounter"]


class EventCounter(wiring.Component):
    """Count one-cycle events of ``domain``; read and clear the count in ``read_domain``.

    The counter itself runs in the event's domain, so no event is lost however fast that clock
    is. When the domains differ its value crosses as a Gray code (registered, then a two-flop
    synchroniser): it changes by at most one bit per event-domain cycle, so the reader sees
    either the old or the new value, never a mix. A clear does not reach back into the event
    domain: the reader stores the value it sees as an offset and reports the difference, so the
    count restarts from 0 without a handshake.

    Parameters (keyword-only)
    -------------------------
    width : int
        Counter bits (wraps); default :data:`ahasd.spec.params.COUNTER_BITS` (32).
    domain, read_domain : str
        Domain of ``event`` and of ``clear`` / ``count`` (default both ``"sync"``).

    Ports
    -----
    event : In(1), ``domain``
        One count per cycle it is high.
    clear : In(1), ``read_domain``
        The count reads 0 from the next cycle (events not yet seen by the reader still count).
    count : Out(width), ``read_domain``
        Events since reset or the last clear (wraps). With a domain crossing it lags the events
        by the synchroniser (about three read-domain cycles).
    """

    def __init__(self, *, width=COUNTER_BITS, domain="sync", read_domain="sync"):
        with rejecting_construction(self):
            check_int("width", width, 1, 64)
            check_domain("domain", domain)
            check_domain("read_domain", read_domain)
        self.width = width
        self.domain = domain
        self.read_domain = read_domain
        super().__init__({"event": In(1), "clear": In(1), "count": Out(width)})

    def elaborate(self, platform):
        m = Module()
        w = self.width
        # `raw + 1` (and its Gray code) are ready before the event arrives: the event only
        # selects, so a late event (a FIFO handshake) does not wait for a carry chain.
        raw = Signal(w)
        incremented = Signal(w, init=1)
        with m.If(self.event):
            m.d[self.domain] += [raw.eq(incremented), incremented.eq(incremented + 1)]
        if self.domain == self.read_domain:
            seen = raw
        else:
            gray = Signal(w)
            with m.If(self.event):
                m.d[self.domain] += gray.eq(incremented ^ (incremented >> 1))
            gray_sync = Signal(w)
            m.submodules.sync = FFSynchronizer(gray, gray_sync, o_domain=self.read_domain,
                                               stages=2)
            # Gray to binary: bit i is the XOR of Gray bits i and above.
            bits = [gray_sync[w - 1]]
            for i in reversed(range(w - 1)):
                bits.insert(0, bits[0] ^ gray_sync[i])
            seen = Signal(w)
            m.d.comb += seen.eq(Cat(*bits))
        offset = Signal(w)
        with m.If(self.clear):
            m.d[self.read_domain] += offset.eq(seen)
        m.d.comb += self.count.eq(seen - offset)
        return m
