"""LPDDR5 rank model that enforces timing: the weight store of the GEMV bank in simulation.

This is a **simulation model** of the DRAM side (it is synthesizable Amaranth, but it stands for
the DRAM array and the rank's command arbiter, not for logic that would be built in the PIM). The
synthesizable PIM logic is :class:`ahasd.hw.gemv.GEMV`, which drives one command port of this
model.

Two requesters share the rank's command bus through a **command arbiter**: the PIM unit (port
``cmd*``, read data on ``rd``) and a host read stream (port ``host_cmd*``, data on ``host_rd``;
the NPU streaming weights from other banks of the same rank). A requester presents a command
(anything but NOP) and learns in the same cycle whether it went out (``*_grant``) and what the
other requester issued (``*_peer``). Policy: a lone request is always granted; when both present
a command in the same cycle, a RD wins against any other command (that one fits in a free slot
before the next RD, which is tCCD later), and otherwise the one that lost the previous contested
cycle wins (round-robin, the PIM first after reset), so neither can starve. The arbiter does not look at timing: each
requester is responsible for the legality of its commands, given the peer's (that is what
``*_peer`` is for). A host port left undriven presents NOP, and the PIM has the rank alone.

Every command on the bus is checked against the timing of
:class:`ahasd.spec.dram.DRAMConfig`: today's rules (tRCD, tRP, tRAS, tCCD, open/closed bank,
address range), the activation limits tRRD and tFAW, all-bank refresh (REF: all banks closed, tRP
after the last PRE, tRFC) and LPDDR5 per-bank refresh (REFpb of a refresh pair, see the rule in
:mod:`ahasd.spec.dram`: both banks closed, tRP after their PRE, tRRD after an ACT, tpbR2pbR
after the previous REFpb, tpbR2ACT before the next ACT, no command to the pair for tRFCpb), and
the refresh deadline of every pair. A violation sets the sticky ``error`` output and records the
first violation in ``error_code``. Illegal commands are still carried out where that makes sense
(a read returns data) so that a test sees both the flag and what the controller did; tests assert
``error == 0``.
"""

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import enum, memory, stream, wiring
from amaranth.lib.wiring import Out

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.dram_port import Cmd, command_signature
from ahasd.spec.dram import DRAMConfig

__all__ = ["DRAMError", "DRAMBankModel", "REQUESTERS"]

#: Requester names, in arbitration order after reset; the port prefix of requester ``r`` is
#: ``""`` for the PIM and ``"host_"`` for the host.
REQUESTERS = ("pim", "host")


class DRAMError(enum.Enum, shape=5):
    """First timing violation seen by :class:`DRAMBankModel`."""
    NONE = 0
    ACT_OPEN = 1      # ACT to a bank that is already open
    ACT_TRP = 2       # ACT less than tRP after PRE
    RD_CLOSED = 3     # RD to a closed bank
    RD_TRCD = 4       # RD less than tRCD after ACT
    RD_TCCD = 5       # RD less than tCCD after the previous RD (any bank, any requester)
    PRE_TRAS = 6      # PRE less than tRAS after ACT
    REF_OPEN = 7      # REF (REFpb) while a bank (of the pair) is open
    REF_TRP = 8       # REF (REFpb) less than tRP after a PRE (of a bank of the pair)
    TRFC = 9          # any command during tRFC after REF, or to a bank of a pair in its tRFCpb
    REF_LATE = 10     # a refresh pair not refreshed within the refresh deadline
    BAD_ADDRESS = 11  # row or bank out of range
    ACT_TRRD = 12     # ACT less than tRRD after the previous ACT (any bank)
    ACT_TFAW = 13     # a fifth ACT less than tFAW after the fourth-last one
    ACT_PBR2ACT = 14  # ACT less than tpbR2ACT after a REFpb
    REF_PBR2PBR = 15  # REFpb less than tpbR2pbR after the previous REFpb
    REF_TRRD = 16     # REFpb less than tRRD after an ACT


class DRAMBankModel(wiring.Component):
    """``n_banks`` LPDDR5 banks of one rank behind a two-requester command arbiter, with timing
    checks and read data.

    Parameters
    ----------
    config : DRAMConfig
        Geometry and timing (``rows`` rows per bank are stored: keep it small in simulation).
    init : sequence of int
        Initial burst words, indexed by linear burst address
        ``((row * n_banks) + bank) * bursts_per_row + col`` (see
        :func:`ahasd.spec.dram.burst_address`); the rest is zero.

    Ports
    -----
    cmd, cmd_bank, cmd_row, cmd_col : in; cmd_grant, cmd_peer : out
        The PIM requester's command port (:func:`ahasd.hw.dram_port.command_signature`).
    host_cmd, host_cmd_bank, host_cmd_row, host_cmd_col : in; host_cmd_grant, host_cmd_peer : out
        The host requester's.
    rd, host_rd : Out(stream.Signature(8 * burst_bytes, always_ready=True))
        Read data of each requester, ``t_rl`` cycles after its RD.
    bus_cmd, bus_bank : out
        The command on the rank's bus in this cycle (after arbitration).
    error, error_code : out
        Sticky violation flag and the first :class:`DRAMError`.
    reads, host_reads : out
        RD commands of each requester (32-bit, wrap).
    refpb, refab : out
        REFpb and REF commands on the bus (32-bit, wrap).
    """

    def __init__(self, *, config=DRAMConfig(rows=16), init=()):
        with rejecting_construction(self):
            if not isinstance(config, DRAMConfig):
                raise ValueError(f"config must be a DRAMConfig, not {config!r}")
            depth = config.rows * config.n_banks * config.bursts_per_row
            init = list(init)
            if len(init) > depth:
                raise ValueError(f"init has {len(init)} bursts; the model stores {depth}")
        self.config = config
        self._init = init
        sig = {}
        for prefix in ("", "host_"):
            sig.update({prefix + name: member.flip()
                        for name, member in command_signature(config).items()})
        sig.update({
            "rd": Out(stream.Signature(8 * config.burst_bytes, always_ready=True)),
            "host_rd": Out(stream.Signature(8 * config.burst_bytes, always_ready=True)),
            "bus_cmd": Out(Cmd),
            "bus_bank": Out(range(config.n_banks)),
            "error": Out(1),
            "error_code": Out(DRAMError),
            "reads": Out(32),
            "host_reads": Out(32),
            "refpb": Out(32),
            "refab": Out(32),
        })
        super().__init__(sig)

    def elaborate(self, platform):
        m = Module()
        c = self.config
        nb, bpr, npairs = c.n_banks, c.bursts_per_row, c.refresh_pairs

        m.submodules.array = array = memory.Memory(
            shape=8 * c.burst_bytes, depth=c.rows * nb * bpr, init=self._init)
        rd = array.read_port()

        # ---- command arbiter --------------------------------------------------------------
        req_pim = self.cmd != Cmd.NOP
        req_host = self.host_cmd != Cmd.NOP
        host_first = Signal()          # the host wins the next contested cycle
        # A RD against another command wins (the other fits in the free slots before the next
        # RD, tCCD >= 2 later); otherwise round-robin.
        rd_pim = self.cmd == Cmd.RD
        rd_host = self.host_cmd == Cmd.RD
        pim_wins = Signal()
        m.d.comb += pim_wins.eq(Mux(rd_pim != rd_host, rd_pim, ~host_first))
        grant_pim, grant_host = Signal(), Signal()
        m.d.comb += [
            grant_pim.eq(req_pim & (~req_host | pim_wins)),
            grant_host.eq(req_host & (~req_pim | ~pim_wins)),
            self.cmd_grant.eq(grant_pim),
            self.host_cmd_grant.eq(grant_host),
            self.cmd_peer.eq(Mux(grant_host, self.host_cmd, Cmd.NOP)),
            self.host_cmd_peer.eq(Mux(grant_pim, self.cmd, Cmd.NOP)),
        ]
        with m.If(req_pim & req_host):
            m.d.sync += host_first.eq(~host_first)
        cmd = Signal(Cmd)
        bank = Signal(range(nb))
        row = Signal(range(c.rows))
        col = Signal(range(bpr))
        src = Signal()                 # 1: the bus command is the host's
        with m.If(grant_host):
            m.d.comb += [cmd.eq(self.host_cmd), bank.eq(self.host_cmd_bank),
                         row.eq(self.host_cmd_row), col.eq(self.host_cmd_col), src.eq(1)]
        with m.Else():
            m.d.comb += [cmd.eq(Mux(grant_pim, self.cmd, Cmd.NOP)), bank.eq(self.cmd_bank),
                         row.eq(self.cmd_row), col.eq(self.cmd_col)]
        m.d.comb += [self.bus_cmd.eq(cmd), self.bus_bank.eq(bank)]

        # ---- bank state and "cycles since" counters, saturating at the largest value any check
        # needs ---------------------------------------------------------------------------------
        is_open = Array(Signal(name=f"open{b}") for b in range(nb))
        open_row = Array(Signal(range(c.rows), name=f"open_row{b}") for b in range(nb))
        act_sat = max(c.t_ras, c.t_rcd)
        since_act = Array(Signal(range(act_sat + 1), name=f"since_act{b}", init=act_sat)
                          for b in range(nb))
        since_pre = Array(Signal(range(c.t_rp + 1), name=f"since_pre{b}", init=c.t_rp)
                          for b in range(nb))
        since_rd = Signal(range(c.t_ccd + 1), init=c.t_ccd)
        since_any_pre = Signal(range(c.t_rp + 1), init=c.t_rp)
        rfc_left = Signal(range(c.t_rfc + 1))
        # Ages of the last four ACTs (any bank): tRRD looks at the newest, tFAW at the oldest.
        faw_sat = max(c.t_faw, c.t_rrd)
        act_age = [Signal(range(faw_sat + 1), name=f"act_age{i}", init=faw_sat)
                   for i in range(4)]
        pb_sat = max(c.t_pbr2pbr, c.t_pbr2act)
        since_refpb = Signal(range(pb_sat + 1), init=pb_sat)
        pair_rfc = Array(Signal(range(c.t_rfcpb + 1), name=f"pair_rfc{p}") for p in range(npairs))
        pair_age = [Signal(range(c.refresh_deadline + 2), name=f"pair_age{p}")
                    for p in range(npairs)]
        pair_of = Array(Const(b % npairs, range(npairs)) for b in range(nb))
        # The other bank of each bank's refresh pair (itself when banks are refreshed alone).
        mate_of = Array(Const(c.refresh_group(b)[-1] if b < npairs else b % npairs, range(nb))
                        for b in range(nb))

        def saturating(sig, top):
            with m.If(sig != top):
                m.d.sync += sig.eq(sig + 1)

        for b in range(nb):
            saturating(since_act[b], act_sat)
            saturating(since_pre[b], c.t_rp)
        for sig, top in ((since_rd, c.t_ccd), (since_any_pre, c.t_rp), (since_refpb, pb_sat),
                         *((a, faw_sat) for a in act_age)):
            saturating(sig, top)
        with m.If(rfc_left != 0):
            m.d.sync += rfc_left.eq(rfc_left - 1)
        for p in range(npairs):
            with m.If(pair_rfc[p] != 0):
                m.d.sync += pair_rfc[p].eq(pair_rfc[p] - 1)
            saturating(pair_age[p], c.refresh_deadline + 1)

        # ---- checks ------------------------------------------------------------------------
        violation = Signal(DRAMError)
        any_open = Signal()
        m.d.comb += any_open.eq(_any(is_open[b] for b in range(nb)))
        pair = Signal(range(npairs))
        mate = Signal(range(nb))
        any_pair_rfc = Signal()
        m.d.comb += [pair.eq(pair_of[bank]), mate.eq(mate_of[bank]),
                     any_pair_rfc.eq(_any(pair_rfc[p] != 0 for p in range(npairs)))]
        late = _any(age > c.refresh_deadline for age in pair_age)

        with m.If(late):
            m.d.comb += violation.eq(DRAMError.REF_LATE)
        with m.Elif((cmd != Cmd.NOP) & (cmd != Cmd.REF)
                    & ((bank >= nb) | (((cmd == Cmd.ACT) | (cmd == Cmd.RD)) & (row >= c.rows)))):
            m.d.comb += violation.eq(DRAMError.BAD_ADDRESS)
        with m.Elif((cmd != Cmd.NOP) & (rfc_left != 0)):
            m.d.comb += violation.eq(DRAMError.TRFC)
        with m.Elif((cmd != Cmd.NOP) & (cmd != Cmd.REF) & (pair_rfc[pair] != 0)):
            m.d.comb += violation.eq(DRAMError.TRFC)
        with m.Elif((cmd == Cmd.REF) & any_pair_rfc):
            m.d.comb += violation.eq(DRAMError.TRFC)
        with m.Else():
            with m.Switch(cmd):
                with m.Case(Cmd.ACT):
                    with m.If(is_open[bank]):
                        m.d.comb += violation.eq(DRAMError.ACT_OPEN)
                    with m.Elif(since_pre[bank] < c.t_rp):
                        m.d.comb += violation.eq(DRAMError.ACT_TRP)
                    with m.Elif(act_age[0] < c.t_rrd):
                        m.d.comb += violation.eq(DRAMError.ACT_TRRD)
                    with m.Elif(act_age[3] < c.t_faw):
                        m.d.comb += violation.eq(DRAMError.ACT_TFAW)
                    with m.Elif(since_refpb < c.t_pbr2act):
                        m.d.comb += violation.eq(DRAMError.ACT_PBR2ACT)
                with m.Case(Cmd.RD):
                    with m.If(~is_open[bank]):
                        m.d.comb += violation.eq(DRAMError.RD_CLOSED)
                    with m.Elif(since_act[bank] < c.t_rcd):
                        m.d.comb += violation.eq(DRAMError.RD_TRCD)
                    with m.Elif(since_rd < c.t_ccd):
                        m.d.comb += violation.eq(DRAMError.RD_TCCD)
                with m.Case(Cmd.PRE):
                    with m.If(is_open[bank] & (since_act[bank] < c.t_ras)):
                        m.d.comb += violation.eq(DRAMError.PRE_TRAS)
                with m.Case(Cmd.REF):
                    with m.If(any_open):
                        m.d.comb += violation.eq(DRAMError.REF_OPEN)
                    with m.Elif(since_any_pre < c.t_rp):
                        m.d.comb += violation.eq(DRAMError.REF_TRP)
                with m.Case(Cmd.REFPB):
                    with m.If(is_open[bank] | is_open[mate]):
                        m.d.comb += violation.eq(DRAMError.REF_OPEN)
                    with m.Elif((since_pre[bank] < c.t_rp) | (since_pre[mate] < c.t_rp)):
                        m.d.comb += violation.eq(DRAMError.REF_TRP)
                    with m.Elif(since_refpb < c.t_pbr2pbr):
                        m.d.comb += violation.eq(DRAMError.REF_PBR2PBR)
                    with m.Elif(act_age[0] < c.t_rrd):
                        m.d.comb += violation.eq(DRAMError.REF_TRRD)
        with m.If((violation != DRAMError.NONE) & ~self.error):
            m.d.sync += [self.error.eq(1), self.error_code.eq(violation)]

        # ---- effects -----------------------------------------------------------------------
        with m.Switch(cmd):
            with m.Case(Cmd.ACT):
                m.d.sync += [is_open[bank].eq(1), open_row[bank].eq(row), since_act[bank].eq(1),
                             act_age[0].eq(1)]
                m.d.sync += [act_age[i].eq(act_age[i - 1] + (act_age[i - 1] != faw_sat))
                             for i in range(1, 4)]
            with m.Case(Cmd.RD):
                m.d.sync += since_rd.eq(1)
                with m.If(src):
                    m.d.sync += self.host_reads.eq(self.host_reads + 1)
                with m.Else():
                    m.d.sync += self.reads.eq(self.reads + 1)
            with m.Case(Cmd.PRE):
                with m.If(is_open[bank]):
                    m.d.sync += [is_open[bank].eq(0), since_pre[bank].eq(1),
                                 since_any_pre.eq(1)]
            with m.Case(Cmd.REF):
                m.d.sync += [rfc_left.eq(c.t_rfc - 1), self.refab.eq(self.refab + 1)]
                m.d.sync += [age.eq(1) for age in pair_age]
            with m.Case(Cmd.REFPB):
                m.d.sync += [pair_rfc[pair].eq(c.t_rfcpb - 1), since_refpb.eq(1),
                             self.refpb.eq(self.refpb + 1)]
                for p in range(npairs):
                    with m.If(pair == p):
                        m.d.sync += pair_age[p].eq(1)

        # Read pipeline: the array is read t_rl - 1 cycles after the RD (its port adds one more).
        issue = Signal()
        addr = Signal(range(c.rows * nb * bpr))
        m.d.comb += [
            issue.eq(cmd == Cmd.RD),
            addr.eq(((open_row[bank] * nb) + bank) * bpr + col),
        ]
        valid_line = [issue]
        src_line = [src]
        addr_line = [addr]
        for i in range(c.t_rl - 1):
            v = Signal(name=f"rd_pipe_valid{i}")
            s = Signal(name=f"rd_pipe_src{i}")
            a = Signal.like(addr, name=f"rd_pipe_addr{i}")
            m.d.sync += [v.eq(valid_line[-1]), s.eq(src_line[-1]), a.eq(addr_line[-1])]
            valid_line.append(v)
            src_line.append(s)
            addr_line.append(a)
        m.d.comb += [rd.addr.eq(addr_line[-1]), rd.en.eq(valid_line[-1])]
        m.d.sync += [self.rd.valid.eq(valid_line[-1] & ~src_line[-1]),
                     self.host_rd.valid.eq(valid_line[-1] & src_line[-1])]
        m.d.comb += [self.rd.payload.eq(rd.data), self.host_rd.payload.eq(rd.data)]
        return m


def _any(values):
    result = Const(0)
    for v in values:
        result = result | v
    return result
