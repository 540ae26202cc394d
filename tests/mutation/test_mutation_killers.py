"""The killers file: a mutant's recorded killer runs first, before its selection; the killer is
read from a result's detail at function level; the file round-trips through load()."""

from ahasd.mutation.catalogue import Catalogue, killer_of, load, write_killers
from ahasd.mutation.locate import Mutant

CATALOGUE = '''\
[modules]
"hw/tiny.py" = ["tests/test_tiny.py", "-m", "not slow"]

[[mutant]]
id = "a"
file = "hw/tiny.py"
find = "x"
replace = "y"

[[mutant]]
id = "b"
file = "hw/tiny.py"
find = "x"
replace = "z"
tests = ["tests/test_other.py"]
'''


def test_killer_of_a_detail():
    assert killer_of("FAILED tests/hw/test_a.py::test_b[4-per_bank] - assert 1 == 2") == \
        "tests/hw/test_a.py::test_b"
    assert killer_of("missing test file(s) x; FAILED tests/a.py::t - boom") == "tests/a.py::t"
    assert killer_of("ERROR tests/a.py - ImportError: no") == "tests/a.py"
    assert killer_of("timeout after 900 s") is None
    assert killer_of("exit 2") is None


def test_the_killer_runs_first_and_round_trips(tmp_path):
    path = tmp_path / "catalogue.toml"
    path.write_text(CATALOGUE, encoding="utf-8")
    plain = load(path)
    assert plain.first == {}
    a, b = plain.mutants
    write_killers(tmp_path / "killers.toml", {"b": "tests/test_other.py::t", "gone": "x",
                                             "a": "tests/test_tiny.py::t2"}, plain.mutants)
    text = (tmp_path / "killers.toml").read_text(encoding="utf-8")
    assert text.index('"a"') < text.index('"b"') and "gone" not in text
    catalogue = load(path)
    assert catalogue.tests_for(a) == ["tests/test_tiny.py::t2", "tests/test_tiny.py", "-m",
                                      "not slow"]
    assert catalogue.tests_for(b) == ["tests/test_other.py::t", "tests/test_other.py"]


def test_no_killer_no_change():
    m = Mutant(id="m", file="hw/tiny.py", find="x", replace="y")
    assert Catalogue(seed=0, modules={"hw/tiny.py": ["tests/t.py"]}, mutants=(m,)).tests_for(m) \
        == ["tests/t.py"]
