"""Two requesters on one LPDDR5 rank: the PIM's read scheduler and a host read stream, through the
rank model's command arbiter; each requester's effective bandwidth alone and together.

A simulation harness (for the system simulator's contention model): :class:`ContentionSystem`
joins a :class:`ahasd.tb.dram_bank.DRAMBankModel` to two :class:`ahasd.hw.dram_port.ReadScheduler`
instances that stream without end over disjoint bank sets (the PIM unit's, as in the GEMV bank,
and the host's: the NPU streaming weights from other banks of the same rank), both with per-bank
refresh. :func:`measure_bandwidth` runs it in the Amaranth simulator and returns reads per cycle
(and bytes per cycle) of each requester; :func:`contention` gives the three cases (PIM alone,
host alone, both).

Example::

    from ahasd.tb.dram_contention import contention
    figures = contention(cycles=8000)
    figures["both"]["pim"]["bytes_per_cycle"], figures["pim"]["pim"]["bytes_per_cycle"]
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.dram_port import ReadScheduler, connect_command
from ahasd.spec.dram import DRAMConfig
from ahasd.spec.params import check_instance, check_int
from ahasd.tb.dram_bank import REQUESTERS, DRAMBankModel, DRAMError

__all__ = ["ContentionSystem", "split_banks", "measure_bandwidth", "contention"]


def split_banks(config, pim_pairs=None):
    """``(pim_banks, host_banks)``: the first ``pim_pairs`` refresh pairs (default: half) to the
    PIM, the rest to the host, each in walk order (the lower banks of its pairs, then their
    mates), so that each scheduler owns whole pairs."""
    pairs = config.refresh_pairs
    if config.n_banks % 2:
        raise ValueError(f"n_banks must be even to split the rank into refresh pairs, not "
                         f"{config.n_banks}")
    pim_pairs = pairs // 2 if pim_pairs is None else pim_pairs
    check_int("pim_pairs", pim_pairs, 1, pairs - 1, note="pairs to the PIM, the rest to the host")

    def banks(lo, hi):
        return tuple(range(lo, hi)) + tuple(range(lo + pairs, hi + pairs))
    return banks(0, pim_pairs), banks(pim_pairs, pairs)


class ContentionSystem(wiring.Component):
    """A :class:`DRAMBankModel` fed by a PIM and a host :class:`ReadScheduler`.

    Parameters
    ----------
    config : DRAMConfig
        The rank (per-bank refresh; ``rows`` a power of two, so that the endless walks wrap).
    pim_banks, host_banks : sequence of int
        Disjoint bank sets (default :func:`split_banks`).
    host_period : int, optional
        Pace the host: one read request every ``host_period`` cycles (at most four waiting), so
        that it asks for ``t_ccd / host_period`` of the raw rate; None: it reads whenever it can.

    Ports
    -----
    pim_en, host_en : In(1)
        The requester streams (else it only refreshes its banks).
    reads, host_reads, refpb, error, error_code : Out
        The model's counters and timing check.
    """

    def __init__(self, *, config=DRAMConfig(rows=2), pim_banks=None, host_banks=None,
                 host_period=None):
        with rejecting_construction(self):
            if host_period is not None:
                check_int("host_period", host_period, config.t_ccd,
                          note="cycles per host read request, at least t_ccd")
            check_instance("config", config, DRAMConfig)
            if config.refresh != "per_bank":
                raise ValueError(f"config.refresh must be per_bank with two requesters, not "
                                 f"{config.refresh!r}")
            if config.rows & (config.rows - 1):
                raise ValueError(f"config.rows must be a power of two, not {config.rows}")
            default_pim, default_host = split_banks(config)
            pim_banks = default_pim if pim_banks is None else tuple(pim_banks)
            host_banks = default_host if host_banks is None else tuple(host_banks)
            if set(pim_banks) & set(host_banks):
                raise ValueError(f"pim_banks and host_banks must be disjoint, not {pim_banks!r} "
                                 f"and {host_banks!r}")
            ReadScheduler.check_config(config, pim_banks)
            ReadScheduler.check_config(config, host_banks)
        self.config = config
        self.pim_banks, self.host_banks = pim_banks, host_banks
        self.host_period = host_period
        super().__init__({
            "pim_en": In(1), "host_en": In(1),
            "reads": Out(32), "host_reads": Out(32), "refpb": Out(32),
            "error": Out(1), "error_code": Out(DRAMError),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.dram = dram = DRAMBankModel(config=self.config)
        for name, banks, en, prefix in (("pim", self.pim_banks, self.pim_en, ""),
                                        ("host", self.host_banks, self.host_en, "host_")):
            # Each gets half the bus when both stream: rows take twice as long.
            m.submodules[name] = sched = ReadScheduler(
                self.config, banks=banks,
                row_cycles=2 * self.config.bursts_per_row * self.config.t_ccd)
            connect_command(m, sched, dram, prefix)
            m.d.comb += sched.reading.eq(en)
            if name == "host" and self.host_period is not None:
                self._pace(m, sched)
            else:
                m.d.comb += sched.rd_allowed.eq(1)
        m.d.comb += [self.reads.eq(dram.reads), self.host_reads.eq(dram.host_reads),
                     self.refpb.eq(dram.refpb), self.error.eq(dram.error),
                     self.error_code.eq(dram.error_code)]
        return m


    def _pace(self, m, sched):
        """A request every ``host_period`` cycles into a four-deep credit; a RD takes one."""
        tick = Signal(range(self.host_period))
        credit = Signal(range(5))
        arrive = tick == self.host_period - 1
        m.d.sync += tick.eq(Mux(arrive, 0, tick + 1))
        m.d.comb += sched.rd_allowed.eq(credit != 0)
        with m.If(arrive & ~sched.rd_issued & (credit != 4)):
            m.d.sync += credit.eq(credit + 1)
        with m.Elif(~arrive & sched.rd_issued):
            m.d.sync += credit.eq(credit - 1)


def measure_bandwidth(config=None, *, cycles=None, warmup=None, requesters=REQUESTERS,
                      pim_banks=None, host_banks=None, host_period=None):
    """Effective read bandwidth of each requester with ``requesters`` streaming at once.

    Parameters
    ----------
    config : DRAMConfig, optional
        The rank (default: the platform's, 2 rows per bank stored).
    host_period : int, optional
        As :class:`ContentionSystem` (the host's pacing).
    cycles : int, optional
        Measurement window (default ``2 * t_refi``), after ``warmup`` cycles (default: the time
        to open the first rows, ``t_rcd + t_rp + t_ras``).
    requesters : sequence of str
        Those of ``("pim", "host")`` that stream.

    Returns
    -------
    dict
        ``{"pim": {...}, "host": {...}, "cycles", "refpb", "error"}``; per requester
        ``reads``, ``reads_per_cycle`` and ``bytes_per_cycle`` (over the window), and
        ``of_raw``, its share of the raw rate ``1 / t_ccd``. ``error`` is the model's first
        :class:`DRAMError` name (``"NONE"``: every command was legal).
    """
    from ahasd.tb.amaranth_sim import simulate

    config = DRAMConfig(rows=2) if config is None else config
    check_instance("config", config, DRAMConfig)
    cycles = check_int("cycles", 2 * config.t_refi if cycles is None else cycles, 1)
    warmup = check_int("warmup", config.t_rcd + config.t_rp + config.t_ras
                       if warmup is None else warmup, 0)
    requesters = tuple(requesters)
    for r in requesters:
        if r not in REQUESTERS:
            raise ValueError(f"requesters must be among {', '.join(REQUESTERS)}, not {r!r}")
    dut = ContentionSystem(config=config, pim_banks=pim_banks, host_banks=host_banks,
                           host_period=host_period)
    seen = {}

    async def tb(ctx):
        ctx.set(dut.pim_en, "pim" in requesters)
        ctx.set(dut.host_en, "host" in requesters)
        if warmup:
            await ctx.tick().repeat(warmup)
        start = (ctx.get(dut.reads), ctx.get(dut.host_reads), ctx.get(dut.refpb))
        await ctx.tick().repeat(cycles)
        seen["counts"] = [end - begin for end, begin in zip(
            (ctx.get(dut.reads), ctx.get(dut.host_reads), ctx.get(dut.refpb)), start)]
        seen["error"] = DRAMError(ctx.get(dut.error_code)).name

    simulate(dut, tb)
    pim_reads, host_reads, refpb = seen["counts"]
    figures = {"cycles": cycles, "refpb": refpb, "error": seen["error"]}
    for name, reads in (("pim", pim_reads), ("host", host_reads)):
        figures[name] = {"reads": reads, "reads_per_cycle": reads / cycles,
                         "bytes_per_cycle": reads * config.burst_bytes / cycles,
                         "of_raw": reads * config.t_ccd / cycles}
    return figures


def contention(config=None, *, cycles=None, warmup=None, pim_banks=None, host_banks=None,
               host_period=None):
    """:func:`measure_bandwidth` for the PIM alone, the host alone and both together, as
    ``{"pim": ..., "host": ..., "both": ...}``."""
    return {case: measure_bandwidth(config, cycles=cycles, warmup=warmup, requesters=reqs,
                                    pim_banks=pim_banks, host_banks=host_banks,
                                    host_period=host_period)
            for case, reqs in (("pim", ("pim",)), ("host", ("host",)), ("both", REQUESTERS))}
