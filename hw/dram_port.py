"""The DRAM command port between the GEMV bank's scheduler and the DRAM array.

The scheduler (:class:`ahasd.hw.gemv.GEMV`) drives it; in simulation the array is
:class:`ahasd.tb.dram_bank.DRAMBankModel`.
"""

from amaranth.lib import enum
from amaranth.lib.wiring import Out

__all__ = ["Cmd", "command_signature"]


class Cmd(enum.Enum, shape=3):
    """DRAM commands (one per cycle on the command bus)."""
    NOP = 0
    ACT = 1   # open row `row` in bank `bank`
    RD = 2    # read burst `col` of the open row of `bank`
    PRE = 3   # close bank `bank` (a PRE to a closed bank is a no-op, as in JEDEC)
    REF = 4   # all-bank refresh; every bank must be closed


def command_signature(config):
    """Members of the DRAM command port (controller side: all outputs)."""
    return {
        "cmd": Out(Cmd),
        "cmd_bank": Out(range(config.n_banks)),
        "cmd_row": Out(range(config.rows)),
        "cmd_col": Out(range(config.bursts_per_row)),
    }
