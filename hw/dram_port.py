"""The DRAM command port between a unit's read scheduler and the DRAM array, and that scheduler.

:class:`ReadScheduler` drives it for the GEMV bank (:class:`ahasd.hw.gemv.GEMV`) and the
state-commit unit (:class:`ahasd.hw.state_commit.StateCommit`); in simulation the array is
:class:`ahasd.tb.dram_bank.DRAMBankModel`.
"""

from amaranth.hdl import Array, Module, Signal
from amaranth.lib import enum, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Cmd", "command_signature", "ReadScheduler"]


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


class ReadScheduler(wiring.Component):
    """Open-page read scheduler of one DRAM channel: walks bursts in address order (column,
    then bank, then row) and issues ACT / RD / PRE / REF on the command port within the
    timing of :class:`ahasd.spec.dram.DRAMConfig`, keeping its own copy of the banks'
    timing state. Shared by the GEMV bank and the state-commit unit.

    Per cycle, in priority order: a due refresh (precharge the lowest open bank past tRAS,
    then REF once all are closed and tRP has passed); a RD of the current burst when the unit
    is ``reading``, the row is open past tRCD, tCCD has passed, no refresh runs and the unit's
    own condition ``rd_allowed`` holds; otherwise precharge or activate the current bank for
    its row, then prepare the next bank ahead of time.

    Ports
    -----
    reading, rd_allowed : In(1)
        The unit has reads left; its extra condition for a RD (room for the data, say).
    load, base_row : In
        ``load`` restarts the walk at burst 0 of ``base_row`` (bank in the low bits).
    rd_issued : Out(1)
        A RD goes out in this cycle.
    cmd, cmd_bank, cmd_row, cmd_col : Out
        The command port (:func:`command_signature`).
    """

    def __init__(self, config):
        self.config = config
        super().__init__({
            "reading": In(1), "rd_allowed": In(1),
            "load": In(1), "base_row": In(range(config.rows * config.n_banks)),
            "rd_issued": Out(1),
            **command_signature(config),
        })

    def elaborate(self, platform):
        m = Module()
        c = self.config
        nb, bpr = c.n_banks, c.bursts_per_row
        bank_bits = (nb - 1).bit_length()
        col = Signal(range(bpr))               # burst of the next RD within the current row
        b_cur = Signal(range(nb))
        r_cur = Signal(range(c.rows))

        # ---- the scheduler's copy of the DRAM timing state ---------------------------------
        act_sat = max(c.t_ras, c.t_rcd)
        is_open = Array(Signal(name=f"open{b}") for b in range(nb))
        open_row = Array(Signal(range(c.rows), name=f"open_row{b}") for b in range(nb))
        since_act = Array(Signal(range(act_sat + 1), init=act_sat, name=f"since_act{b}")
                          for b in range(nb))
        since_pre = Array(Signal(range(c.t_rp + 1), init=c.t_rp, name=f"since_pre{b}")
                          for b in range(nb))
        since_rd = Signal(range(c.t_ccd + 1), init=c.t_ccd)
        since_any_pre = Signal(range(c.t_rp + 1), init=c.t_rp)
        rfc_left = Signal(range(c.t_rfc + 1))
        since_ref = Signal(range(c.t_refi + 1))
        for b in range(nb):
            with m.If(since_act[b] != act_sat):
                m.d.sync += since_act[b].eq(since_act[b] + 1)
            with m.If(since_pre[b] != c.t_rp):
                m.d.sync += since_pre[b].eq(since_pre[b] + 1)
        for sig, top in ((since_rd, c.t_ccd), (since_any_pre, c.t_rp), (since_ref, c.t_refi)):
            with m.If(sig != top):
                m.d.sync += sig.eq(sig + 1)
        with m.If(rfc_left != 0):
            m.d.sync += rfc_left.eq(rfc_left - 1)

        def issue(cmd, bank=0, row=0, col_=0):
            m.d.comb += [self.cmd.eq(cmd), self.cmd_bank.eq(bank), self.cmd_row.eq(row),
                         self.cmd_col.eq(col_)]

        def do_act(bank, row):
            issue(Cmd.ACT, bank, row)
            m.d.sync += [is_open[bank].eq(1), open_row[bank].eq(row), since_act[bank].eq(1)]

        def do_pre(bank):
            issue(Cmd.PRE, bank)
            m.d.sync += [is_open[bank].eq(0), since_pre[bank].eq(1), since_any_pre.eq(1)]

        def prepare(bank, row):
            """Conditions to precharge / activate ``bank`` so that ``row`` is open in it."""
            pre_ok, act_ok = Signal(), Signal()
            m.d.comb += [
                pre_ok.eq(is_open[bank] & (open_row[bank] != row) & (since_act[bank] >= c.t_ras)),
                act_ok.eq(~is_open[bank] & (since_pre[bank] >= c.t_rp) & (rfc_left == 0)),
            ]
            return pre_ok, act_ok

        # The row after the current one (next bank; the row advances when the bank wraps).
        b_nxt = Signal(range(nb))
        r_nxt = Signal(range(c.rows))
        m.d.comb += [b_nxt.eq(b_cur + 1 if nb > 1 else 0), r_nxt.eq(r_cur + (b_cur == nb - 1))]

        ref_due = Signal()
        cur_ready = Signal()
        rd_ok = Signal()
        m.d.comb += [
            ref_due.eq(since_ref == c.t_refi),
            cur_ready.eq(is_open[b_cur] & (open_row[b_cur] == r_cur)
                         & (since_act[b_cur] >= c.t_rcd)),
            rd_ok.eq(self.reading & ~ref_due & cur_ready & (since_rd >= c.t_ccd)
                     & (rfc_left == 0) & self.rd_allowed),
        ]
        cur_pre, cur_act = prepare(b_cur, r_cur)
        nxt_pre, nxt_act = prepare(b_nxt, r_nxt)
        nxt_wanted = Signal()
        m.d.comb += nxt_wanted.eq(self.reading & (b_nxt != b_cur))

        # Banks to close before a refresh: the lowest-numbered open one whose tRAS has passed.
        pre_for_ref = Signal()
        pre_bank = Signal(range(nb))
        for b in reversed(range(nb)):
            with m.If(is_open[b] & (since_act[b] >= c.t_ras)):
                m.d.comb += [pre_for_ref.eq(1), pre_bank.eq(b)]
        all_closed = Signal()
        m.d.comb += all_closed.eq(~_any(is_open[b] for b in range(nb)))

        with m.If(ref_due):
            with m.If(pre_for_ref):
                do_pre(pre_bank)
            with m.Elif(all_closed & (since_any_pre >= c.t_rp)):
                issue(Cmd.REF)
                m.d.sync += [rfc_left.eq(c.t_rfc - 1), since_ref.eq(1)]
        with m.Elif(rd_ok):
            issue(Cmd.RD, b_cur, r_cur, col)
            m.d.comb += self.rd_issued.eq(1)
            m.d.sync += since_rd.eq(1)
            with m.If(col == bpr - 1):
                m.d.sync += [col.eq(0), b_cur.eq(b_nxt), r_cur.eq(r_nxt)]
            with m.Else():
                m.d.sync += col.eq(col + 1)
        with m.Elif(self.reading & cur_pre):
            do_pre(b_cur)
        with m.Elif(self.reading & cur_act):
            do_act(b_cur, r_cur)
        with m.Elif(nxt_wanted & nxt_pre):
            do_pre(b_nxt)
        with m.Elif(nxt_wanted & nxt_act):
            do_act(b_nxt, r_nxt)

        # A new walk (the unit is idle then, so no RD moves the position in the same cycle).
        with m.If(self.load):
            m.d.sync += [
                col.eq(0),
                b_cur.eq(self.base_row[:bank_bits] if bank_bits else 0),
                r_cur.eq(self.base_row >> bank_bits),
            ]
        return m


def _any(values):
    result = 0
    for v in values:
        result = result | v
    return result
