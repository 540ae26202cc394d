"""ahasd.sim.system.deciders.ScaledDeciders: what reaches EDC/TVC from the engine, at the edges of
the TVC input widths (defaults: 32-bit cycles, 16-bit lengths, UQ24.8 ratios): a value at the
maximum passes unchanged and uncounted, one past it is clamped and counted as saturated."""

from ahasd.sim.system.deciders import GoldenDeciders, ScaledDeciders

ONE = 1 << 14                      # f_PIM / f_NPU = 1 in UQ2.14
C_MAX, L_MAX, R_MAX = (1 << 32) - 1, (1 << 16) - 1, (1 << 32) - 1


def test_records_are_clamped_at_the_input_widths():
    d = ScaledDeciders(freq_ratio=ONE)
    assert d._fit(C_MAX, L_MAX) == (C_MAX, L_MAX) and d.saturated_records == 0
    assert d._fit(C_MAX + 1, L_MAX) == (C_MAX, L_MAX) and d.saturated_records == 1
    assert d._fit(5, L_MAX + 1) == (5, L_MAX) and d.saturated_records == 2
    assert d._fit(-3, 2) == (0, 2)
    p = ScaledDeciders(freq_ratio=ONE, prescale_bits=4)
    assert p._fit((C_MAX << 4) | 15, 1) == (C_MAX, 1) and p.saturated_records == 0
    assert p._fit((C_MAX + 1) << 4, 1) == (C_MAX, 1) and p.saturated_records == 1


def test_a_preset_at_the_ratio_maximum_is_not_saturated():
    d = ScaledDeciders(freq_ratio=ONE)
    # (2**32 - 1) cycles per 256 tokens is exactly the UQ24.8 maximum.
    assert d._preset_ratio("pdct", C_MAX, 256) == R_MAX and d.saturated_records == 0
    assert d._preset_ratio("pdct", C_MAX, 255) == R_MAX and d.saturated_records == 1
    assert d._preset_ratio("pdct", 3, 2) == (3 << 8) // 2
    # NVCT presets are in PIM cycles: twice the NPU cycles when the PIM clock is twice as fast.
    assert ScaledDeciders(freq_ratio=2 * ONE)._preset_ratio("nvct", 3, 2) == (6 << 8) // 2


def test_decide_operands_are_prescaled_and_clamped():
    d = ScaledDeciders(freq_ratio=ONE)
    assert d._decide_operands(L_MAX, C_MAX, L_MAX) == (L_MAX, C_MAX, L_MAX)
    assert d._decide_operands(L_MAX + 1, C_MAX + 1, L_MAX + 1) == (L_MAX, C_MAX, L_MAX)
    p = ScaledDeciders(freq_ratio=ONE, prescale_bits=4)
    assert p._decide_operands(7, 100, 3) == (7, 100 >> 4, 3)
    assert p._decide_operands(7, (C_MAX + 1) << 4, 3) == (7, C_MAX, 3)


def test_golden_records_at_the_maximum_count_as_saturated():
    d = GoldenDeciders(freq_ratio=ONE)
    d.tvc_record("pdct", 10, 5)
    assert d.saturated_records == 0
    d.tvc_record("pdct", C_MAX, 1)
    assert d.saturated_records == 1
    d.tvc_decide(10, 100, 4)
    assert d.saturated_decisions == 1
