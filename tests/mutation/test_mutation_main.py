"""``python -m ahasd.mutation run`` end to end on a tiny checkout: equivalent mutants are listed
but not run unless asked, --files selects by source file, --record-killers writes the killer."""

import textwrap

from ahasd.mutation.__main__ import main

TINY = "def clamp(x, top):\n    return min(x, top)\n\n\ndef twice(x):\n    return x + x\n"

TESTS = textwrap.dedent('''\
    from ahasd.hw.tiny import clamp, twice

    def test_twice():
        assert twice(4) == 8

    def test_clamp():
        assert clamp(5, 3) == 3
    ''')

CATALOGUE = textwrap.dedent('''\
    [modules]
    "hw/tiny.py" = ["tests/test_tiny.py"]

    [[mutant]]
    id = "sat"
    file = "hw/tiny.py"
    find = "min(x, top)"
    replace = "x"

    [[mutant]]
    id = "eq"
    file = "hw/tiny.py"
    find = "x + x"
    replace = "2 * x"
    equivalent = "x + x and 2 * x are the same number"
    ''')


def _repo(root, tiny_checkout):
    return tiny_checkout(root, TINY, TESTS, CATALOGUE)


def test_equivalents_not_run_and_killers_recorded(tmp_path, capsys, tiny_checkout):
    repo = _repo(tmp_path / "repo", tiny_checkout)
    args = ["run", "--repo", str(repo), "--catalogue", str(repo / "catalogue.toml"), "--jobs", "1"]
    assert main([*args, "--files", "hw/", "--record-killers"]) == 0
    out, err = capsys.readouterr()
    assert "1 mutants to run (1 equivalent not run)" in err
    assert "eq  hw/tiny.py 'x + x' -> '2 * x': x + x and 2 * x" in out and "[run: not run]" in out
    assert out.strip().splitlines()[-1] == "mutation score: 1/1 killed (100.0%)"
    killers = (repo / "killers.toml").read_text()
    assert '"sat" = "tests/test_tiny.py::test_clamp"' in killers and '"eq"' not in killers
    assert main([*args, "--equivalents"]) == 0
    out, err = capsys.readouterr()
    assert "2 mutants to run (0 equivalent not run)" in err and "[run: survived]" in out
