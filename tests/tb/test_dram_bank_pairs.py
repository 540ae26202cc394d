"""The rank model's refresh pairs seen from either bank: a REFpb addressed to either bank of a
pair (bank b and b + 8 of 16) checks both banks, so an open or just-closed mate is flagged."""

import pytest

from ahasd.hw.dram_port import Cmd
from ahasd.spec.dram import DRAMConfig
from ahasd.tb.amaranth_sim import simulate
from ahasd.tb.dram_bank import DRAMBankModel, DRAMError

C16 = DRAMConfig(t_rcd=5, t_rp=4, t_ras=9, t_ccd=3, t_rrd=2, t_faw=10, t_refi=400, t_rfc=12,
                 t_rfcpb=7, t_pbr2pbr=5, t_pbr2act=3, t_rl=4, row_bytes=64, burst_bytes=8,
                 n_banks=16, rows=4)


def first_error(program):
    """``program``: {cycle: (cmd, bank)} on the PIM port; the model's first error code."""
    dut = DRAMBankModel(config=C16)
    seen = {}

    async def tb(ctx):
        for cycle in range(max(program) + 3):
            cmd, bank = program.get(cycle, (Cmd.NOP, 0))
            ctx.set(dut.cmd, cmd)
            ctx.set(dut.cmd_bank, bank)
            ctx.set(dut.cmd_row, 1)
            await ctx.tick()
        seen["code"] = ctx.get(dut.error_code)

    simulate(dut, tb)
    return seen["code"]


@pytest.mark.parametrize("bank", [0, 3, 8, 11, 15])
def test_a_refpb_to_either_bank_checks_its_mate(bank):
    mate = (bank + 8) % 16
    assert first_error({0: (Cmd.ACT, mate), 20: (Cmd.REFPB, bank)}) == DRAMError.REF_OPEN
    assert first_error({0: (Cmd.ACT, mate), 9: (Cmd.PRE, mate),
                        12: (Cmd.REFPB, bank)}) == DRAMError.REF_TRP
    assert first_error({0: (Cmd.ACT, mate), 9: (Cmd.PRE, mate),
                        13: (Cmd.REFPB, bank)}) == DRAMError.NONE
    # A bank of another pair may stay open.
    assert first_error({0: (Cmd.ACT, (bank + 1) % 16), 20: (Cmd.REFPB, bank)}) == DRAMError.NONE
