"""A mutant's test selection runs in the order given: a test named first as ``file::test`` (the
likely killer) runs before the rest of its own file, and a named test that no longer exists
drops out with a note instead of erroring the run."""

import textwrap

from ahasd.mutation.catalogue import Catalogue
from ahasd.mutation.locate import Mutant
from ahasd.mutation.runner import run_mutant

TINY = "def clamp(x, top):\n    return min(x, top)\n"

TESTS = textwrap.dedent('''\
    from ahasd.hw.tiny import clamp

    def test_first_in_file():
        assert clamp(5, 3) == 3

    def test_last_in_file():
        assert clamp(7, 3) == 3
    ''')


def _repo(root, tiny_checkout):
    return tiny_checkout(root, TINY, TESTS)


def _run(tmp_path, tiny_checkout, tests):
    catalogue = Catalogue(seed=0, modules={"hw/tiny.py": ["tests/test_tiny.py"]}, mutants=())
    mutant = Mutant(id="sat", file="hw/tiny.py", find="min(x, top)", replace="x",
                    tests=tuple(tests))
    return run_mutant(_repo(tmp_path / "repo", tiny_checkout), catalogue, mutant, nice=False,
                      workdir=tmp_path)


def test_the_named_killer_runs_before_its_file(tmp_path, tiny_checkout):
    result = _run(tmp_path, tiny_checkout, ["tests/test_tiny.py::test_last_in_file", "tests/test_tiny.py"])
    assert result.status == "killed" and "test_last_in_file" in result.detail, result.detail


def test_a_vanished_named_test_drops_out(tmp_path, tiny_checkout):
    result = _run(tmp_path, tiny_checkout, ["tests/test_tiny.py::test_renamed_away", "tests/test_tiny.py"])
    assert result.status == "killed", result.detail
    assert "missing test file(s) tests/test_tiny.py::test_renamed_away" in result.detail
    assert "test_first_in_file" in result.detail
