"""The controllers that decide, behind one interface: EDC (keep drafting?) and TVC (pre-verify?).

:class:`GoldenDeciders` wraps the golden models :class:`ahasd.sim.blocks.edc.EDC` and
:class:`ahasd.sim.blocks.tvc.TVC`. The engine only calls the :class:`Deciders` methods, so another
implementation (the Verilated controller top, for ``--rtl``) plugs in without changing it.
TVC tables hold UQ(ratio_bits-8).8 cycle ratios. Cycle counts reach TVC prescaled, in units of
``2**prescale_bits`` cycles (``cycles >> prescale_bits``, for records and for ``now``), which the
counters feeding TVC do; the decision is unchanged up to that rounding because every cycle term of
it is scaled alike. A recorded ratio at the table's maximum, or a cycle count past the
``cycles_bits`` input, is *saturated* (the true value was cut), and a decision taken while any
entry is saturated is counted too: both counts are in the result, and must be zero for every
shipped pair.
"""

from ahasd.sim.blocks.edc import EDC
from ahasd.sim.blocks.tvc import RATIO_FRAC_BITS, TABLES, TVC, TVCParams, to_pim

__all__ = ["Deciders", "ScaledDeciders", "GoldenDeciders"]


class Deciders:
    """Interface the engine uses (all cycle counts are integers)."""

    #: where the decisions come from (the ``deciders`` entry of a result's ``config``)
    kind = "custom"
    #: counts of saturated TVC table records and of decisions taken on a saturated table
    saturated_records = 0
    saturated_decisions = 0

    def edc_draft(self, entropy_nats) -> bool:
        """A batch was drafted with this mean entropy: keep drafting ahead?"""
        raise NotImplementedError

    def edc_verify(self, full):
        """The oldest unverified batch was verified (``full``: every token accepted)."""
        raise NotImplementedError

    def tvc_preset(self, table, cycles, length):
        """Offline profile: write the ratio of ``cycles`` per ``length`` tokens into ``table``."""
        raise NotImplementedError

    def tvc_record(self, table, cycles, length):
        raise NotImplementedError

    def tvc_decide(self, kv_len, now, pending) -> int:
        """Tokens to pre-verify (0: none)."""
        raise NotImplementedError


class ScaledDeciders(Deciders):
    """What every EDC/TVC implementation does to the engine's numbers before they reach the
    blocks: cycle counts prescaled by ``2**prescale_bits`` and clamped to the TVC input widths
    (the counters that feed TVC do this), the offline profile's presets turned into UQ.8 ratios
    (NVCT in PIM cycles), and the saturation counts. The blocks themselves are the subclass's.

    Parameters
    ----------
    freq_ratio : int
        f_PIM / f_NPU in UQ2.14.
    tvc_params : dict
        :class:`ahasd.spec.tvc.TVCParams` fields (default widths when empty).
    prescale_bits : int
        Cycle counts reach TVC in units of ``2**prescale_bits`` cycles.
    """

    def __init__(self, *, freq_ratio, tvc_params=None, prescale_bits=0):
        self.tvc_params = TVCParams(**(tvc_params or {}))
        self.freq_ratio = freq_ratio
        self.prescale = prescale_bits
        self.saturated_records = 0
        self.saturated_decisions = 0

    def _fit(self, cycles, length):
        """A record's (cycles, length) as TVC takes them: prescaled, clamped (and counted)."""
        p = self.tvc_params
        cycles = max(cycles, 0) >> self.prescale
        if cycles > (1 << p.cycles_bits) - 1 or length > (1 << p.length_bits) - 1:
            self.saturated_records += 1
        return min(cycles, (1 << p.cycles_bits) - 1), min(length, (1 << p.length_bits) - 1)

    def _preset_ratio(self, table, cycles, length):
        """The preset of ``table`` for ``cycles`` per ``length`` tokens, UQ(ratio_bits-8).8."""
        cycles, length = self._fit(cycles, length)
        if table == "nvct":
            cycles = to_pim(cycles, self.freq_ratio)
        ratio = (cycles << RATIO_FRAC_BITS) // max(length, 1)
        if ratio > self.tvc_params.ratio_max:
            self.saturated_records += 1
            ratio = self.tvc_params.ratio_max
        return ratio

    def _decide_operands(self, kv_len, now, pending):
        """``(kv_len, now, pending)`` as TVC takes them: ``now`` prescaled, all clamped."""
        p = self.tvc_params
        return (min(kv_len, (1 << p.length_bits) - 1),
                min(now >> self.prescale, (1 << p.cycles_bits) - 1),
                min(pending, (1 << p.length_bits) - 1))


class GoldenDeciders(ScaledDeciders):
    """EDC and TVC golden models.

    Parameters
    ----------
    edc_variant : str
        ``committed`` or ``anchor``.
    freq_ratio, tvc_params, prescale_bits
        As :class:`ScaledDeciders`.
    edc_params : dict
        :class:`ahasd.spec.edc.EDCParams` fields.
    """

    kind = "golden"

    def __init__(self, *, edc_variant="committed", freq_ratio, tvc_params=None, edc_params=None,
                 prescale_bits=0):
        super().__init__(freq_ratio=freq_ratio, tvc_params=tvc_params,
                         prescale_bits=prescale_bits)
        self.edc = EDC(variant=edc_variant, **(edc_params or {}))
        self.tvc = TVC(freq_ratio=freq_ratio, **(tvc_params or {}))

    def edc_draft(self, entropy_nats):
        return bool(self.edc.draft(entropy_nats).cont)

    def edc_verify(self, full):
        self.edc.verify(full)

    def tvc_preset(self, table, cycles, length):
        self.tvc.preset(table, self._preset_ratio(table, cycles, length))

    def tvc_record(self, table, cycles, length):
        cycles, length = self._fit(cycles, length)
        ratio = self.tvc.record(table, cycles, length)
        if ratio is not None and ratio >= self.tvc.params.ratio_max:
            self.saturated_records += 1

    def tvc_decide(self, kv_len, now, pending):
        top = self.tvc.params.ratio_max
        if any(v >= top for name in TABLES for v in self.tvc.tables[name]):
            self.saturated_decisions += 1
        return self.tvc.decide(*self._decide_operands(kv_len, now, pending)).length
