"""A DRAM-reading unit joined to its LPDDR5 bank model: the harness the GEMV and state-commit
systems share.

A simulation harness, not a block to build: the unit (:class:`ahasd.hw.gemv.GEMV`,
:class:`ahasd.hw.state_commit.StateCommit`) is the synthesizable part, with the DRAM command
port of :func:`ahasd.hw.dram_port.command_signature` and the valid-only read-return stream
``rd``; :class:`ahasd.tb.dram_bank.DRAMBankModel` stands for the DRAM array. A subclass names
the unit's ports it exposes (:meth:`DRAMSystem.unit_ports`) and wires them
(:meth:`DRAMSystem.connect_unit`); this base checks the DRAM parameters, builds the model
holding ``init``, joins the command port and the read stream, and adds the model's timing check
as ports.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.dram_port import connect_command
from ahasd.spec.dram import DRAMConfig
from ahasd.tb.dram_bank import DRAMBankModel, DRAMError

__all__ = ["DRAMSystem", "DRAM_PORTS"]

#: Ports every system adds: the model's timing check, its count of RD commands and of refreshes
#: (REFpb, REF).
DRAM_PORTS = {"dram_error": Out(1), "dram_error_code": Out(DRAMError), "reads": Out(32),
              "refpb": Out(32), "refab": Out(32)}


class DRAMSystem(wiring.Component):
    """A unit built by ``make_unit(config)`` + a :class:`DRAMBankModel` holding ``init``.

    Parameters
    ----------
    config : DRAMConfig
        Shared by both (``rows`` = rows stored per bank in the model).
    init : sequence of int
        Burst words of the DRAM.
    make_unit : callable
        ``config -> unit``; it may raise ``ValueError`` for bad unit parameters.
    unit_name : str
        Name of the unit's submodule (and attribute) in the design.
    """

    def __init__(self, *, config, init, make_unit, unit_name="unit"):
        init = list(init)
        with rejecting_construction(self):
            if not isinstance(config, DRAMConfig):
                raise ValueError(f"config must be a DRAMConfig, not {config!r}")
            depth = config.rows * config.n_banks * config.bursts_per_row
            if len(init) > depth:
                raise ValueError(f"init has {len(init)} bursts; the model stores {depth}")
            self.unit = make_unit(config)
        self.unit_name = unit_name
        self.config = config
        self.dram = DRAMBankModel(config=config, init=init)   # cannot fail: checked above
        super().__init__({**self.unit_ports(self.unit), **DRAM_PORTS})

    def unit_ports(self, unit):
        """The members of this system's signature that stand for the unit's ports."""
        raise NotImplementedError

    def connect_unit(self, m, unit):
        """Wire the ports of :meth:`unit_ports` to ``unit`` in module ``m``."""
        raise NotImplementedError

    def elaborate(self, platform):
        m = Module()
        m.submodules[self.unit_name] = u = self.unit
        m.submodules.dram = d = self.dram
        self.connect_unit(m, u)
        connect_command(m, u, d)
        m.d.comb += [self.dram_error.eq(d.error), self.dram_error_code.eq(d.error_code),
                     self.reads.eq(d.reads), self.refpb.eq(d.refpb), self.refab.eq(d.refab)]
        wiring.connect(m, d.rd, u.rd)
        return m
