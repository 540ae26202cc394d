"""The shared divider, exhaustively at small widths: every dividend / divisor pair (and every step
count with ``variable_steps``), checking the result event, the held quotient, ``busy`` and the
cycle count against Python's integer division."""

import pytest

from ahasd.hw.divider import Divider
from ahasd.tb.dividers import abort_and_restart, expected, run


@pytest.mark.parametrize("n_bits, d_bits, q, check_cycle, round_half_up", [
    (7, 3, 4, False, False),
    (7, 3, 4, True, False),
    (6, 4, 3, False, True),
    (6, 4, 3, True, True),
    (8, 3, 2, True, False),      # a high part wider than the remainder register
    (8, 3, 2, False, False),
    (5, 5, 5, False, False),     # quotient as wide as the dividend: never saturates
])
def test_every_pair(n_bits, d_bits, q, check_cycle, round_half_up):
    dut = Divider(dividend_width=n_bits, divisor_width=d_bits, quotient_bits=q,
                  check_cycle=check_cycle, round_half_up=round_half_up)
    cases = [(n, d, q) for n in range(2**n_bits) for d in range(2**d_bits)]
    got = run(dut, cases)
    for (n, d, steps), (result, held, cycles) in zip(cases, got):
        quotient, want_cycles = expected(n, d, steps, round_half_up=round_half_up,
                                         check_cycle=check_cycle)
        assert (result, held, cycles) == (quotient, quotient, want_cycles), (n, d)


def test_every_pair_and_step_count():
    dut = Divider(dividend_width=6, divisor_width=3, quotient_bits=4, variable_steps=True)
    cases = [(n, d, s) for n in range(2**6) for d in range(2**3) for s in range(1, 5)]
    got = run(dut, cases)
    for (n, d, steps), (result, held, cycles) in zip(cases, got):
        quotient, want_cycles = expected(n, d, steps)
        assert (result, held, cycles) == (quotient, quotient, want_cycles), (n, d, steps)


@pytest.mark.parametrize("check_cycle", [False, True])
def test_abort_and_restart(check_cycle):
    dut = Divider(dividend_width=8, divisor_width=4, quotient_bits=6, check_cycle=check_cycle)
    seen = abort_and_restart(dut, (200, 7), (99, 4))
    # 99 // 4 = 24 fits 6 bits: 6 steps, one more with the check cycle
    assert seen == [0] + [0] * 10 + [(99 // 4, 7 if check_cycle else 6)]


def test_validation():
    with pytest.raises(ValueError, match="quotient_bits must be an integer in 1..128, not 0"):
        Divider(dividend_width=8, divisor_width=4, quotient_bits=0)
    with pytest.raises(ValueError, match="check_cycle must be a bool, not 1"):
        Divider(dividend_width=8, divisor_width=4, quotient_bits=4, check_cycle=1)
    with pytest.raises(ValueError, match="variable_steps must be False with check_cycle"):
        Divider(dividend_width=8, divisor_width=4, quotient_bits=4, check_cycle=True,
                variable_steps=True)
