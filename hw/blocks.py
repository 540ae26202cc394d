"""Registry of the synthesizable blocks: what ``ahasd verilog`` / ``ahasd area`` / the flows build.

Each entry maps a block name (also the Verilog top-level module name) to ``"module:Class"``; the
class is instantiated with its default parameters unless keyword parameters are given.
"""

import importlib
import re

__all__ = ["BLOCKS", "block_names", "make_block", "to_verilog", "port_list"]

#: name -> "module:Class". Add one line per new block.
BLOCKS = {
    "edc": "ahasd.hw.edc:EDC",
    "gemv": "ahasd.hw.gemv:GEMV",
    "entropy": "ahasd.hw.entropy:EntropyUnit",
    "aau": "ahasd.hw.aau:AAU",
    "tvc": "ahasd.hw.tvc:TVC",
    "csr": "ahasd.hw.csr:CSR",
    "controller": "ahasd.hw.controller:Controller",
    "queues": "ahasd.hw.queues:Queues",
    "gts": "ahasd.hw.gts:GTS",
    "state_commit": "ahasd.hw.state_commit:StateCommit",
}


def block_names():
    return list(BLOCKS)


def make_block(name, **params):
    """Instantiate block ``name`` (with ``params`` passed to its constructor)."""
    try:
        target = BLOCKS[name]
    except KeyError:
        raise ValueError(
            f"unknown block {name!r}; known blocks: {', '.join(block_names())}") from None
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(**params)


def _ports(component):
    """``[(verilog_name, member, value)]`` of a component's signature, without constant members.

    The ``ready`` of an ``always_ready`` stream (and the ``valid`` of an ``always_valid`` one) is
    a constant, not a port (see ``docs/streams.md``); Amaranth 0.5's ``verilog.convert`` would
    refuse it as a top-level port.
    """
    from amaranth.hdl import Const, Value

    from ahasd.hw.axil import port_name
    ports = []
    for path, member, value in component.signature.flatten(component):
        value = Value.cast(value)   # a struct/enum view is a value-castable, not a value
        if isinstance(value, Const):
            continue
        ports.append((port_name(component.signature, path), member, value))
    return ports


def to_verilog(component, name, platform=None):
    """Verilog text of ``component`` with top module ``name``, elaborated for ``platform``
    (``None``: no target; ``"ecp5"`` / ``"ice40"`` for the FPGA flow,
    :func:`ahasd.hw.construction.on_fpga`).

    ``emit_src=False`` keeps source paths of this machine out of the generated file, so that the
    output is the same everywhere.
    """
    from amaranth.back import verilog
    from amaranth.lib import wiring

    # The only way to name port directions in Amaranth 0.5 (verilog.convert uses it the same
    # way when it builds the ports of a component itself).
    from ahasd.hw.compat import PortDirection
    ports = {name: (value, PortDirection.Input if member.flow == wiring.In
                    else PortDirection.Output)
             for name, member, value in _ports(component)}
    return _sorted_module_headers(verilog.convert(component, name=name, ports=ports,
                                                  emit_src=False, platform=platform))


_MODULE_HEADER = re.compile(r"^(module\s+\S+\s*\()([^;]*?)(\);)", re.MULTILINE | re.DOTALL)


def _sorted_module_headers(text):
    """Sort the port lists of the ``module name(...);`` headers.

    Amaranth 0.5 adds the clock and reset ports of domains that a design uses but does not define
    in the order of a Python ``set`` (``Fragment._create_missing_domains``), so with string hash
    randomisation a two-domain design (the controller) comes out with its header ports in a
    different order in every process, and every content-keyed build cache (cocotb, Verilator
    harness) misses. The header order carries no meaning here (Amaranth connects submodules by
    name; the declarations below the header keep their order), so sorting it makes the text a
    function of the design alone.
    """
    def fix(match):
        names = sorted(part.strip() for part in match.group(2).split(","))
        # An escaped identifier (`\port$1$0`) ends at white space, which must stay.
        names = [name + " " if name.startswith("\\") else name for name in names]
        return match.group(1) + ", ".join(names) + match.group(3)
    return _MODULE_HEADER.sub(fix, text)


def port_list(component):
    """``(inputs, outputs)`` of a ``wiring.Component`` as lists of ``(verilog_name, width)``.

    Port names are the signature paths joined with ``__`` (Amaranth's convention), with ``_``
    inside an AXI4-Lite member (``s_axil_awaddr``, :func:`ahasd.hw.axil.port_name`); ``clk``
    and ``rst`` of the ``sync`` domain are not listed.
    """
    from amaranth.lib import wiring
    inputs, outputs = [], []
    for name, member, value in _ports(component):
        (inputs if member.flow == wiring.In else outputs).append((name, len(value)))
    return inputs, outputs
