"""The TVC's record divider (ahasd.hw.tvc_divider), exhaustively at small widths: every
dividend / divisor pair whose quotient fits, the dividend given as two rows split in several
ways, checking the result, the held quotient, ``busy`` and the cycle count against Python's
integer division; and abort and restart."""

import pytest

from ahasd.hw.tvc_divider import RecordDivider
from ahasd.tb.dividers import abort_and_restart, run


@pytest.mark.parametrize("given", [False, True], ids=["own_first_bit", "given_first_bit"])
@pytest.mark.parametrize("n_bits, d_bits, q", [
    (7, 3, 4),
    (6, 4, 3),
    (8, 3, 6),
    (5, 5, 5),       # quotient as wide as the dividend
    (6, 2, 1),       # one step
])
def test_every_pair_that_fits(n_bits, d_bits, q, given):
    dut = RecordDivider(dividend_width=n_bits, divisor_width=d_bits, quotient_bits=q,
                        given_first_bit=given)
    cases = []
    for n in range(2**n_bits):
        for d in range(1, 2**d_bits):
            if n >> q < d:
                # rows: all in one, all in the other, and a split with carries between them
                for a in sorted({n, 0, n & 0b1010101, n - (n >> 1)}):
                    cases.append(((a, n - a), d, q))
    got = run(dut, cases)
    for ((a, b), d, _), (result, held, cycles) in zip(cases, got):
        assert (result, held, cycles) == ((a + b) // d, (a + b) // d, q), (a, b, d)


def test_abort_and_restart():
    dut = RecordDivider(dividend_width=8, divisor_width=4, quotient_bits=6)
    seen = abort_and_restart(dut, ((150, 50), 7), ((90, 9), 4))
    assert seen == [0] + [0] * 10 + [(99 // 4, 6)]


def test_validation():
    with pytest.raises(ValueError, match="quotient_bits must be an integer in 1..128, not 0"):
        RecordDivider(dividend_width=8, divisor_width=4, quotient_bits=0)
