"""Structural clock-domain-crossing check over an elaborated design (Amaranth's netlist).

Every sequential element of the netlist (flip-flop, memory write port, synchronous read port)
belongs to the domain of its clock. :func:`crossings` walks back from each element's inputs
through the combinational cells to the sequential elements, memories and top-level inputs that
drive it, and reports every path whose source is in another clock domain unless it ends

* in a synchroniser (``amaranth.lib.cdc`` FFSynchronizer, AsyncFFSynchronizer,
  ResetSynchronizer), driven straight from flip-flops of ONE other domain (no logic between:
  a glitch of combinational logic could be sampled), or
* at the read side of a memory of an asynchronous FIFO (``amaranth.lib.fifo`` AsyncFIFO,
  AsyncFIFOBuffered): the FIFO's protocol (Gray-code pointers through synchronisers) keeps the
  entry stable while it is read.

A top-level input (other than clocks) takes the domain of the elements it drives; one that
drives elements of two domains outside a synchroniser is reported as well. Clock nets map to
domains by the names Amaranth gives them (``clk`` for ``sync``, ``<domain>_clk`` otherwise).

This walks Amaranth's internal netlist (``amaranth.hdl._ir.build_netlist``, the same netlist
the RTLIL and Verilog back ends emit) through :mod:`ahasd.hw.compat`; it is pinned to the
Amaranth 0.5 series.
"""

from dataclasses import dataclass

from amaranth.hdl import Signal
from amaranth.lib import cdc, fifo, wiring

from ahasd.hw import compat
from ahasd.hw.axil import port_name
from ahasd.hw.compat import AsyncReadPort, FlipFlop, Net, PortDirection, SyncReadPort, SyncWritePort

__all__ = ["Crossing", "SYNCHRONISERS", "ASYNC_FIFOS", "crossings", "check"]

SYNCHRONISERS = (cdc.FFSynchronizer, cdc.AsyncFFSynchronizer, cdc.ResetSynchronizer)
ASYNC_FIFOS = (fifo.AsyncFIFO, fifo.AsyncFIFOBuffered)


@dataclass(frozen=True)
class Crossing:
    """A path from ``source`` (domain ``source_domain``) into ``dest`` (``dest_domain``) that
    passes neither a synchroniser nor an asynchronous FIFO; ``why`` says what is wrong."""
    dest: str
    dest_domain: str
    source: str
    source_domain: str
    why: str

    def __str__(self):
        return (f"{self.source} ({self.source_domain}) -> {self.dest} ({self.dest_domain}): "
                f"{self.why}")


def _ports(component):
    ports = {}
    for path, member, value in component.signature.flatten(component):
        value = value.as_value() if hasattr(value, "as_value") else value
        if not isinstance(value, Signal):
            continue   # a constant member (the ready of an always-ready stream)
        direction = PortDirection.Input if member.flow == wiring.In else PortDirection.Output
        ports[port_name(component.signature, path)] = (value, direction)
    return ports


class _Netlist:
    """The netlist of ``component`` with names, domains and the kinds of its modules."""

    def __init__(self, component):
        design, nl = compat.netlist(component, _ports(component), hierarchy=("top",))
        self.nl = nl
        kinds = {}
        for name, origins in compat.fragment_origins(design):
            for origin in origins:
                if isinstance(origin, SYNCHRONISERS):
                    kinds[name] = "sync"
                elif isinstance(origin, ASYNC_FIFOS):
                    kinds.setdefault(name, "fifo")
        self.kinds = kinds
        self.inputs = {}           # top input net -> port name
        top = nl.cells[0]
        for name, (start, width) in top.ports_i.items():
            for bit in range(width):
                self.inputs[Net.from_cell(0, start + bit)] = \
                    name if width == 1 else f"{name}[{bit}]"
        self.names = {}
        for signal, value in nl.signals.items():
            for bit, net in enumerate(value):
                self.names.setdefault(net, f"{signal.name}[{bit}]" if len(value) > 1
                                      else signal.name)
        self._sources = {}

    def domain_of_clock(self, net):
        name = self.inputs.get(net)
        if name is None:
            raise ValueError(f"clock net {net} is not a top-level input")
        return "sync" if name == "clk" else name.removesuffix("_clk")

    def module_kind(self, cell):
        """``"sync"`` / ``"fifo"`` if the cell sits in a synchroniser / async FIFO."""
        name = self.nl.modules[self.nl.cells[cell].module_idx].name
        for depth in range(len(name), 0, -1):
            kind = self.kinds.get(name[:depth])
            if kind:
                return kind
        return None

    def describe(self, cell, net=None):
        module = ".".join(self.nl.modules[self.nl.cells[cell].module_idx].name)
        name = self.names.get(net) if net is not None else None
        return f"{module}.{name}" if name else f"{module}:{type(self.nl.cells[cell]).__name__}"

    def write_domains(self, memory):
        return {self.domain_of_clock(c.clk) for c in self.nl.cells
                if isinstance(c, SyncWritePort) and c.memory == memory}

    def sources(self, net):
        """``(origins, direct)`` of ``net``: origins is a set of ``(kind, where, domain)``
        (kind ``ff`` / ``mem`` / ``in``); direct is True when the net is a flip-flop output."""
        if net.is_const:
            return frozenset(), True
        if net in self._sources:
            return self._sources[net]
        self._sources[net] = (frozenset(), True)   # breaks no cycle: the netlist has none
        cell = self.nl.cells[net.cell]
        if net.cell == 0:
            result = frozenset({("in", self.inputs[net], None)}), True
        elif isinstance(cell, FlipFlop):
            result = frozenset({("ff", self.describe(net.cell, net),
                                 self.domain_of_clock(cell.clk))}), True
        elif isinstance(cell, SyncReadPort):
            result = frozenset({("ff", self.describe(net.cell),
                                 self.domain_of_clock(cell.clk))}), True
        else:
            origins, direct = set(), False
            if isinstance(cell, AsyncReadPort):
                origins |= {("mem", cell.memory, d) for d in self.write_domains(cell.memory)}
            for edge, _ in cell.comb_edges_to(net.bit):
                more, _ = self.sources(edge)
                origins |= more
            result = frozenset(origins), direct
        self._sources[net] = result
        return result


def crossings(component, allowed=None):
    """Every unsynchronised clock-domain crossing of ``component`` (a list of
    :class:`Crossing`, empty for a clean design). With a list ``allowed``, the crossings that
    pass a synchroniser or an async FIFO are appended to it (their ``why`` says which)."""
    n = _Netlist(component)
    found = []
    input_domains = {}
    for index, cell in enumerate(n.nl.cells):
        if isinstance(cell, FlipFlop):
            nets = list(cell.data) + ([cell.arst] if not cell.arst.is_const else [])
        elif isinstance(cell, SyncWritePort):
            nets = list(cell.data) + list(cell.addr) + list(cell.en)
        elif isinstance(cell, SyncReadPort):
            nets = list(cell.addr) + [cell.en]
        else:
            continue
        domain = n.domain_of_clock(cell.clk)
        kind = n.module_kind(index)
        dest = n.describe(index, Net.from_cell(index, 0))
        if isinstance(cell, SyncReadPort):
            foreign = n.write_domains(cell.memory) - {domain}
            if foreign and kind == "fifo" and allowed is not None:
                allowed.append(Crossing(dest, domain, f"memory {cell.memory}",
                                        "/".join(sorted(foreign)), "async FIFO"))
            elif foreign:
                found.append(Crossing(dest, domain, f"memory {cell.memory}",
                                      "/".join(sorted(foreign)),
                                      "memory read in another domain outside an async FIFO"))
        for net in nets:
            origins, direct = n.sources(net)
            for origin_kind, where, source_domain in origins:
                if origin_kind == "in":
                    if not (net.cell == 0 and kind == "sync"):
                        input_domains.setdefault(where, set()).add((domain, dest))
                    continue
                if source_domain == domain:
                    continue
                if origin_kind == "mem" and kind == "fifo":
                    if allowed is not None:
                        allowed.append(Crossing(dest, domain, f"memory {where}", source_domain,
                                                "async FIFO"))
                    continue
                if kind == "sync" and origin_kind == "ff":
                    doms = {d for k, _, d in origins if k == "ff"}
                    if direct and len(doms) == 1:
                        if allowed is not None:
                            allowed.append(Crossing(dest, domain, where, source_domain,
                                                    "synchroniser"))
                        continue
                    why = "logic between the source flip-flops and the synchroniser"
                else:
                    why = "no synchroniser or async FIFO on the path"
                where = f"memory {where}" if origin_kind == "mem" else where
                found.append(Crossing(dest, domain, where, source_domain, why))
    for port, uses in sorted(input_domains.items()):
        domains = sorted({d for d, _ in uses})
        if len(domains) > 1:
            example = {d: next(x for dd, x in sorted(uses) if dd == d) for d in domains}
            found.append(Crossing(", ".join(f"{x} ({d})" for d, x in example.items()),
                                  "/".join(domains), f"input {port}", "?",
                                  "a top-level input drives elements of two domains"))
    return sorted(set(found), key=str)


def check(component):
    """Raise ``AssertionError`` listing the unsynchronised crossings of ``component``."""
    found = crossings(component)
    if found:
        raise AssertionError(f"{len(found)} unsynchronised clock-domain crossing(s):\n"
                             + "\n".join(f"  {c}" for c in found))
