"""LPDDR5 bank timing parameters (with named sets), the weight layout of the GEMV bank, and the
timing bound: the one DRAM timing module of the project.

Shared by the RTL (:mod:`ahasd.tb.dram_bank`, :mod:`ahasd.hw.gemv`), the tests and the benchmark, so
that every cycle figure is derived from one set of parameters.

Timing defaults are in PIM clock cycles (800 MHz, 1.25 ns): tRCD 32, tRP 32, tRAS 64, tCCD 4 and
2 KiB rows are those of docs/architecture.md 4.6 (sources there). The paper gives no refresh figures;
tREFI 3120 (3.9 us) and tRFC 224 (280 ns, all-bank refresh of a 16 Gb die) are JEDEC LPDDR5 values at
800 MHz, and the read latency tRL 16 is a typical LPDDR5 RL in PIM clocks. The activation limits and
per-bank refresh figures are JEDEC LPDDR5 (JESD209-5B) values at 800 MHz (tCK 1.25 ns) for a 16 Gb
x16 die in 16-bank mode: tRRD 5 ns (4), tFAW 20 ns (16), tRFCpb 140 ns (112), tpbR2pbR 90 ns (72),
tpbR2ACT 7.5 ns (6), 16 banks per rank.

Refresh rule (both the bank model and the scheduler follow it). A per-bank refresh REFpb to bank
``b`` refreshes the *refresh pair* ``{b mod P, b mod P + P}`` with ``P = n_banks / 2`` (LPDDR5
16-bank mode: banks BA and BA+8 together, so 8 REFpb refresh the whole die, tREFIpb = tREFI / 8;
Ramulator's LPDDR5 model pairs banks the same way); with an odd ``n_banks`` a REFpb refreshes its
bank alone. An all-bank REF refreshes every pair. Every pair must be refreshed at most
:attr:`DRAMConfig.refresh_deadline` cycles after its previous refresh (after reset at first):
every bank once per tREFI window, plus the time to close banks. This is stricter than JEDEC, which
lets a controller postpone up to 8 refreshes.

Two named refresh sets (:data:`TIMING_SETS`, :func:`named_config`): ``"jedec"`` (the defaults
above, what the GEMV bank's tests and ``ahasd bench gemv`` use) and ``"authors"`` (tREFI 6240,
tRFC 560: the authors' configuration, what ``sim/system/configs/platform.toml`` uses).
"""

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ahasd.spec.params import check_choice, check_int, check_positive, check_power_of_two

__all__ = ["DRAMConfig", "REFRESH_MODES", "TIMING_SETS", "named_config", "weight_layout",
           "burst_address"]

#: Refresh modes of the read scheduler (:class:`ahasd.hw.dram_port.ReadScheduler`).
REFRESH_MODES = ("per_bank", "all_bank")


@dataclass(frozen=True, kw_only=True)
class DRAMConfig:
    """Geometry and timing of the LPDDR5 banks that feed one GEMV bank.

    Parameters
    ----------
    t_rcd, t_rp, t_ras, t_ccd : int
        ACT->RD, PRE->ACT, ACT->PRE and RD->RD (any bank) minimum spacing in cycles.
    t_rrd, t_faw : int
        ACT->ACT (any two banks) minimum spacing, and the window in which at most four ACTs may
        be issued (a fifth ACT must come ``t_faw`` or more after the fourth-last one).
    t_refi, t_rfc : int
        Refresh interval and all-bank refresh time in cycles. Every refresh pair must be
        refreshed at most ``t_refi + t_ras + t_rp + n_banks`` cycles after its previous refresh
        (time to close the banks after the refresh falls due; see the module docstring); during
        ``t_rfc`` after a REF no command is accepted.
    t_rfcpb, t_pbr2pbr, t_pbr2act : int
        Per-bank refresh: the refreshed pair takes no command for ``t_rfcpb`` cycles; two REFpb
        (any banks) are ``t_pbr2pbr`` apart; an ACT (any bank) comes ``t_pbr2act`` after a REFpb,
        and a REFpb ``t_rrd`` after an ACT.
    t_rl : int
        Read latency: data of a RD issued at cycle c is on the bus at cycle c + t_rl.
    row_bytes, burst_bytes : int
        Row (page) size and bytes per read burst; both powers of two, ``burst_bytes <= row_bytes``.
    n_banks : int
        Banks of the rank (LPDDR5: 16), interleaved by the GEMV controller (consecutive rows go
        to consecutive banks).
    rows : int
        Rows per bank (address range).
    refresh : str
        Refresh mode of the read scheduler: ``"per_bank"`` (REFpb to one pair while the others
        stream) or ``"all_bank"`` (reads stop for a REF every tREFI). The bank model accepts both.
    """

    t_rcd: int = 32
    t_rp: int = 32
    t_ras: int = 64
    t_ccd: int = 4
    t_rrd: int = 4
    t_faw: int = 16
    t_refi: int = 3120
    t_rfc: int = 224
    t_rfcpb: int = 112
    t_pbr2pbr: int = 72
    t_pbr2act: int = 6
    t_rl: int = 16
    row_bytes: int = 2048
    burst_bytes: int = 32
    n_banks: int = 16
    rows: int = 65536
    refresh: str = "per_bank"

    def __post_init__(self):
        for name in ("t_rcd", "t_rp", "t_ras", "t_ccd", "t_rrd", "t_faw", "t_rfc", "t_rfcpb",
                     "t_pbr2pbr", "t_pbr2act", "t_rl", "n_banks", "rows"):
            check_positive(name, getattr(self, name), integer=True)
        for name in ("row_bytes", "burst_bytes"):
            check_power_of_two(name, getattr(self, name))
        check_int("burst_bytes", self.burst_bytes, 1, self.row_bytes, note="at most row_bytes")
        check_int("t_refi", self.t_refi, self.t_rfc + 1, note="more than t_rfc")
        check_int("t_rfcpb", self.t_rfcpb, 1, self.t_refi - 1, note="less than t_refi")
        check_int("t_rl", self.t_rl, 2)
        check_choice("refresh", self.refresh, REFRESH_MODES)

    @property
    def bursts_per_row(self):
        return self.row_bytes // self.burst_bytes

    @property
    def refresh_deadline(self):
        """Most cycles allowed between two refreshes of a refresh pair (class docstring)."""
        return self.t_refi + self.t_ras + self.t_rp + self.n_banks

    @property
    def refresh_pairs(self):
        """Number of refresh pairs ``P``: a REFpb to bank ``b`` refreshes ``b mod P`` and
        ``b mod P + P`` (``n_banks / 2`` pairs; ``n_banks`` single banks if it is odd)."""
        return self.n_banks // 2 if self.n_banks % 2 == 0 else self.n_banks

    def refresh_group(self, bank):
        """The banks one REFpb to ``bank`` refreshes, as a tuple."""
        p = bank % self.refresh_pairs
        return (p, p + self.refresh_pairs) if self.n_banks % 2 == 0 else (p,)

    def read_bound(self):
        """Upper bound of column reads per cycle allowed by the timing, as a ``Fraction``.

        Reads are at most one per ``t_ccd``; refresh takes the whole device for ``t_rfc`` of every
        ``t_refi`` cycles, so at most ``(1 - t_rfc / t_refi) / t_ccd`` bursts per cycle. Row
        switches cost nothing in this bound: with two or more banks they can be hidden.
        """
        return Fraction(self.t_refi - self.t_rfc, self.t_refi * self.t_ccd)

    def mac_bound(self):
        """MACs per cycle of a GEMV bank with one lane per burst byte, at :meth:`read_bound`."""
        return self.read_bound() * self.burst_bytes

    def raw_read_bound(self):
        """The raw DRAM rate, one burst per ``t_ccd`` (``Fraction``): what per-bank refresh can
        approach, since a refreshing pair is not read while the others stream."""
        return Fraction(1, self.t_ccd)

    def raw_mac_bound(self):
        """MACs per cycle of a GEMV bank at :meth:`raw_read_bound` (``B / t_ccd``)."""
        return self.raw_read_bound() * self.burst_bytes


#: Named refresh timing sets, in PIM cycles at 800 MHz.
TIMING_SETS = {
    # JEDEC LPDDR5: tREFI 3.9 us, all-bank tRFC 280 ns (16 Gb die): DRAMConfig's defaults.
    "jedec": {"t_refi": 3120, "t_rfc": 224},
    # The authors' configuration (configs/ahasd_config_template.json, timing_parameters: tREFI,
    # tRFC, tRRD_L, tFAW); their files give no per-bank figure: tRFCpb is half of tRFC, the JEDEC
    # ratio of the per-bank to the all-bank refresh time.
    "authors": {"t_refi": 6240, "t_rfc": 560, "t_rfcpb": 280, "t_rrd": 8, "t_faw": 64},
}


def named_config(name, **overrides):
    """The :class:`DRAMConfig` of the timing set ``name`` (a key of :data:`TIMING_SETS`), with
    ``overrides`` (any other field) applied."""
    check_choice("name", name, tuple(TIMING_SETS))
    return DRAMConfig(**{**TIMING_SETS[name], **overrides})


def burst_address(config, address):
    """``(bank, row, col)`` of linear burst ``address``: consecutive rows in consecutive banks."""
    bpr = config.bursts_per_row
    global_row, col = divmod(address, bpr)
    row, bank = divmod(global_row, config.n_banks)
    return bank, row, col


def weight_layout(weights, lanes):
    """Burst words (ints, lane 0 in the low byte) that hold ``weights`` for the GEMV bank.

    ``weights`` is an ``(M, N)`` int8 matrix (y = W x). Output rows are grouped in tiles of
    ``lanes``; tile ``t`` occupies bursts ``t*N .. t*N+N-1``, burst ``t*N + k`` holds
    ``W[t*lanes + l, k]`` in byte ``l``. Lanes past ``M`` in the last tile are zero.
    """
    w = np.asarray(weights)
    if w.ndim != 2:
        raise ValueError(f"weights must be a 2-D matrix, not shape {w.shape}")
    if w.min(initial=0) < -128 or w.max(initial=0) > 127:
        raise ValueError("weights must be int8 values in -128..127")
    rows, cols = w.shape
    tiles = -(-rows // lanes)
    padded = np.zeros((tiles * lanes, cols), dtype=np.int64)
    padded[:rows] = w
    # (tiles, lanes, N) -> (tiles, N, lanes): one burst per (tile, column), bytes = lanes.
    bursts = padded.reshape(tiles, lanes, cols).transpose(0, 2, 1).reshape(-1, lanes)
    as_bytes = (bursts & 0xFF).astype(np.uint8)
    return [int.from_bytes(row.tobytes(), "little") for row in as_bytes]
