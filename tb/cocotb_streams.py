"""cocotb stream drivers: sources and sinks of ``amaranth.lib.stream`` ports on a Verilated top.

A stream port ``<name>`` appears as ``<name>__valid``, ``<name>__payload`` and ``<name>__ready``
(absent when the stream is ``always_ready``; see ``docs/streams.md``). The drivers read the
design in the middle of each cycle (falling edge, read-only phase), when every input set after
the rising edge and every combinational output have settled, so a handshake seen there is the
one the next rising edge performs; they drive new values right after the rising edge. Idle and
backpressure generators (:mod:`ahasd.tb.generators`) insert pauses, the pattern of
verilog-axis's testbenches (``set_idle_generator`` / ``set_backpressure_generator``).

Payloads are packed and unpacked through their ``amaranth.lib.data`` layout
(:mod:`ahasd.tb.payloads`): a source takes a dict or dataclass of field values (or an int), a
sink hands out ``layout.from_bits(...)`` or a dataclass built from it.

Each driver runs its own loop (``start=True``), or, when the order of several drivers within a
cycle matters to a scoreboard, :func:`run_in_order` runs their ``sample`` and ``drive`` steps
in a fixed order on one clock (:func:`run_at_falling_edge` does the same at a third of the
trigger cost for a design whose outputs all come from registers).
"""

import collections

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from ahasd.tb.payloads import pack, unpack

__all__ = ["StreamSource", "StreamSink", "Step", "run_in_order", "run_at_falling_edge", "pack",
           "unpack"]


async def run_in_order(clock, parts):
    """Each cycle of ``clock``: every part's ``sample()`` in order, then every ``drive()``."""
    while True:
        await FallingEdge(clock)
        await ReadOnly()
        for part in parts:
            part.sample()
        await RisingEdge(clock)
        for part in parts:
            part.drive()


async def run_at_falling_edge(clock, parts):
    """As :func:`run_in_order` with one trigger per cycle instead of three, for a design whose
    outputs, every ``ready`` included, come from registers only (no combinational path from an
    input to an output): each falling edge of ``clock``, every part's ``drive()`` then every
    ``sample()``. The outputs read there are those the next rising edge acts on, so a handshake
    seen there is the one that edge performs, as in :func:`run_in_order`."""
    while True:
        await FallingEdge(clock)
        for part in parts:
            part.drive()
        for part in parts:
            part.sample()


class Step:
    """A scoreboard step for :func:`run_in_order`: ``sample`` and/or ``drive`` callables."""

    def __init__(self, sample=None, drive=None):
        self.sample = sample or (lambda: None)
        self.drive = drive or (lambda: None)


class _Port:
    def __init__(self, dut, name, clock, layout, start):
        self.name = name
        self.clock = clock
        self.layout = layout
        self.valid = getattr(dut, f"{name}__valid")
        self.payload = getattr(dut, f"{name}__payload")
        self.ready = getattr(dut, f"{name}__ready", None)   # None: always_ready
        if start:
            cocotb.start_soon(run_in_order(clock, [self]))


class StreamSource(_Port):
    """Drives the ``In`` stream ``<name>`` of ``dut``, synchronous to ``clock``.

    Items come from :meth:`send` (a queue) or, when the queue is empty, from ``fill()`` (return
    None for "nothing now"). An offered item stays valid until taken. ``on_accept(item)`` runs
    for each item taken; :attr:`stalls` counts cycles an item waited with ``ready`` low.
    """

    def __init__(self, dut, name, clock, layout=None, *, fill=None, on_accept=None, start=True):
        self.queue = collections.deque()
        self.fill = fill
        self.on_accept = on_accept
        self.current = None
        self.accepted = 0
        self.stalls = 0
        self._idle = None
        self._valid = False   # what this source drives on ``valid``
        super().__init__(dut, name, clock, layout, start)
        self.valid.value = 0
        self.payload.value = 0

    def set_idle_generator(self, generator):
        self._idle = generator

    def send(self, item):
        self.queue.append(item)

    @property
    def busy(self):
        """An item is offered or queued."""
        return self.current is not None or bool(self.queue)

    def withdraw(self):
        """Drop the offered item (only for requests that may be taken back, not data)."""
        self.current = None
        self.valid.value = self._valid = False

    def sample(self):
        if self.current is None:
            return
        if self.ready is None or int(self.ready.value):
            item, self.current = self.current, None
            self.accepted += 1
            if self.on_accept is not None:
                self.on_accept(item)
        else:
            self.stalls += 1

    def drive(self):
        # Signals are written only when they change: a held item keeps its payload (packing it
        # again every stalled cycle would cost more than the simulation step).
        if self.current is None and not (self._idle is not None and next(self._idle)):
            if self.queue:
                self.current = self.queue.popleft()
            elif self.fill is not None:
                self.current = self.fill()
            if self.current is not None:
                self.payload.value = pack(self.layout, self.current)
        valid = self.current is not None
        if valid != self._valid:
            self.valid.value = self._valid = valid


class StreamSink(_Port):
    """Takes the ``Out`` stream ``<name>`` of ``dut``, synchronous to ``clock``.

    Each payload taken (unpacked through ``layout``, into a ``cls`` if given: see
    :func:`unpack`) goes to :attr:`items` (unless ``keep=False``) and to ``on_item(payload)``.
    The backpressure generator holds ``ready`` low in the cycles it yields True; an
    ``always_ready`` stream is only monitored.
    """

    def __init__(self, dut, name, clock, layout=None, *, cls=None, on_item=None, keep=True,
                 start=True):
        self.cls = cls
        self.on_item = on_item
        self.keep = keep
        self.items = []
        self._backpressure = None
        self._ready = False   # driven on ``ready`` (reading it back would give the old value)
        super().__init__(dut, name, clock, layout, start)
        if self.ready is not None:
            self.ready.value = 0

    def set_backpressure_generator(self, generator):
        self._backpressure = generator

    def sample(self):
        if int(self.valid.value) and (self.ready is None or self._ready):
            item = unpack(self.layout, self.payload.value, self.cls)
            if self.keep:
                self.items.append(item)
            if self.on_item is not None:
                self.on_item(item)

    def drive(self):
        if self.ready is not None:
            ready = not (self._backpressure is not None and next(self._backpressure))
            if ready != self._ready:
                self.ready.value = self._ready = ready
