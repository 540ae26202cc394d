"""The mutant catalogue: a TOML file of mutants and the test map of the modules they change.

Format (``ahasd/mutation/catalogue.toml``)::

    seed = 14                          # of the drawn mutants (``python -m ahasd.mutation draw``)

    [modules]                          # the tests that cover each module: pytest arguments
    "hw/tvc.py" = ["tests/hw/test_tvc.py", "tests/sim/blocks/test_tvc.py"]

    [[mutant]]
    id = "tvc-ratio-saturation"        # unique
    file = "hw/tvc.py"
    scope = "TVC.elaborate"            # enclosing function or class ("" = module)
    find = "div_rem >= div_len"        # one line's worth, exactly once in the scope
    replace = "div_rem > div_len"
    operator = "cmp_flip"
    origin = "issue"                   # issue | drawn | manual
    behaviour = "a quotient of exactly 2**rb saturates"
    tests = []                         # optional: instead of the module's entry
    equivalent = ""                    # optional: why no test can tell (then not scored)

Beside it, ``killers.toml`` names each mutant's likely killer (the test that failed first when it
was last killed, written by ``python -m ahasd.mutation run --record-killers``)::

    [first]
    "tvc-ratio-saturation" = "tests/hw/test_tvc.py::test_ratio_saturates"

A mutant's tests are its killer first, then its selection (the killer's file included, run in
the order given): a killed mutant stops after one test, a surviving one still runs them all.
"""

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ahasd.mutation.locate import Mutant

__all__ = ["Catalogue", "load", "DEFAULT_PATH", "KILLERS_NAME", "killer_of", "write_killers",
           "to_toml"]

DEFAULT_PATH = Path(__file__).with_name("catalogue.toml")
#: The killers file, next to the catalogue it belongs to.
KILLERS_NAME = "killers.toml"
_KEYS = {"id", "file", "find", "replace", "scope", "operator", "behaviour", "tests",
         "equivalent", "origin"}


@dataclass(frozen=True)
class Catalogue:
    """Mutants, the per-module test map and the likely killers (see the module docstring)."""
    seed: int
    modules: dict
    mutants: tuple
    first: dict = field(default_factory=dict)

    def tests_for(self, mutant):
        """The pytest arguments that run the tests covering ``mutant``: its likely killer
        first, then its own tests or its module's entry."""
        if mutant.tests:
            tests = list(mutant.tests)
        elif mutant.file not in self.modules:
            raise ValueError(f"mutant {mutant.id}: module {mutant.file} has no entry in "
                             "[modules] and the mutant names no tests")
        else:
            tests = list(self.modules[mutant.file])
        first = self.first.get(mutant.id)
        return ([first] if first else []) + tests


def killer_of(detail):
    """The test that killed a mutant, from its result's detail (``FAILED tests/a.py::t[2] -
    ...`` gives ``tests/a.py::t``, a collection ``ERROR tests/a.py`` gives the file), or None."""
    found = re.search(r"(?:FAILED|ERROR) (tests/[^\s\[]+)", detail)
    return found.group(1) if found else None


def write_killers(path, first, mutants):
    """Write ``first`` ({id: test}) to the killers file ``path``, in catalogue order, keeping
    only ids of ``mutants``."""
    lines = ["# The likely killer of each mutant: the test that failed first when it was last",
             "# killed. Written by python -m ahasd.mutation run --record-killers; run first.",
             "", "[first]"]
    lines += [f"{_string(m.id)} = {_string(first[m.id])}" for m in mutants if m.id in first]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def load(path=DEFAULT_PATH):
    """Read and check a catalogue: unique ids, known keys, a test map entry for every mutant;
    with the killers file beside it if there is one (entries of unknown ids are ignored)."""
    path = Path(path)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    modules = {k: list(v) for k, v in data.get("modules", {}).items()}
    mutants, ids = [], set()
    for n, entry in enumerate(data.get("mutant", []), 1):
        unknown = set(entry) - _KEYS
        if unknown:
            raise ValueError(f"{path}: mutant #{n} has unknown keys {sorted(unknown)}")
        missing = {"id", "file", "find", "replace"} - set(entry)
        if missing:
            raise ValueError(f"{path}: mutant #{n} lacks {sorted(missing)}")
        if entry["id"] in ids:
            raise ValueError(f"{path}: mutant id {entry['id']!r} is used twice")
        ids.add(entry["id"])
        mutant = Mutant(**{**entry, "tests": tuple(entry.get("tests", ()))})
        mutants.append(mutant)
    killers = path.with_name(KILLERS_NAME)
    first = (tomllib.loads(killers.read_text(encoding="utf-8")).get("first", {})
             if killers.is_file() else {})
    catalogue = Catalogue(seed=data.get("seed", 0), modules=modules, mutants=tuple(mutants),
                          first={k: v for k, v in first.items() if k in ids})
    for mutant in mutants:
        catalogue.tests_for(mutant)
    return catalogue


def _string(value):
    # A TOML basic string: JSON's escapes are a subset of TOML's for the characters used here.
    import json
    return json.dumps(value, ensure_ascii=False)


def to_toml(mutants):
    """``[[mutant]]`` tables for ``mutants`` (to append to a catalogue)."""
    blocks = []
    for m in mutants:
        lines = ["[[mutant]]"]
        for key in ("id", "file", "scope", "find", "replace", "operator", "origin", "behaviour"):
            lines.append(f"{key} = {_string(getattr(m, key))}")
        if m.tests:
            lines.append(f"tests = [{', '.join(_string(t) for t in m.tests)}]")
        if m.equivalent:
            lines.append(f"equivalent = {_string(m.equivalent)}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
