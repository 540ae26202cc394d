"""ahasd.mutation on a tiny checkout: the locator's errors, one killed and one equivalent mutant,
the copy importing from itself, the score line; and the real catalogue locating every mutant."""

import textwrap
from pathlib import Path

import pytest

from ahasd.mutation.catalogue import Catalogue, load
from ahasd.mutation.draw import draw, sites
from ahasd.mutation.locate import LocateError, Mutant, apply, locate
from ahasd.mutation.runner import report, run_mutant, score_line
from ahasd.mutation.tree import check_imports, make_tree

TINY = '''\
def clamp(x, top):
    """x, saturated at top."""
    return min(x, top)


def twice(x):
    return x + x


def first(x):
    return x + 1


def second(x):
    return x + 1
'''

TINY_TEST = '''\
from ahasd.hw.tiny import clamp, twice


def test_clamp():
    assert clamp(5, 3) == 3 and clamp(2, 3) == 2


def test_twice():
    assert twice(4) == 8
'''


def tiny_repo(root):
    """A checkout with the repository's layout rule (ahasd/hw a symlink to hw/), one module,
    one test."""
    root = Path(root)
    (root / "ahasd").mkdir(parents=True)
    (root / "ahasd" / "__init__.py").write_text("")
    (root / "hw").mkdir()
    (root / "hw" / "__init__.py").write_text("")
    (root / "hw" / "tiny.py").write_text(TINY)
    (root / "ahasd" / "hw").symlink_to("../hw")
    (root / "tests").mkdir()
    (root / "tests" / "test_tiny.py").write_text(TINY_TEST)
    (root / "pyproject.toml").write_text(textwrap.dedent('''\
        [tool.pytest.ini_options]
        addopts = "--import-mode=importlib"
        '''))
    return root


def mutant(**kw):
    return Mutant(**{"id": "m", "file": "hw/tiny.py", **kw})


def test_locator_needs_exactly_one_match():
    with pytest.raises(LocateError, match=r"mutant m: pattern 'x - 1' matches 0 places in "
                                          r"hw/tiny.py, not exactly one"):
        locate(TINY, mutant(find="x - 1", replace="x"))
    with pytest.raises(LocateError, match=r"pattern 'return x \+ 1' matches 2 places in "
                                          r"hw/tiny.py at lines 11, 15, not exactly one"):
        locate(TINY, mutant(find="return x + 1", replace="return x"))
    # A scope makes the same pattern unique.
    at = locate(TINY, mutant(find="return x + 1", replace="return x", scope="second"))
    assert TINY.count("\n", 0, at) + 1 == 15
    with pytest.raises(LocateError, match=r"scope 'third' names 0 functions or classes"):
        locate(TINY, mutant(find="x + 1", replace="x", scope="third"))


def test_mutants_stay_on_one_line_and_valid():
    with pytest.raises(ValueError, match=r"mutant m: find must be a single-line string"):
        mutant(find="a\nb", replace="a")
    with pytest.raises(ValueError, match=r"replace equals find \('x'\)"):
        mutant(find="x", replace="x")
    with pytest.raises(LocateError, match=r"makes hw/tiny.py invalid Python at line 3"):
        apply(TINY, mutant(find="min(x, top)", replace="min(x, top"))


def test_drawn_sites_are_located_and_reproducible():
    found = sites("hw/tiny.py", TINY)
    ops = {m.operator for m in found}
    assert {"drop_saturation", "off_by_one"} <= ops
    for m in found:
        apply(TINY, m)
    read = {"hw/tiny.py": TINY}.__getitem__
    assert draw(["hw/tiny.py"], 3, 7, read=read) == draw(["hw/tiny.py"], 3, 7, read=read)


def test_killed_equivalent_and_untested_mutants(tmp_path):
    repo = tiny_repo(tmp_path / "repo")
    files = check_imports(make_tree(repo, tmp_path / "copy") and tmp_path / "copy",
                          ["ahasd", "ahasd.hw", "ahasd.hw.tiny"])
    assert all(str((tmp_path / "copy").resolve()) in str(Path(f).resolve())
               for f in files.values())
    catalogue = Catalogue(seed=0, modules={"hw/tiny.py": ["tests/test_tiny.py"]}, mutants=())
    killed = run_mutant(repo, catalogue, mutant(id="sat", find="min(x, top)", replace="x"),
                        nice=False, workdir=tmp_path)
    assert killed.status == "killed" and "test_clamp" in killed.detail
    equivalent = mutant(id="eq", find="x + x", replace="2 * x",
                        equivalent="x + x and 2 * x are the same number")
    kept = run_mutant(repo, catalogue, equivalent, nice=False, workdir=tmp_path)
    assert kept.status == "survived" and not kept.scored
    untested = mutant(id="gone", find="min(x, top)", replace="x",
                      tests=("tests/test_missing.py",))
    lost = run_mutant(repo, catalogue, untested, nice=False, workdir=tmp_path)
    assert lost.status == "survived" and "missing test file(s) tests/test_missing.py" in lost.detail
    # The working tree is untouched.
    assert (repo / "hw" / "tiny.py").read_text() == TINY
    assert score_line([killed, kept, lost]) == "mutation score: 1/2 killed (50.0%)"


def test_report_ends_with_the_score(capsys):
    from ahasd.mutation.runner import Result
    results = [Result(mutant(id="a", find="x", replace="y"), "killed", 1.0),
               Result(mutant(id="b", find="x", replace="z", equivalent="why"), "survived", 1.0)]
    report(results, 60.0)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == "mutation score: 1/1 killed (100.0%)"
    assert any("b" in line and "why" in line for line in lines)


def test_catalogue_locates_every_mutant():
    """Every mutant of the real catalogue applies to the current tree (so code moves that lose
    a mutant fail here, in make test, not in make mutate), and the campaign is big enough."""
    root = Path(__file__).resolve().parents[2]
    catalogue = load()
    assert len(catalogue.mutants) >= 40
    for m in catalogue.mutants:
        apply((root / m.file).read_text(encoding="utf-8"), m)
        assert m.file.startswith(("hw/", "sim/", "spec/")), m.id
        for arg in catalogue.tests_for(m):
            if arg.startswith("tests/") and arg not in FROM_OTHER_BRANCHES:
                assert (root / arg.split("::")[0]).exists(), (m.id, arg)


#: Test files of the verification branch that the catalogue names before they are merged
#: (until then `make mutate` leaves them out and says "missing test file").
FROM_OTHER_BRANCHES = {"tests/hw/test_controller_registers.py", "tests/hw/test_controller_queues.py",
                       "tests/hw/test_controller_counters.py", "tests/hw/test_queue_levels.py",
                       "tests/synth/test_cdc.py"}
