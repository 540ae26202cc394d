"""The DRAM command port between a unit's read scheduler and the DRAM array, and that scheduler.

:class:`ReadScheduler` drives it for the GEMV bank (:class:`ahasd.hw.gemv.GEMV`) and the
state-commit unit (:class:`ahasd.hw.state_commit.StateCommit`); in simulation the array is
:class:`ahasd.tb.dram_bank.DRAMBankModel`.
"""

import math

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import enum, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.spec.params import check_int

__all__ = ["Cmd", "command_signature", "connect_command", "ReadScheduler"]


class Cmd(enum.Enum, shape=3):
    """DRAM commands (one per cycle on the command bus)."""
    NOP = 0
    ACT = 1   # open row `row` in bank `bank`
    RD = 2    # read burst `col` of the open row of `bank`
    PRE = 3   # close bank `bank` (a PRE to a closed bank is a no-op, as in JEDEC)
    REF = 4   # all-bank refresh; every bank must be closed
    REFPB = 5  # per-bank refresh of the refresh pair of `bank` (DRAMConfig.refresh_group)


def command_signature(config):
    """Members of the DRAM command port (controller side).

    ``cmd``, ``cmd_bank``, ``cmd_row``, ``cmd_col`` (out) carry the command. ``cmd_grant`` (in,
    1 when left undriven) says the command goes out in this cycle; a controller updates its state
    only then, and presents a command again (the same or another) otherwise. ``cmd_peer`` (in,
    NOP when undriven) is the command another requester of the same rank issued in this cycle,
    which the controller needs for the rank-wide rules (tCCD, tRRD, tFAW, tpbR2pbR, tpbR2ACT).
    """
    return {
        "cmd": Out(Cmd),
        "cmd_bank": Out(range(config.n_banks)),
        "cmd_row": Out(range(config.rows)),
        "cmd_col": Out(range(config.bursts_per_row)),
        "cmd_grant": In(1, init=1),
        "cmd_peer": In(Cmd),
    }


def connect_command(m, controller, dram, prefix=""):
    """Join ``controller``'s command port to the port ``prefix + "cmd..."`` of ``dram`` (a
    :class:`ahasd.tb.dram_bank.DRAMBankModel`), or forward it when ``dram`` is an enclosing
    component that exposes the same port (``prefix`` empty)."""
    for name, member in command_signature(controller.config).items():
        ours, theirs = getattr(controller, name), getattr(dram, prefix + name)
        if member.flow == wiring.Out:
            m.d.comb += theirs.eq(ours)
        else:
            m.d.comb += ours.eq(theirs)


class ReadScheduler(wiring.Component):
    """Open-page read scheduler of one DRAM rank: walks bursts in address order (column, then
    bank, then row) over its banks and issues ACT / RD / PRE / REF(PB) on the command port within
    the timing of :class:`ahasd.spec.dram.DRAMConfig`, keeping its own copy of the timing
    state (of its banks, and of the rank from its own and its peer's commands). Shared by the
    GEMV bank and the state-commit unit, and the host read stream of the contention harness.

    Refresh, ``config.refresh == "per_bank"``: each of the scheduler's refresh pairs (see
    :mod:`ahasd.spec.dram`) has an age counter. A pair is refreshed (its open banks
    precharged, then a REFpb) while the others stream, when it is not *in use* (one of its banks
    is the current bank of the walk or one of the ``lookahead`` banks after it) and its age has
    reached ``due``, or reached ``early`` while one of its banks is next to come into use (so
    that it is not caught in use when due) or while the unit is not reading (a walk that starts
    on a pair cannot have seen it coming). A pair whose age reaches ``urgent`` is refreshed even
    in use: reads stop until it is refreshed and re-activated (a safety net; the benchmark never
    needs it). ``urgent = t_refi - n_pairs * t_pbr2pbr`` leaves room for every pair of the rank
    to queue before the deadline (:meth:`_thresholds`; the defaults give ``urgent`` 2544,
    ``due`` 2400 and ``early`` 2400 minus ``lookahead + 2`` row times: a pair is refreshed more
    often than once per tREFI, which costs no read slot). ``"all_bank"``: every ``t_refi`` reads stop, open banks are
    precharged and an all-bank REF is issued (the scheduler must then have the rank alone).

    Per cycle, in priority order: urgent refresh work; a RD of the current burst when the unit
    is ``reading``, the row is open past tRCD, tCCD has passed and the unit's own condition
    ``rd_allowed`` holds; precharge or activate the current bank for its row; other refresh work;
    prepare the next bank ahead of time. A command takes effect only when ``cmd_grant`` is high.

    Parameters
    ----------
    config : DRAMConfig
        Geometry, timing and refresh mode.
    banks : sequence of int, optional
        The rank's banks this scheduler owns, in walk order (default: all). Their number is a
        power of two; in per-bank mode bank ``i + n/2`` must be the refresh mate of bank ``i``
        (so that the scheduler owns whole pairs), e.g. ``(0, 1, 2, 3, 8, 9, 10, 11)`` of 16.
    row_cycles : int, optional
        Expected cycles to stream one row, for the refresh thresholds (default: at the full rate,
        ``bursts_per_row * t_ccd``; twice that when another requester shares the bus).

    Ports
    -----
    reading, rd_allowed : In(1)
        The unit has reads left; its extra condition for a RD (room for the data, say).
    load, base_row : In
        ``load`` restarts the walk at burst 0 of ``base_row`` (index into ``banks`` in the low
        bits, row above).
    rd_issued : Out(1)
        A RD goes out in this cycle (granted).
    cmd, cmd_bank, cmd_row, cmd_col, cmd_grant, cmd_peer
        The command port (:func:`command_signature`).
    """

    def __init__(self, config, *, banks=None, row_cycles=None):
        with rejecting_construction(self):
            banks = self.check_config(config, banks)
            if row_cycles is not None:
                check_int("row_cycles", row_cycles, config.bursts_per_row * config.t_ccd,
                          note="at least bursts_per_row * t_ccd")
        self.config = config
        self.banks = banks
        self.thresholds = self._thresholds(config, len(banks), row_cycles)
        super().__init__({
            "reading": In(1), "rd_allowed": In(1),
            "load": In(1), "base_row": In(range(config.rows * config.n_banks)),
            "rd_issued": Out(1),
            **command_signature(config),
        })

    @classmethod
    def check_config(cls, config, banks=None):
        """Validate ``config`` (and ``banks``) for a scheduler; return ``banks`` as a tuple.
        Units that build a scheduler call it in their constructors."""
        banks = tuple(range(config.n_banks)) if banks is None else tuple(banks)
        n = len(banks)
        if n == 0 or n & (n - 1):
            raise ValueError(f"banks must be a power-of-two number of banks, not {banks!r}")
        if (len(set(banks)) != n
                or any(not isinstance(b, int) or not 0 <= b < config.n_banks for b in banks)):
            raise ValueError(f"banks must be distinct banks in 0..{config.n_banks - 1}, "
                             f"not {banks!r}")
        if config.refresh == "per_bank":
            pairs = config.refresh_pairs
            if config.n_banks % 2 == 0 and (n < 2 or any(
                    banks[i + n // 2] != banks[i] + pairs or banks[i] >= pairs
                    for i in range(n // 2))):
                raise ValueError(f"banks must hold whole refresh pairs, bank i + {n // 2} "
                                 f"the mate (+{pairs}) of bank i, not {banks!r}")
            if cls._thresholds(config, n)["urgent"] < 1:
                raise ValueError(f"t_refi must exceed n_pairs * t_pbr2pbr = "
                                 f"{config.refresh_pairs * config.t_pbr2pbr} for per-bank "
                                 f"refresh, not {config.t_refi}")
        return banks

    @staticmethod
    def _thresholds(c, n_own, row_cycles=None):
        """Per-bank refresh: ``lookahead`` (banks after the current one kept out of refresh, so
        that a refresh ends before its bank is activated) and the age thresholds: ``urgent``
        guarantees the deadline (every pair of the rank may queue behind tpbR2pbR); ``due`` and
        ``early`` are two tpbR2pbR earlier, ``early`` also by the time a pair stays in use and
        the row before (so that a pair coming into use is not caught there when due)."""
        row_time = row_cycles or c.bursts_per_row * c.t_ccd
        lookahead = 1 + max(0, math.ceil((c.t_rfcpb + c.t_rcd + 2 - row_time) / row_time))
        urgent = c.t_refi - c.refresh_pairs * c.t_pbr2pbr
        due = max(1, urgent - 2 * c.t_pbr2pbr)
        early = max(1, due - (lookahead + 2) * row_time)
        return {"lookahead": lookahead, "urgent": urgent, "due": min(due, urgent),
                "early": min(early, due, urgent)}

    def elaborate(self, platform):
        m = Module()
        c = self.config
        nb = len(self.banks)                   # banks of this scheduler (local index 0..nb-1)
        bpr = c.bursts_per_row
        bank_bits = (nb - 1).bit_length()
        per_bank = c.refresh == "per_bank"
        col = Signal(range(bpr))               # burst of the next RD within the current row
        b_cur = Signal(range(nb))              # local bank of the current row
        r_cur = Signal(range(c.rows))
        phys = Array(Const(b, range(c.n_banks)) for b in self.banks)
        granted = self.cmd_grant

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
        faw_sat = max(c.t_faw, c.t_rrd)
        act_age = [Signal(range(faw_sat + 1), init=faw_sat, name=f"act_age{i}") for i in range(4)]
        pb_sat = max(c.t_pbr2pbr, c.t_pbr2act)
        since_refpb = Signal(range(pb_sat + 1), init=pb_sat)
        rfc_left = Signal(range(c.t_rfc + 1))
        since_ref = Signal(range(c.t_refi + 1))

        # Every timing rule is a flag ``counter >= t`` (or ``counter == 0``) kept as a register
        # beside its counter and set from the counter's next value (``restart`` where a command
        # restarts the counter), so that no compare sits on the command choice.
        def saturating(sig, top, *thresholds):
            """Count ``sig`` up to ``top``; return its flags ``sig >= t``."""
            flags = [Signal(name=f"{sig.name}_ge{t}", init=int(sig.init >= t))
                     for t in thresholds]
            with m.If(sig != top):
                m.d.sync += [sig.eq(sig + 1), *(f.eq(sig >= t - 1)
                                                for f, t in zip(flags, thresholds))]
            return flags

        def restart(sig, flags, thresholds):
            m.d.sync += [sig.eq(1), *(f.eq(int(1 >= t)) for f, t in zip(flags, thresholds))]

        def count_down(sig, idle):
            """Count ``sig`` down to 0; ``idle`` is the flag ``sig == 0``."""
            with m.If(sig != 0):
                m.d.sync += [sig.eq(sig - 1), idle.eq(sig == 1)]

        def restart_down(sig, idle, value):
            m.d.sync += [sig.eq(value), idle.eq(int(value == 0))]

        act_flags = [saturating(since_act[b], act_sat, c.t_ras, c.t_rcd) for b in range(nb)]
        ras_ok = Array(f[0] for f in act_flags)
        rcd_ok = Array(f[1] for f in act_flags)
        rp_ok = Array(saturating(since_pre[b], c.t_rp, c.t_rp)[0] for b in range(nb))
        (ccd_ok,) = saturating(since_rd, c.t_ccd, c.t_ccd)
        (any_rp_ok,) = saturating(since_any_pre, c.t_rp, c.t_rp)
        (refi_over,) = saturating(since_ref, c.t_refi, c.t_refi)
        pbr2act_ok, pbr2pbr_ok = saturating(since_refpb, pb_sat, c.t_pbr2act, c.t_pbr2pbr)
        (rrd_ok,) = saturating(act_age[0], faw_sat, c.t_rrd)
        for a in act_age[1:3]:
            saturating(a, faw_sat)
        (faw_ok,) = saturating(act_age[3], faw_sat, c.t_faw)
        rfc_idle = Signal(init=1)
        count_down(rfc_left, rfc_idle)

        # Rank-wide rules follow every command on the bus: ours when granted, else the peer's.
        # Ours is known from one-hot flags set where a command is chosen (`issue`), not decoded
        # back from `cmd`: the decode would sit behind the whole command choice.
        ours = {cmd: Signal(name=f"ours_{cmd.name.lower()}") for cmd in Cmd if cmd != Cmd.NOP}
        ours_any = Signal()
        m.d.comb += ours_any.eq(_any(ours.values()))
        on_bus = {cmd: Signal(name=f"bus_{cmd.name.lower()}") for cmd in (Cmd.RD, Cmd.ACT, Cmd.REFPB)}
        for cmd, sig in on_bus.items():
            m.d.comb += sig.eq(Mux(granted & ours_any, ours[cmd], self.cmd_peer == cmd))
        with m.If(on_bus[Cmd.RD]):
            restart(since_rd, [ccd_ok], [c.t_ccd])
        with m.If(on_bus[Cmd.ACT]):
            restart(act_age[0], [rrd_ok], [c.t_rrd])
            m.d.sync += [act_age[i].eq(act_age[i - 1] + (act_age[i - 1] != faw_sat))
                         for i in range(1, 4)]
            m.d.sync += faw_ok.eq(act_age[2] >= c.t_faw - 1)
        with m.If(on_bus[Cmd.REFPB]):
            restart(since_refpb, [pbr2act_ok, pbr2pbr_ok], [c.t_pbr2act, c.t_pbr2pbr])

        # ---- refresh pairs (local: pair j = banks j and j + half) ---------------------------
        paired = c.n_banks % 2 == 0 and nb > 1
        half = nb // 2 if paired else nb
        npairs = half if per_bank else 1
        th = self.thresholds
        pair_rfc = [Signal(range(c.t_rfcpb + 1), name=f"pair_rfc{j}") for j in range(npairs)]
        pair_idle = [Signal(name=f"pair_idle{j}", init=1) for j in range(npairs)]
        # Ages start staggered, so that the pairs fall due one after the other.
        age_top = c.refresh_deadline + 1
        pair_age = [Signal(range(age_top + 1), name=f"pair_age{j}",
                           init=min(age_top, j * (th["due"] // npairs))) for j in range(npairs)]
        # ``age_at[name][j]`` is ``pair_age[j] >= th[name]``, kept as a register beside the age
        # (set from the age's next value), so that no comparison sits on the refresh choice.
        age_at = {name: [Signal(name=f"age_{name}{j}", init=int(a.init >= th[name]))
                         for j, a in enumerate(pair_age)] for name in ("urgent", "due", "early")}
        urgent = Array(age_at["urgent"])
        if per_bank:
            for j in range(npairs):
                count_down(pair_rfc[j], pair_idle[j])
                saturating(pair_age[j], age_top)
                with m.If(pair_age[j] != age_top):
                    m.d.sync += [age_at[name][j].eq(pair_age[j] >= th[name] - 1)
                                 for name in age_at]

        pair_bits = (half - 1).bit_length()

        def pair_of(bank):
            """Local refresh pair of local ``bank`` (``bank mod half`` when paired)."""
            if not paired:
                return bank
            return bank[:pair_bits] if pair_bits else 0

        def issue(cmd, bank=0, row=0, col_=0, *, physical=None):
            m.d.comb += [self.cmd.eq(cmd), ours[cmd].eq(1),
                         self.cmd_bank.eq(phys[bank] if physical is None else physical),
                         self.cmd_row.eq(row), self.cmd_col.eq(col_)]

        def do_act(bank, row, hit_sets):
            issue(Cmd.ACT, bank, row)
            with m.If(granted):
                m.d.sync += [*hit_sets, is_open[bank].eq(1), open_row[bank].eq(row), since_act[bank].eq(1),
                             ras_ok[bank].eq(int(1 >= c.t_ras)),
                             rcd_ok[bank].eq(int(1 >= c.t_rcd))]

        def do_pre(bank):
            issue(Cmd.PRE, bank)
            with m.If(granted):
                m.d.sync += [is_open[bank].eq(0), since_pre[bank].eq(1),
                             rp_ok[bank].eq(int(1 >= c.t_rp))]
                restart(since_any_pre, [any_rp_ok], [c.t_rp])

        act_rank_ok = Signal()
        m.d.comb += act_rank_ok.eq(rrd_ok & faw_ok & pbr2act_ok & rfc_idle)

        def prepare(bank, row, hit):
            """Conditions to precharge / activate ``bank`` so that ``row`` is open in it."""
            pre_ok, act_ok = Signal(), Signal()
            bank_free = Signal()
            if per_bank:
                pair = Signal(range(npairs))
                m.d.comb += [pair.eq(pair_of(bank)),
                             bank_free.eq(Array(pair_idle)[pair] & ~urgent[pair])]
            else:
                m.d.comb += bank_free.eq(1)
            m.d.comb += [
                pre_ok.eq(is_open[bank] & ~hit & ras_ok[bank]),
                act_ok.eq(~is_open[bank] & rp_ok[bank] & act_rank_ok & bank_free),
            ]
            return pre_ok, act_ok

        # The row after the current one (next bank; the row advances when the bank wraps),
        # registers set with the current one (no carry chain on the command choice).
        b_nxt = Signal(range(nb), init=1 % nb)
        r_nxt = Signal(range(c.rows), init=int(nb == 1) % c.rows)
        base_bank = Signal(range(nb))
        base_r = Signal(range(c.rows))
        m.d.comb += [base_bank.eq(self.base_row[:bank_bits] if bank_bits else 0),
                     base_r.eq(self.base_row >> bank_bits)]
        # ``open_row[b_cur] == r_cur`` and ``open_row[b_nxt] == r_nxt``, registers too: set
        # from the next position at a row's last RD (no ACT in that cycle) and at ``load`` (no
        # ACT either: the unit is not reading then), and by the ACT of either row.
        cur_hit = Signal(init=1)                 # (every open_row starts at row 0)
        nxt_hit = Signal(init=int(nb > 1 or c.rows == 1))
        b_nxt2 = Signal(range(nb))
        r_nxt2 = Signal(range(c.rows))
        base_b1 = Signal(range(nb))
        base_r1 = Signal(range(c.rows))
        m.d.comb += [b_nxt2.eq(b_nxt + 1), r_nxt2.eq(r_nxt + (b_nxt == nb - 1)),
                     base_b1.eq(base_bank + 1), base_r1.eq(base_r + (base_bank == nb - 1))]
        row_end_sets = [b_nxt.eq(b_nxt2), r_nxt.eq(r_nxt2),
                        cur_hit.eq(nxt_hit), nxt_hit.eq(open_row[b_nxt2] == r_nxt2)]
        load_sets = [b_nxt.eq(base_b1), r_nxt.eq(base_r1),
                     cur_hit.eq(open_row[base_bank] == base_r),
                     nxt_hit.eq(open_row[base_b1] == base_r1)]
        # (with one bank the next row is in the current bank: an ACT of one row is a miss
        # of the other)
        cur_act_sets = [cur_hit.eq(1), *([nxt_hit.eq(r_nxt == r_cur)] if nb == 1 else [])]
        nxt_act_sets = [nxt_hit.eq(1), *([cur_hit.eq(r_cur == r_nxt)] if nb == 1 else [])]

        cur_ready = Signal()
        rd_ok = Signal()
        m.d.comb += [
            cur_ready.eq(is_open[b_cur] & cur_hit
                         & rcd_ok[b_cur]),
            rd_ok.eq(self.reading & cur_ready & ccd_ok & rfc_idle & self.rd_allowed),
        ]
        cur_pre, cur_act = prepare(b_cur, r_cur, cur_hit)
        nxt_pre, nxt_act = prepare(b_nxt, r_nxt, nxt_hit)
        nxt_wanted = Signal()
        m.d.comb += nxt_wanted.eq(self.reading & (b_nxt != b_cur))

        def do_rd():
            issue(Cmd.RD, b_cur, r_cur, col)
            m.d.comb += self.rd_issued.eq(granted)
            with m.If(granted):
                with m.If(col == bpr - 1):
                    m.d.sync += [col.eq(0), b_cur.eq(b_nxt), r_cur.eq(r_nxt), *row_end_sets]
                with m.Else():
                    m.d.sync += col.eq(col + 1)

        def walk():
            with m.If(self.reading & cur_pre):
                do_pre(b_cur)
            with m.Elif(self.reading & cur_act):
                do_act(b_cur, r_cur, cur_act_sets)
            with m.Elif(nxt_wanted & nxt_pre):
                do_pre(b_nxt)
            with m.Elif(nxt_wanted & nxt_act):
                do_act(b_nxt, r_nxt, nxt_act_sets)

        if not per_bank:
            # ---- all-bank refresh: stop, close every bank, REF ---------------------------------
            ref_due = refi_over
            pre_for_ref = Signal()
            pre_bank = Signal(range(nb))
            for b in reversed(range(nb)):
                with m.If(is_open[b] & ras_ok[b]):
                    m.d.comb += [pre_for_ref.eq(1), pre_bank.eq(b)]
            all_closed = Signal()
            m.d.comb += all_closed.eq(~_any(is_open[b] for b in range(nb)))
            with m.If(ref_due):
                with m.If(pre_for_ref):
                    do_pre(pre_bank)
                with m.Elif(all_closed & any_rp_ok):
                    issue(Cmd.REF)
                    with m.If(granted):
                        restart_down(rfc_left, rfc_idle, c.t_rfc - 1)
                        restart(since_ref, [refi_over], [c.t_refi])
            with m.Elif(rd_ok):
                do_rd()
            with m.Else():
                walk()
        else:
            # ---- per-bank refresh: pick a pair, close its banks, REFpb ---------------------------
            members = [(j, j + half) if paired else (j,) for j in range(npairs)]

            def window(bank):
                """Per pair: one of its banks is within ``lookahead`` banks after ``bank`` in
                walk order (in use while reading), or exactly ``lookahead + 1`` after (next to
                come into use)."""
                dist = [(b - bank)[:bank_bits] if bank_bits else Const(0) for b in range(nb)]
                return ([_any(dist[b] <= th["lookahead"] for b in g) for g in members],
                        [_any(dist[b] == th["lookahead"] + 1 for b in g) for g in members])

            # The window of the current bank, kept as registers (set from the next bank at a
            # row's last RD, from ``base_row`` at ``load``), so that no subtraction or compare
            # sits on the refresh choice.
            def _window_init(g):
                d = [b % nb for b in g]
                return (int(any(x <= th["lookahead"] for x in d)),
                        int(any(x == th["lookahead"] + 1 for x in d)))
            near = [Signal(name=f"near{j}", init=_window_init(g)[0]) for j, g in enumerate(members)]
            ahead = [Signal(name=f"ahead{j}", init=_window_init(g)[1])
                     for j, g in enumerate(members)]
            for regs, vals in zip((near, ahead), window(b_nxt)):
                row_end_sets.extend(r.eq(v) for r, v in zip(regs, vals))
            for regs, vals in zip((near, ahead), window(base_bank)):
                load_sets.extend(r.eq(v) for r, v in zip(regs, vals))
            want = []
            for j in range(npairs):
                blocked = self.reading & near[j]
                coming = self.reading & ahead[j]
                w = Signal(name=f"want{j}")
                # While the unit is idle (loading, say) every pair is refreshed from `early`
                # on: a walk that starts on a pair cannot have seen it coming.
                m.d.comb += w.eq(urgent[j] | (~blocked & (
                    age_at["due"][j] | ((coming | ~self.reading) & age_at["early"][j]))))
                want.append(w)
            # The selected pair, one-hot: the lowest wanting pair, among the urgent ones if any
            # (an urgent pair always wants, so the selection is urgent exactly when one is).
            any_urgent = Signal()
            m.d.comb += any_urgent.eq(_any(urgent[j] for j in range(npairs)))
            cand = [Signal(name=f"cand{j}") for j in range(npairs)]
            chosen = [Signal(name=f"chosen{j}") for j in range(npairs)]
            for j in range(npairs):
                m.d.comb += [cand[j].eq(want[j] & (urgent[j] | ~any_urgent)),
                             chosen[j].eq(cand[j] & ~_any(cand[:j]))]
            sel_valid = Signal()
            sel_urgent = Signal()
            m.d.comb += [sel_valid.eq(_any(cand)), sel_urgent.eq(any_urgent)]
            # Refresh work of each pair (constant indices), then that of the selected one.
            pre_j, pre_bank_j, go_j = [], [], []
            for j, group in enumerate(members):
                p_ok, p_bank, go = (Signal(name=f"ref_pre{j}"), Signal(range(nb), name=f"ref_pre_bank{j}"),
                                    Signal(name=f"ref_go{j}"))
                with m.If(is_open[group[0]]):
                    m.d.comb += [p_ok.eq(ras_ok[group[0]]), p_bank.eq(group[0])]
                with m.Elif(is_open[group[-1]]):
                    m.d.comb += [p_ok.eq(ras_ok[group[-1]]), p_bank.eq(group[-1])]
                with m.Else():
                    m.d.comb += go.eq(_all(rp_ok[b] for b in group) & pair_idle[j])
                pre_j.append(p_ok)
                pre_bank_j.append(p_bank)
                go_j.append(go)
            ref_pre = Signal()        # close a bank of the selected pair
            ref_pre_bank = Signal(range(nb))
            ref_go = Signal()         # issue the REFpb
            ref_bank = Signal(range(c.n_banks))   # physical bank of the REFpb
            m.d.comb += [
                ref_pre.eq(_any(chosen[j] & pre_j[j] for j in range(npairs))),
                ref_pre_bank.eq(_any(Mux(chosen[j], pre_bank_j[j], 0) for j in range(npairs))),
                ref_go.eq(_any(chosen[j] & go_j[j] for j in range(npairs)) & pbr2pbr_ok
                          & rrd_ok),
                ref_bank.eq(_any(Mux(chosen[j], self.banks[g[0]], 0)
                                 for j, g in enumerate(members))),
            ]

            def refresh_work():
                with m.If(ref_pre):
                    do_pre(ref_pre_bank)
                with m.Else():
                    issue(Cmd.REFPB, physical=ref_bank)
                    with m.If(granted):
                        for j in range(npairs):
                            with m.If(chosen[j]):
                                restart_down(pair_rfc[j], pair_idle[j], c.t_rfcpb - 1)
                                m.d.sync += pair_age[j].eq(1)
                                m.d.sync += [age_at[name][j].eq(int(1 >= th[name]))
                                             for name in age_at]

            work = Signal()
            m.d.comb += work.eq(sel_valid & (ref_pre | ref_go))
            with m.If(work & sel_urgent):
                refresh_work()
            with m.Elif(rd_ok):
                do_rd()
            with m.Elif(self.reading & (cur_pre | cur_act)):
                walk()
            with m.Elif(work):
                refresh_work()
            with m.Else():
                walk()

        # A new walk (the unit is idle then, so no RD moves the position in the same cycle).
        with m.If(self.load):
            m.d.sync += [col.eq(0), b_cur.eq(base_bank), r_cur.eq(base_r), *load_sets]
        return m


def _any(values):
    result = Const(0)
    for v in values:
        result = result | v
    return result


def _all(values):
    result = Const(1)
    for v in values:
        result = result & v
    return result
