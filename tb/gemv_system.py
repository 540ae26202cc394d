"""GEMV bank joined to its LPDDR5 bank model: what tests and ``ahasd bench gemv`` simulate.

A simulation harness, not a block to build: :class:`ahasd.hw.gemv.GEMV` is the synthesizable part
and :class:`ahasd.tb.dram_bank.DRAMBankModel` stands for the DRAM array. Every port is at most 32 bits
wide so that the Verilated model can be driven over the pipe harness.
"""

from amaranth.hdl import Module, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.tb.dram_bank import DRAMBankModel, DRAMError
from ahasd.hw.gemv import GEMV
from ahasd.sim.blocks.dram import DRAMConfig

__all__ = ["GEMVSystem"]


class GEMVSystem(wiring.Component):
    """:class:`GEMV` + :class:`DRAMBankModel` holding ``init`` (burst words).

    Parameters
    ----------
    config : DRAMConfig
        Shared by both (``rows`` = rows stored per bank in the model).
    init : sequence of int
        Burst words of the DRAM (see :func:`ahasd.sim.blocks.dram.weight_layout`).
    max_n, max_m : int
        As :class:`GEMV`.

    Ports: those of :class:`GEMV` (streams flattened to ``x_valid/x_data/x_ready`` and
    ``o_valid/o_data/o_ready``) without the DRAM bus, plus ``dram_error`` / ``dram_error_code``
    (the model's timing check) and ``reads`` (RD commands).
    """

    def __init__(self, *, config=DRAMConfig(rows=16), init=(), max_n=4096, max_m=4096):
        init = list(init)
        with rejecting_construction(self):
            if not isinstance(config, DRAMConfig):
                raise ValueError(f"config must be a DRAMConfig, not {config!r}")
            depth = config.rows * config.n_banks * config.bursts_per_row
            if len(init) > depth:
                raise ValueError(f"init has {len(init)} bursts; the model stores {depth}")
            self.gemv = GEMV(config=config, max_n=max_n, max_m=max_m)
        self.dram = DRAMBankModel(config=config, init=init)   # cannot fail: checked above
        super().__init__({
            # Streams as plain flat ports: simple names for the pipe harness of the benchmark.
            "x_valid": In(1), "x_data": In(signed(8)), "x_ready": Out(1),
            "o_valid": Out(1), "o_data": Out(signed(32)), "o_ready": In(1),
            "m": In(range(max_m + 1)),
            "n": In(range(max_n + 1)),
            "base_row": In(range(config.rows * config.n_banks)),
            "start": In(1),
            "busy": Out(1),
            "error": Out(1),
            "cycles": Out(32),
            "dram_error": Out(1),
            "dram_error_code": Out(DRAMError),
            "reads": Out(32),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.gemv = g = self.gemv
        m.submodules.dram = d = self.dram
        m.d.comb += [
            g.x_stream.valid.eq(self.x_valid), g.x_stream.payload.eq(self.x_data),
            self.x_ready.eq(g.x_stream.ready),
            self.o_valid.eq(g.o_stream.valid), self.o_data.eq(g.o_stream.payload),
            g.o_stream.ready.eq(self.o_ready),
            g.m.eq(self.m), g.n.eq(self.n), g.base_row.eq(self.base_row), g.start.eq(self.start),
            self.busy.eq(g.busy), self.error.eq(g.error), self.cycles.eq(g.cycles),
            d.cmd.eq(g.cmd), d.cmd_bank.eq(g.cmd_bank), d.cmd_row.eq(g.cmd_row),
            d.cmd_col.eq(g.cmd_col),
            self.dram_error.eq(d.error), self.dram_error_code.eq(d.error_code),
            self.reads.eq(d.reads),
        ]
        wiring.connect(m, d.rd, g.rd)
        return m
