"""Registry of the synthesizable blocks: what ``ahasd verilog`` / ``ahasd area`` / the flows build.

Each entry maps a block name (also the Verilog top-level module name) to ``"module:Class"``; the
class is instantiated with its default parameters unless keyword parameters are given.
"""

import importlib

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


def to_verilog(component, name):
    """Verilog text of ``component`` with top module ``name``.

    ``emit_src=False`` keeps source paths of this machine out of the generated file, so that the
    output is the same everywhere.
    """
    from amaranth.back import verilog
    return verilog.convert(component, name=name, emit_src=False)


def port_list(component):
    """``(inputs, outputs)`` of a ``wiring.Component`` as lists of ``(verilog_name, width)``.

    Port names are the signature paths joined with ``__`` (Amaranth's convention); ``clk`` and
    ``rst`` of the ``sync`` domain are not listed.
    """
    from amaranth.hdl import Value
    from amaranth.lib import wiring
    inputs, outputs = [], []
    for path, member, value in component.signature.flatten(component):
        name = "__".join(str(part) for part in path)
        width = len(Value.cast(value))  # a struct/enum view has no len() of its own
        (inputs if member.flow == wiring.In else outputs).append((name, width))
    return inputs, outputs
