"""The LPDDR5 bank model catches every kind of timing violation and returns data after tRL."""

from fractions import Fraction

import pytest
from ahasd.tb.amaranth_sim import simulate

from ahasd.hw.dram_port import Cmd
from ahasd.tb.dram_bank import DRAMBankModel, DRAMError
from ahasd.spec.dram import DRAMConfig, burst_address, weight_layout

CFG = DRAMConfig(t_rcd=5, t_rp=4, t_ras=9, t_ccd=3, t_refi=100, t_rfc=12, t_rl=4, row_bytes=64,
                 burst_bytes=8, n_banks=2, rows=4)


def drive(program, config=CFG, init=()):
    """``program``: list of (cycle, cmd, bank, row, col); returns (error_code, reads by cycle)."""
    dut = DRAMBankModel(config=config, init=init)
    by_cycle = {p[0]: p[1:] for p in program}
    last = max(by_cycle) + config.t_rl + 2
    seen = {"data": {}}

    async def tb(ctx):
        for cycle in range(last + 1):
            cmd, bank, row, col = by_cycle.get(cycle, (Cmd.NOP, 0, 0, 0))
            ctx.set(dut.cmd, cmd)
            ctx.set(dut.cmd_bank, bank)
            ctx.set(dut.cmd_row, row)
            ctx.set(dut.cmd_col, col)
            if ctx.get(dut.rd.valid):
                seen["data"][cycle] = ctx.get(dut.rd.payload)
            await ctx.tick()
        seen["code"] = ctx.get(dut.error_code)
        seen["error"] = ctx.get(dut.error)

    simulate(dut, tb)
    assert seen["error"] == (seen["code"] != DRAMError.NONE)
    return seen["code"], seen["data"]


# A legal sequence: ACT b0, ACT b1, reads tCCD apart, PRE after tRAS, REF after tRP.
LEGAL = [(0, Cmd.ACT, 0, 2, 0), (1, Cmd.ACT, 1, 3, 0), (5, Cmd.RD, 0, 2, 1), (8, Cmd.RD, 1, 3, 7),
         (11, Cmd.RD, 0, 2, 2), (12, Cmd.PRE, 0, 0, 0), (13, Cmd.PRE, 1, 0, 0),
         (17, Cmd.REF, 0, 0, 0), (29, Cmd.ACT, 0, 1, 0)]


def test_legal_sequence_and_read_latency():
    init = list(range(1000, 1000 + 64))
    code, data = drive(LEGAL, init=init)
    assert code == DRAMError.NONE
    # Linear address ((row * n_banks) + bank) * bursts_per_row + col.
    assert data == {5 + 4: init[(2 * 2 + 0) * 8 + 1], 8 + 4: init[(3 * 2 + 1) * 8 + 7],
                    11 + 4: init[(2 * 2 + 0) * 8 + 2]}


def with_change(index, new):
    program = list(LEGAL)
    program[index] = new
    return program


@pytest.mark.parametrize("program, expected", [
    (with_change(2, (4, Cmd.RD, 0, 2, 1)), DRAMError.RD_TRCD),
    (with_change(3, (7, Cmd.RD, 1, 3, 7)), DRAMError.RD_TCCD),
    ([(0, Cmd.ACT, 1, 3, 0), (8, Cmd.PRE, 1, 0, 0)], DRAMError.PRE_TRAS),
    (with_change(1, (1, Cmd.ACT, 0, 3, 0)), DRAMError.ACT_OPEN),
    ([(0, Cmd.RD, 0, 0, 0)], DRAMError.RD_CLOSED),
    (LEGAL[:7] + [(15, Cmd.ACT, 0, 1, 0)], DRAMError.ACT_TRP),
    (LEGAL[:7] + [(16, Cmd.REF, 0, 0, 0)], DRAMError.REF_TRP),
    (LEGAL[:6] + [(17, Cmd.REF, 0, 0, 0)], DRAMError.REF_OPEN),
    (LEGAL[:8] + [(28, Cmd.ACT, 0, 1, 0)], DRAMError.TRFC),
    ([(CFG.refresh_deadline + 1, Cmd.NOP, 0, 0, 0)], DRAMError.REF_LATE),
])
def test_violations_are_caught(program, expected):
    code, _ = drive(program)
    assert code == expected


def test_bad_row_is_caught():
    # rows=3 leaves row address 3 representable on the 2-bit bus, but out of range.
    code, _ = drive([(0, Cmd.ACT, 0, 3, 0)], config=DRAMConfig(**{**CFG.__dict__, "rows": 3}))
    assert code == DRAMError.BAD_ADDRESS


def test_refresh_just_in_time_is_legal():
    code, _ = drive([(CFG.refresh_deadline, Cmd.REF, 0, 0, 0)])
    assert code == DRAMError.NONE


def test_config_validation_and_bound():
    with pytest.raises(ValueError, match="t_rcd must be a positive integer, not 0"):
        DRAMConfig(t_rcd=0)
    with pytest.raises(ValueError, match="burst_bytes must be a power of two, not 24"):
        DRAMConfig(burst_bytes=24)
    with pytest.raises(ValueError, match=r"burst_bytes must be an integer in 1..2048 \(at most row_bytes\), not 4096"):
        DRAMConfig(burst_bytes=4096)
    with pytest.raises(ValueError, match=r"t_refi must be an integer >= 225 \(more than t_rfc\), not 100"):
        DRAMConfig(t_refi=100, t_rfc=224)
    with pytest.raises(ValueError, match="config must be a DRAMConfig"):
        DRAMBankModel(config=None)
    with pytest.raises(ValueError, match="init has 513 bursts; the model stores 512"):
        DRAMBankModel(config=DRAMConfig(rows=2), init=[0] * 513)
    d = DRAMConfig()
    assert d.read_bound() == Fraction(3120 - 224, 3120 * 4)
    assert d.mac_bound() == 32 * d.read_bound()
    assert DRAMConfig(t_ccd=6).read_bound() < d.read_bound()


def test_weight_layout_and_addresses():
    import numpy as np
    w = np.array([[1, -2, 3], [-128, 5, 127], [7, 8, 9]])
    words = weight_layout(w, 2)
    # Tile 0 = rows 0-1, one burst per column; tile 1 = row 2 + a zero lane.
    assert [wd.to_bytes(2, "little") for wd in words] == [
        bytes([1, 0x80]), bytes([0xFE, 5]), bytes([3, 127]), bytes([7, 0]), bytes([8, 0]),
        bytes([9, 0])]
    assert burst_address(CFG, 0) == (0, 0, 0)
    assert burst_address(CFG, 8) == (1, 0, 0)
    assert burst_address(CFG, 17) == (0, 1, 1)
    with pytest.raises(ValueError, match="int8"):
        weight_layout(np.array([[200]]), 2)
