"""Golden model of TVC, the time-aware pre-verification control (docs/architecture.md 4.2).

Transaction-level and bit-accurate: :class:`ahasd.hw.tvc.TVC` gives the same decision and the same
table contents for the same sequence of transactions, using the same integer arithmetic.

State
    Three tables (:data:`TABLES`) of ``depth`` per-token cycle ratios in UQ(ratio_bits-8).8,
    entry 0 newest: NVCT (NPU verify cycles per KV token, converted to PIM cycles), PDCT (PIM
    draft cycles per token), PVCT (PIM pre-verify cycles per token); ``freq_ratio`` = f_PIM / f_NPU
    in UQ2.14; a saturating error counter of zero-length records.

Arithmetic (every intermediate exact; Python integers and the RTL's widths never overflow)
    * ``to_pim(x) = (x * freq_ratio) >> 14`` (NPU cycles -> PIM cycles), ``cycles_bits + 2`` bits.
    * ``avg(T) = sum(T) >> log2(depth)``.
    * ``record(T, cycles, length)``: with ``length == 0`` nothing changes except the error counter
      (saturating at ``2**counter_bits - 1``); else ``c = to_pim(cycles)`` for NVCT and ``cycles``
      otherwise, and ``min((c * 256) // length, 2**ratio_bits - 1)`` is shifted into ``T``.
    * ``decide(kv_len, now, pending)``: ``C_npu = (avg(NVCT) * kv_len) >> 8``;
      ``C_left = C_npu - (to_pim(now) + (avg(PDCT) >> 8))``, signed, width
      :attr:`TVCParams.c_left_bits`; ``L`` = the largest ``L`` in ``1..max_preverify_len`` with
      ``L * avg(PVCT) <= C_left * 256`` (0 if none); ``length = min(L, pending)``; insert iff
      ``length >= 1``.

Scale: the default tables are UQ24.8 (``ratio_bits`` 32; UQ16.8 saturated at 65,535 cycles per
token, far below one draft token of a real model on the PIM). Cycle counts are taken in the units
their producers count in: a system whose counts exceed ``cycles_bits`` prescales them (counts in
units of ``2**s`` cycles, every cycle input alike, so decisions are unchanged up to rounding);
the system simulator uses ``s = 8`` (docs/tvc.md).

Widths: cycle counts (``cycles``, ``now``) have ``cycles_bits`` bits, token counts (``length``,
``kv_len``, ``pending``) ``length_bits``; ``freq_ratio`` is 16 bits (UQ2.14). Out-of-range
arguments raise :class:`ValueError`.

Ordering (what the RTL's ports implement): a ``config`` applies to every transaction after it;
``preset`` overwrites every entry of one table, so a record before it has no lasting effect.
"""

from dataclasses import dataclass

from ahasd.spec.params import check_choice, check_instance, check_int
from ahasd.spec.tvc import DEFAULT_FREQ_RATIO, FREQ_BITS, FREQ_FRAC_BITS, RATIO_FRAC_BITS, TABLES, TVCParams, to_pim

__all__ = ["TABLES", "FREQ_FRAC_BITS", "FREQ_BITS", "RATIO_FRAC_BITS", "DEFAULT_FREQ_RATIO",
           "TVCParams", "Decision", "TVC", "to_pim"]

@dataclass(frozen=True)
class Decision:
    """Result of :meth:`TVC.decide`: insert a pre-verification of ``length`` tokens iff
    ``insert``."""
    insert: bool
    length: int


class TVC:
    """Time-aware pre-verification control, transaction level (see the module docstring).

    Parameters
    ----------
    freq_ratio : int
        Initial f_PIM / f_NPU, UQ2.14 (default :data:`DEFAULT_FREQ_RATIO`).
    presets : dict or None
        Initial ratio (UQ(ratio_bits-8).8) of every entry of each table, by name; missing tables
        start at 0 (the RTL loads its ``preset`` inputs into the tables after reset).
    **params
        :class:`TVCParams` fields (``depth``, ``ratio_bits``, ``max_preverify_len``,
        ``cycles_bits``, ``length_bits``, ``counter_bits``).
    """

    def __init__(self, *, freq_ratio=DEFAULT_FREQ_RATIO, presets=None, **params):
        self.params = TVCParams(**params)
        self.freq_ratio = 0
        self.config(freq_ratio)
        self.tables = {name: [0] * self.params.depth for name in TABLES}
        self.error_count = 0
        check_instance("presets", presets, dict, optional=True, what="dict of table -> ratio")
        for name, ratio in (presets or {}).items():
            self.preset(name, ratio)

    # -- argument checks (named for the replay's messages) ------------------------------------
    def _table(self, table):
        return check_choice("table", table, TABLES)

    def _bits(self, name, value, bits):
        return check_int(name, value, 0, (1 << bits) - 1)

    # -- transactions -------------------------------------------------------------------------
    def config(self, freq_ratio):
        """Set f_PIM / f_NPU (UQ2.14) for the transactions that follow."""
        self.freq_ratio = self._bits("freq_ratio", freq_ratio, FREQ_BITS)

    def preset(self, table, ratio):
        """Write ``ratio`` (UQ(ratio_bits-8).8) into every entry of ``table``."""
        self._table(table)
        self._bits("ratio", ratio, self.params.ratio_bits)
        self.tables[table] = [ratio] * self.params.depth

    def record(self, table, cycles, length):
        """Record a measured run: ``cycles`` (NPU cycles for NVCT, PIM cycles otherwise) for
        ``length`` tokens. Return the ratio shifted in, or None for a zero-length record (which
        only increments the error counter)."""
        p = self.params
        self._table(table)
        self._bits("cycles", cycles, p.cycles_bits)
        self._bits("length", length, p.length_bits)
        if length == 0:
            self.error_count = min(self.error_count + 1, (1 << p.counter_bits) - 1)
            return None
        if table == "nvct":
            cycles = to_pim(cycles, self.freq_ratio)
        ratio = min((cycles << RATIO_FRAC_BITS) // length, p.ratio_max)
        self.tables[table] = [ratio] + self.tables[table][:-1]
        return ratio

    def average(self, table):
        """``sum(table) >> log2(depth)``."""
        return sum(self.tables[self._table(table)]) >> self.params.depth_log2

    def c_left(self, kv_len, now):
        """Predicted PIM cycles left before the NPU verification ends, less one draft token."""
        c_npu = (self.average("nvct") * kv_len) >> RATIO_FRAC_BITS
        return c_npu - (to_pim(now, self.freq_ratio) + (self.average("pdct") >> RATIO_FRAC_BITS))

    def decide(self, kv_len, now, pending):
        """Decide whether to insert a pre-verification and of how many tokens.

        ``kv_len``: KV length of the NPU's current verification (tokens); ``now``: NPU cycles it
        has run (NCR); ``pending``: unverified tokens available for pre-verification.
        """
        p = self.params
        self._bits("kv_len", kv_len, p.length_bits)
        self._bits("now", now, p.cycles_bits)
        self._bits("pending", pending, p.length_bits)
        c_left = self.c_left(kv_len, now)
        pvct = self.average("pvct")
        best = 0
        for length in range(1, p.max_preverify_len + 1):
            if length * pvct <= c_left << RATIO_FRAC_BITS:
                best = length
        best = min(best, pending)
        return Decision(insert=best >= 1, length=best)
