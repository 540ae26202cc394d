"""ahasd.sim.decoding.tokenizer.stdlib_files: a subset keeps every n-th file, and a limit above
the library's size keeps the whole library."""

from ahasd.sim.decoding.tokenizer import stdlib_files


def test_subsets():
    root, every = stdlib_files()
    n = len(every)
    assert n > 100
    assert stdlib_files(n) == (root, every) and stdlib_files(10 * n) == (root, every)
    _, some = stdlib_files(n // 3)
    step = n // (n // 3)
    assert some == every[::step][:n // 3]
