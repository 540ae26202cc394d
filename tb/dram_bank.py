"""LPDDR5 bank model that enforces timing: the weight store of the GEMV bank in simulation.

This is a **simulation model** of the DRAM side (it is synthesizable Amaranth, but it stands for
the DRAM array, not for logic that would be built). The synthesizable PIM logic is
:class:`ahasd.hw.gemv.GEMV`, which drives the command port of this model.

Every command is checked against the timing of :class:`ahasd.spec.dram.DRAMConfig`; a violation sets
the sticky ``error`` output and records the first violation in ``error_code``. Illegal commands
are still carried out where that makes sense (a read returns data) so that a test sees both the
flag and what the controller did; tests assert ``error == 0``.
"""

from amaranth.hdl import Array, Const, Module, Signal
from amaranth.lib import enum, memory, stream, wiring
from amaranth.lib.wiring import Out

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.dram_port import Cmd, command_signature
from ahasd.spec.dram import DRAMConfig

__all__ = ["DRAMError", "DRAMBankModel"]


class DRAMError(enum.Enum, shape=4):
    """First timing violation seen by :class:`DRAMBankModel`."""
    NONE = 0
    ACT_OPEN = 1      # ACT to a bank that is already open
    ACT_TRP = 2       # ACT less than tRP after PRE
    RD_CLOSED = 3     # RD to a closed bank
    RD_TRCD = 4       # RD less than tRCD after ACT
    RD_TCCD = 5       # RD less than tCCD after the previous RD
    PRE_TRAS = 6      # PRE less than tRAS after ACT
    REF_OPEN = 7      # REF while a bank is open
    REF_TRP = 8       # REF less than tRP after a PRE
    TRFC = 9          # any command during tRFC after REF
    REF_LATE = 10     # no REF within the refresh deadline
    BAD_ADDRESS = 11  # row or bank out of range


class DRAMBankModel(wiring.Component):
    """``n_banks`` LPDDR5 banks behind one command bus, with timing checks and read data.

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
    cmd, cmd_bank, cmd_row, cmd_col : in
        Command bus.
    rd : Out(stream.Signature(8 * burst_bytes, always_ready=True))
        Read data, ``t_rl`` cycles after the RD.
    error, error_code : out
        Sticky violation flag and the first :class:`DRAMError`.
    reads : out
        Number of RD commands accepted (32-bit, wraps).
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
        sig = {name: member.flip() for name, member in command_signature(config).items()}
        sig.update({
            "rd": Out(stream.Signature(8 * config.burst_bytes, always_ready=True)),
            "error": Out(1),
            "error_code": Out(DRAMError),
            "reads": Out(32),
        })
        super().__init__(sig)

    def elaborate(self, platform):
        m = Module()
        c = self.config
        nb, bpr = c.n_banks, c.bursts_per_row

        m.submodules.array = array = memory.Memory(
            shape=8 * c.burst_bytes, depth=c.rows * nb * bpr, init=self._init)
        rd = array.read_port()

        # Bank state and "cycles since" counters, saturating at the largest value any check needs.
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
        since_ref = Signal(range(c.refresh_deadline + 2))

        for b in range(nb):
            with m.If(since_act[b] != act_sat):
                m.d.sync += since_act[b].eq(since_act[b] + 1)
            with m.If(since_pre[b] != c.t_rp):
                m.d.sync += since_pre[b].eq(since_pre[b] + 1)
        with m.If(since_rd != c.t_ccd):
            m.d.sync += since_rd.eq(since_rd + 1)
        with m.If(since_any_pre != c.t_rp):
            m.d.sync += since_any_pre.eq(since_any_pre + 1)
        with m.If(rfc_left != 0):
            m.d.sync += rfc_left.eq(rfc_left - 1)
        with m.If(since_ref <= c.refresh_deadline):
            m.d.sync += since_ref.eq(since_ref + 1)

        violation = Signal(DRAMError)
        bank = self.cmd_bank
        any_open = Signal()
        m.d.comb += any_open.eq(_any(is_open[b] for b in range(nb)))

        with m.If(since_ref > c.refresh_deadline):
            m.d.comb += violation.eq(DRAMError.REF_LATE)
        with m.Elif((self.cmd != Cmd.NOP) & (rfc_left != 0)):
            m.d.comb += violation.eq(DRAMError.TRFC)
        with m.Elif((self.cmd != Cmd.NOP) & (self.cmd != Cmd.REF)
                    & ((bank >= nb) | (self.cmd_row >= c.rows))):
            m.d.comb += violation.eq(DRAMError.BAD_ADDRESS)
        with m.Else():
            with m.Switch(self.cmd):
                with m.Case(Cmd.ACT):
                    with m.If(is_open[bank]):
                        m.d.comb += violation.eq(DRAMError.ACT_OPEN)
                    with m.Elif(since_pre[bank] < c.t_rp):
                        m.d.comb += violation.eq(DRAMError.ACT_TRP)
                    m.d.sync += [is_open[bank].eq(1), open_row[bank].eq(self.cmd_row),
                                 since_act[bank].eq(1)]
                with m.Case(Cmd.RD):
                    with m.If(~is_open[bank]):
                        m.d.comb += violation.eq(DRAMError.RD_CLOSED)
                    with m.Elif(since_act[bank] < c.t_rcd):
                        m.d.comb += violation.eq(DRAMError.RD_TRCD)
                    with m.Elif(since_rd < c.t_ccd):
                        m.d.comb += violation.eq(DRAMError.RD_TCCD)
                    m.d.sync += [since_rd.eq(1), self.reads.eq(self.reads + 1)]
                with m.Case(Cmd.PRE):
                    with m.If(is_open[bank]):
                        with m.If(since_act[bank] < c.t_ras):
                            m.d.comb += violation.eq(DRAMError.PRE_TRAS)
                        m.d.sync += [is_open[bank].eq(0), since_pre[bank].eq(1),
                                     since_any_pre.eq(1)]
                with m.Case(Cmd.REF):
                    with m.If(any_open):
                        m.d.comb += violation.eq(DRAMError.REF_OPEN)
                    with m.Elif(since_any_pre < c.t_rp):
                        m.d.comb += violation.eq(DRAMError.REF_TRP)
                    m.d.sync += [rfc_left.eq(c.t_rfc - 1), since_ref.eq(1)]

        with m.If((violation != DRAMError.NONE) & ~self.error):
            m.d.sync += [self.error.eq(1), self.error_code.eq(violation)]

        # Read pipeline: the array is read t_rl - 1 cycles after the RD (its port adds one more).
        issue = Signal()
        addr = Signal(range(c.rows * nb * bpr))
        m.d.comb += [
            issue.eq(self.cmd == Cmd.RD),
            addr.eq(((open_row[bank] * nb) + bank) * bpr + self.cmd_col),
        ]
        valid_line = [issue]
        addr_line = [addr]
        for i in range(c.t_rl - 1):
            v = Signal(name=f"rd_pipe_valid{i}")
            a = Signal.like(addr, name=f"rd_pipe_addr{i}")
            m.d.sync += [v.eq(valid_line[-1]), a.eq(addr_line[-1])]
            valid_line.append(v)
            addr_line.append(a)
        m.d.comb += [rd.addr.eq(addr_line[-1]), rd.en.eq(valid_line[-1])]
        m.d.sync += self.rd.valid.eq(valid_line[-1])
        m.d.comb += self.rd.payload.eq(rd.data)
        return m


def _any(values):
    result = Const(0)
    for v in values:
        result = result | v
    return result
