"""GEMV bank joined to its LPDDR5 bank model: what tests and ``ahasd bench gemv`` simulate.

A simulation harness (:class:`ahasd.tb.dram_system.DRAMSystem`), not a block to build:
:class:`ahasd.hw.gemv.GEMV` is the synthesizable part and :class:`ahasd.tb.dram_bank.DRAMBankModel`
stands for the DRAM array. Every port is at most 32 bits wide so that the Verilated model can be
driven over the pipe harness.
"""

from amaranth.hdl import signed
from amaranth.lib.wiring import In, Out

from ahasd.hw.gemv import GEMV
from ahasd.spec.dram import DRAMConfig
from ahasd.tb.dram_system import DRAMSystem

__all__ = ["GEMVSystem", "feed_and_start"]


class GEMVSystem(DRAMSystem):
    """:class:`GEMV` + :class:`DRAMBankModel` holding ``init`` (burst words).

    Parameters
    ----------
    config : DRAMConfig
        Shared by both (``rows`` = rows stored per bank in the model).
    init : sequence of int
        Burst words of the DRAM (see :func:`ahasd.spec.dram.weight_layout`).
    max_n, max_m : int
        As :class:`GEMV`.

    Ports: those of :class:`GEMV` (streams flattened to ``x_valid/x_data/x_ready`` and
    ``o_valid/o_data/o_ready``) without the DRAM bus, plus ``dram_error`` / ``dram_error_code``
    (the model's timing check) and ``reads`` (RD commands).
    """

    def __init__(self, *, config=DRAMConfig(rows=16), init=(), max_n=4096, max_m=4096):
        self.max_n, self.max_m = max_n, max_m
        super().__init__(config=config, init=init, unit_name="gemv",
                         make_unit=lambda c: GEMV(config=c, max_n=max_n, max_m=max_m))
        self.gemv = self.unit

    def unit_ports(self, unit):
        rows = unit.config.rows * unit.config.n_banks
        return {
            # Streams as plain flat ports: simple names for the pipe harness of the benchmark.
            "x_valid": In(1), "x_data": In(signed(8)), "x_ready": Out(1),
            "o_valid": Out(1), "o_data": Out(signed(32)), "o_ready": In(1),
            "m": In(range(self.max_m + 1)),
            "n": In(range(self.max_n + 1)),
            "base_row": In(range(rows)),
            "start": In(1),
            "busy": Out(1),
            "error": Out(1),
            "cycles": Out(32),
        }

    def connect_unit(self, m, g):
        m.d.comb += [
            g.x_stream.valid.eq(self.x_valid), g.x_stream.payload.eq(self.x_data),
            self.x_ready.eq(g.x_stream.ready),
            self.o_valid.eq(g.o_stream.valid), self.o_data.eq(g.o_stream.payload),
            g.o_stream.ready.eq(self.o_ready),
            g.m.eq(self.m), g.n.eq(self.n), g.base_row.eq(self.base_row), g.start.eq(self.start),
            self.busy.eq(g.busy), self.error.eq(g.error), self.cycles.eq(g.cycles),
        ]


async def feed_and_start(ctx, dut, x, m, n):
    """In an Amaranth testbench ``ctx``: offer the activations ``x`` to ``dut`` (a
    :class:`GEMVSystem`), each held until taken, then start an ``m x n`` GEMV with the output
    ready; returns in the cycle after ``start``."""
    for v in x:
        ctx.set(dut.x_valid, 1)
        ctx.set(dut.x_data, int(v))
        await ctx.tick().until(dut.x_ready)
    ctx.set(dut.x_valid, 0)
    ctx.set(dut.m, m)
    ctx.set(dut.n, n)
    ctx.set(dut.start, 1)
    ctx.set(dut.o_ready, 1)
    await ctx.tick()
    ctx.set(dut.start, 0)
