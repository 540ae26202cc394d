"""The fixed-point formats of ahasd.spec.formats: one rounding rule each, tested at the half-way
points, and every user of UQ4.12 on that rule."""

import math
from fractions import Fraction

import pytest

from ahasd.sim.blocks.edc import entropy_to_fx as golden_edc_fx
from ahasd.sim.blocks.entropy import batch_mean_fx, to_uq4_12
from ahasd.spec.edc import entropy_to_fx
from ahasd.spec.formats import UQ2_14, UQ4_12, UQ16_8, FixedFormat


def test_uq4_12_is_what_the_documents_say():
    assert (UQ4_12.width, UQ4_12.frac_bits, UQ4_12.signed) == (16, 12, False)
    assert (UQ4_12.min_code, UQ4_12.max_code, UQ4_12.scale) == (0, 65535, 4096)
    assert (UQ2_14.width, UQ2_14.frac_bits) == (16, 14)
    assert (UQ16_8.width, UQ16_8.frac_bits, UQ16_8.max_code) == (24, 8, 2**24 - 1)


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4095, 4096, 65533])
def test_uq4_12_rounds_half_up_at_every_half_way_point(k):
    # (k + 1/2) / 4096 nats is exactly half way between codes k and k + 1: up, whatever the
    # parity of k (Python's round would go to the even one).
    half = (k + 0.5) / 4096
    assert UQ4_12.encode(half) == k + 1
    assert UQ4_12.encode(Fraction(2 * k + 1, 8192)) == k + 1
    # just below half way: down
    assert UQ4_12.encode(math.nextafter(half, 0.0)) == k


def test_the_issue_s_example():
    # 1/8192 nats: 1 by the half-up rule (Python's round gave 0 in one of two former copies)
    assert UQ4_12.encode(1 / 8192) == 1


def test_uq4_12_saturates():
    assert UQ4_12.encode(16.0) == 65535
    assert UQ4_12.encode(65535.5 / 4096) == 65535
    assert UQ4_12.encode(65534.4 / 4096) == 65534
    assert UQ4_12.encode(-1e-9) == 0 and UQ4_12.encode(-2.0) == 0
    assert UQ4_12.encode(math.inf) == 65535 and UQ4_12.encode(-math.inf) == 0
    # The largest finite floats overflow when scaled by 4096: they saturate like infinities
    # (a trace may hold any finite entropy, docs/trace-format.md).
    big = 1.7976931348623157e308
    assert UQ4_12.encode(big) == 65535 and UQ4_12.encode(-big) == 0
    assert entropy_to_fx(big) == golden_edc_fx(big) == 65535
    assert FixedFormat("Q3.4", width=8, frac_bits=4, signed=True).encode(-big) == -128
    with pytest.raises(ValueError, match="outside the UQ1.3 code range"):
        FixedFormat("UQ1.3", width=4, frac_bits=3, saturate=False).encode(big)
    with pytest.raises(ValueError, match="UQ4.12 must be a number, not nan"):
        UQ4_12.encode(math.nan)


def test_a_format_without_saturation_refuses_out_of_range_values():
    fmt = FixedFormat("UQ1.3", width=4, frac_bits=3, saturate=False)
    assert fmt.encode(1.875) == 15
    with pytest.raises(ValueError, match="outside the UQ1.3 code range 0..15"):
        fmt.encode(2.0)


def test_signed_and_floor_formats():
    fmt = FixedFormat("Q3.4", width=8, frac_bits=4, signed=True, rounding="floor")
    assert (fmt.min_code, fmt.max_code) == (-128, 127)
    assert fmt.encode(-0.03125) == -1           # floor(-0.5)
    assert fmt.encode(0.03125) == 0
    assert fmt.encode(-100.0) == -128
    with pytest.raises(ValueError, match="rounding must be one of half_up, floor"):
        FixedFormat("x", width=8, frac_bits=4, rounding="even")


@pytest.mark.parametrize("k", [0, 1, 2, 3, 10, 4095, 40000])
def test_every_uq4_12_user_rounds_one_way(k):
    half = (k + 0.5) / 4096
    # the golden EDC, the spec's conversion (cosim packing and the controller's deciders use it),
    # the golden entropy unit's conversion: one answer, k + 1
    assert golden_edc_fx(half) == entropy_to_fx(half) == to_uq4_12(half) == k + 1


def test_batch_mean_rounds_half_up_like_the_rtl():
    # (sum + n // 2) // n: a mean exactly half way between two codes goes up
    assert batch_mean_fx([1, 2]) == 2
    assert batch_mean_fx([2, 3]) == 3
    assert batch_mean_fx([0, 0, 1, 2]) == 1      # 0.75 -> 1
    assert batch_mean_fx([0, 0, 0, 2]) == 1      # 0.5 -> 1


def test_encode_against_exact_rational_arithmetic():
    """Any float: the code is floor(H * 4096 + 1/2) computed with exact rationals, clamped."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=2000, deadline=None)
    @given(st.floats(min_value=-1.0, max_value=20.0, allow_nan=False))
    def check(h):
        exact = math.floor(Fraction(h) * 4096 + Fraction(1, 2))
        assert UQ4_12.encode(h) == min(max(exact, 0), 65535)

    check()
