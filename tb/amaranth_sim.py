"""Fast tier: one way to run a design in Amaranth's simulator, and stream drivers for it.

:func:`simulate` builds the :class:`~amaranth.sim.Simulator`, adds a clock per domain (period in
seconds, optionally with a phase), the testbenches, and runs to completion or to a deadline.
With ``AHASD_VCD=1`` in the environment it writes a VCD of the run under ``build/vcd/`` of the
checkout, named after the running pytest test.

:func:`stream_put` / :func:`stream_get` move one payload through an ``amaranth.lib.stream``
interface (the shape of glasgow's ``gateware/stream.py`` helpers, written anew);
:class:`StreamSource` and :class:`StreamSink` run whole sequences with idle and backpressure
generators (:mod:`ahasd.tb.generators`). Payloads are set and read through the stream's
``data.Layout`` (a dict or a dataclass of field values, or a ``data.Const``), never packed by hand.
"""

import contextlib
import dataclasses
import os
import re

from amaranth.lib import data
from amaranth.sim import Simulator

from ahasd.tb.paths import build_root

__all__ = ["VCD_ENV", "simulate", "stream_put", "stream_get", "StreamSource", "StreamSink",
           "to_payload", "fields_of"]

#: Set to a non-empty value other than ``0`` to write a VCD per simulation.
VCD_ENV = "AHASD_VCD"


def _vcd_path(name):
    if name is None:
        name = os.environ.get("PYTEST_CURRENT_TEST", "simulation").split(" ")[0]
    return build_root() / "vcd" / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".vcd")


def simulate(dut, *testbenches, clocks=1e-6, until=None, background=(), vcd_name=None):
    """Run ``testbenches`` (async functions of ``ctx``) on ``dut``; return the simulator.

    Parameters
    ----------
    clocks : float or dict
        The ``sync`` period in seconds, or ``{domain: period}`` / ``{domain: (period, phase)}``.
    until : float, optional
        Stop at this simulated time (seconds) instead of when the testbenches return.
    background : sequence
        Testbenches that do not keep the simulation alive (free-running sinks, monitors).
    vcd_name : str, optional
        File name of the VCD (default: the pytest test id); only used with ``AHASD_VCD``.
    """
    sim = Simulator(dut)
    if not isinstance(clocks, dict):
        clocks = {"sync": clocks}
    for domain, clock in clocks.items():
        period, phase = clock if isinstance(clock, tuple) else (clock, None)
        sim.add_clock(period, domain=domain, phase=phase)
    for testbench in testbenches:
        sim.add_testbench(testbench)
    for testbench in background:
        sim.add_testbench(testbench, background=True)
    if os.environ.get(VCD_ENV, "0") not in ("", "0"):
        path = _vcd_path(vcd_name)
        path.parent.mkdir(parents=True, exist_ok=True)
        recorder = sim.write_vcd(str(path))
    else:
        recorder = contextlib.nullcontext()
    with recorder:
        if until is None:
            sim.run()
        else:
            sim.run_until(until)
    return sim


def to_payload(shape, item):
    """``item`` as a value for a payload of ``shape``: a dict or dataclass through the layout's
    ``const``; an int or a ``data.Const`` as it is."""
    if dataclasses.is_dataclass(item):
        item = dataclasses.asdict(item)
    if isinstance(item, dict):
        return data.Layout.cast(shape).const(item)
    return item


def fields_of(value, cls):
    """A dataclass ``cls`` (e.g. a golden descriptor) from a ``data.Const`` read off a payload."""
    return cls(**{f.name: int(value[f.name]) for f in dataclasses.fields(cls)})


def _shape(stream):
    return stream.signature.members["payload"].shape


async def stream_put(ctx, stream, payload, *, domain="sync"):
    """Offer ``payload`` on ``stream`` until it is taken; ``valid`` is low afterwards."""
    ctx.set(stream.valid, 1)
    ctx.set(stream.payload, to_payload(_shape(stream), payload))
    await ctx.tick(domain).until(stream.ready)
    ctx.set(stream.valid, 0)


async def stream_get(ctx, stream, *, domain="sync"):
    """Take one payload from ``stream`` (``ready`` high until it comes, low afterwards)."""
    ctx.set(stream.ready, 1)
    payload, = await ctx.tick(domain).sample(stream.payload).until(stream.valid)
    ctx.set(stream.ready, 0)
    return payload


class StreamSource:
    """Sends ``items`` in order into a stream the design takes (its ``In`` stream port).

    Add :meth:`testbench` to the simulation. Between items the idle generator may insert idle
    cycles; an offered item stays valid until taken (the stream rule). ``on_accept(item)`` runs
    in the cycle an item is taken.
    """

    def __init__(self, stream, items=(), *, domain="sync", on_accept=None):
        self.stream = stream
        self.items = list(items)
        self.domain = domain
        self.on_accept = on_accept
        self.sent = 0
        self._idle = None

    def set_idle_generator(self, generator):
        self._idle = generator

    async def testbench(self, ctx):
        for item in self.items:
            ctx.set(self.stream.valid, 0)
            while self._idle is not None and next(self._idle):
                await ctx.tick(self.domain)
            await stream_put(ctx, self.stream, item, domain=self.domain)
            self.sent += 1
            if self.on_accept is not None:
                self.on_accept(item)


class StreamSink:
    """Takes payloads from a stream the design produces (its ``Out`` stream port).

    Runs until ``count`` payloads arrived (an int, or a callable returning True when done; None:
    forever, add it as a background testbench). The backpressure generator holds ``ready`` low
    in the cycles it yields True. Payloads (``data.Const`` for struct layouts) go to
    :attr:`items` and to ``on_item(payload)``.
    """

    def __init__(self, stream, count=None, *, domain="sync", on_item=None):
        self.stream = stream
        self.count = count
        self.domain = domain
        self.on_item = on_item
        self.items = []
        self._backpressure = None

    def set_backpressure_generator(self, generator):
        self._backpressure = generator

    def _done(self):
        if self.count is None:
            return False
        if callable(self.count):
            return self.count()
        return len(self.items) >= self.count

    async def testbench(self, ctx):
        always_ready = self.stream.signature.always_ready
        while not self._done():
            ready = always_ready or self._backpressure is None or not next(self._backpressure)
            if not always_ready:
                ctx.set(self.stream.ready, ready)
            *_, valid, payload = await ctx.tick(self.domain).sample(self.stream.valid,
                                                                    self.stream.payload)
            if valid and ready:
                self.items.append(payload)
                if self.on_item is not None:
                    self.on_item(payload)
        if not always_ready:
            ctx.set(self.stream.ready, 0)
