"""Every use of a non-public Amaranth API, in one place.

Amaranth 0.5 has no public way to do a few things the project needs; the code that does them
imports them from here and nowhere else, so that an Amaranth upgrade is fixed in this one file.
``tests/hw/test_compat.py`` exercises each of them (through :func:`problems`) and fails naming the
API that moved.

* :data:`PortDirection` (``amaranth.hdl._ir``): the direction of an explicit top-level port of
  ``amaranth.back.verilog.convert(..., ports={name: (value, direction)})``, the only way to name
  the ports of a component (:func:`ahasd.hw.blocks.to_verilog`).
* :func:`silence_unused` (the ``_MustUse__silence`` flag of ``amaranth.hdl._unused.MustUse``):
  no ``UnusedElaboratable`` warning for an elaboratable that will never be elaborated (a
  component whose constructor rejected its parameters, :mod:`ahasd.hw.construction`).
* :func:`netlist` and the cell classes :data:`Net`, :data:`FlipFlop`, :data:`SyncWritePort`,
  :data:`SyncReadPort`, :data:`AsyncReadPort` (``Fragment.prepare``, ``amaranth.hdl._ir``,
  ``amaranth.hdl._nir``): the netlist the back ends emit, walked by the clock-domain-crossing
  check (:mod:`ahasd.synth.cdc`), with the fragment ``origins`` (:func:`fragment_origins`).
"""

import amaranth
from amaranth.hdl import Fragment, _ir, _nir

__all__ = ["AMARANTH_VERSION", "PortDirection", "silence_unused", "netlist", "fragment_origins",
           "Net", "FlipFlop", "SyncWritePort", "SyncReadPort", "AsyncReadPort", "problems"]

#: The Amaranth release series these APIs were checked against.
AMARANTH_VERSION = "0.5"

PortDirection = _ir.PortDirection
Net = _nir.Net
FlipFlop = _nir.FlipFlop
SyncWritePort = _nir.SyncWritePort
SyncReadPort = _nir.SyncReadPort
AsyncReadPort = _nir.AsyncReadPort


def silence_unused(elaboratable):
    """Keep Amaranth from warning (``UnusedElaboratable``) that ``elaboratable`` was never
    elaborated."""
    elaboratable._MustUse__silence = True


def netlist(component, ports, *, hierarchy=("top",)):
    """``(design, netlist)`` of ``component`` with top-level ``ports``
    (``{name: (value, PortDirection)}``): the prepared design and Amaranth's netlist of it."""
    design = Fragment.get(component, None).prepare(ports=ports, hierarchy=hierarchy)
    return design, _ir.build_netlist(design)


def fragment_origins(design):
    """``(hierarchical name, origins)`` of every fragment of a prepared ``design``: the
    elaboratables the fragment was elaborated from."""
    for fragment, info in design.fragments.items():
        yield info.name, tuple(getattr(fragment, "origins", None) or ())


def problems():
    """Exercise every API above on a small design; return ``["<API>: <what is wrong>", ...]``
    (empty while they all work as this project uses them)."""
    import gc
    import warnings

    from amaranth.back import verilog
    from amaranth.hdl import ClockDomain, Elaboratable, Module, Signal, UnusedElaboratable
    from amaranth.lib import memory, wiring
    from amaranth.lib.wiring import In, Out

    found = []

    def check(api, test):
        try:
            if not test():
                found.append(f"{api}: does not behave as used (amaranth {amaranth.__version__})")
        except Exception as error:   # an API that moved raises anything
            found.append(f"{api}: {type(error).__name__}: {error} "
                         f"(amaranth {amaranth.__version__})")

    class Block(wiring.Component):
        def __init__(self):
            super().__init__({"a": In(4), "b": Out(4), "c": Out(4)})

        def elaborate(self, platform):
            m = Module()
            m.domains.other = ClockDomain()
            m.submodules.mem = mem = memory.Memory(shape=4, depth=4, init=[])
            wr, rd_sync = mem.write_port(), mem.read_port()
            rd_async = mem.read_port(domain="comb")
            reg = Signal(4)
            m.d.sync += reg.eq(self.a)
            m.d.comb += [wr.addr.eq(self.a), wr.data.eq(reg), wr.en.eq(1),
                         rd_sync.addr.eq(reg), rd_async.addr.eq(self.a),
                         self.c.eq(rd_async.data)]
            m.d.other += self.b.eq(rd_sync.data)
            return m

    def ports(block):
        return {"a": (block.a, PortDirection.Input), "b": (block.b, PortDirection.Output),
                "c": (block.c, PortDirection.Output)}

    def convert_with_ports():
        block = Block()
        text = verilog.convert(block, name="top", ports=ports(block), emit_src=False)
        return {"Input", "Output"} <= set(PortDirection.__members__) and "module top" in text
    check("amaranth.hdl._ir.PortDirection (verilog.convert ports)", convert_with_ports)

    def unused_silenced():
        def warned(silence):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UnusedElaboratable)

                class Unused(Elaboratable):
                    def elaborate(self, platform):
                        return Module()
                item = Unused()
                if silence:
                    silence_unused(item)
                del item
                gc.collect()
            return any(issubclass(w.category, UnusedElaboratable) for w in caught)
        return warned(False) and not warned(True)
    check("_MustUse__silence (silence_unused)", unused_silenced)

    def netlist_walk():
        block = Block()
        design, nl = netlist(block, ports(block))
        cells = nl.cells
        kinds = {type(cell) for cell in cells}
        if not {FlipFlop, SyncWritePort, SyncReadPort, AsyncReadPort} <= kinds:
            return False
        top = cells[0]
        start, width = top.ports_i["a"]
        net = Net.from_cell(0, start)
        if net.cell != 0 or net.bit != start or net.is_const:
            return False
        names = [tuple(nl.modules[cell.module_idx].name) for cell in cells]
        ff = next(cell for cell in cells if isinstance(cell, FlipFlop))
        wp = next(cell for cell in cells if isinstance(cell, SyncWritePort))
        rp = next(cell for cell in cells if isinstance(cell, SyncReadPort))
        ap = next(cell for cell in cells if isinstance(cell, AsyncReadPort))
        _ = (ff.clk, ff.data, ff.arst.is_const, wp.clk, wp.data, wp.addr, wp.en, wp.memory,
             rp.clk, rp.addr, rp.en, rp.memory, ap.memory)
        edges = list(ap.comb_edges_to(0))
        signals = {id(signal) for signal, _ in nl.signals.items()}
        origins = dict(fragment_origins(design))
        return (width == 4 and ("top",) in names and edges and id(block.a) in signals
                and any(block in o for o in origins.values()))
    check("amaranth.hdl._ir.build_netlist / _nir cells / Fragment.prepare (netlist)",
          netlist_walk)
    return found
