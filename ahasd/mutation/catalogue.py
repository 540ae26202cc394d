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
"""

import tomllib
from dataclasses import dataclass
from pathlib import Path

from ahasd.mutation.locate import Mutant

__all__ = ["Catalogue", "load", "DEFAULT_PATH", "to_toml"]

DEFAULT_PATH = Path(__file__).with_name("catalogue.toml")
_KEYS = {"id", "file", "find", "replace", "scope", "operator", "behaviour", "tests",
         "equivalent", "origin"}


@dataclass(frozen=True)
class Catalogue:
    """Mutants and the per-module test map (see the module docstring)."""
    seed: int
    modules: dict
    mutants: tuple

    def tests_for(self, mutant):
        """The pytest arguments that run the tests covering ``mutant``."""
        if mutant.tests:
            return list(mutant.tests)
        if mutant.file not in self.modules:
            raise ValueError(f"mutant {mutant.id}: module {mutant.file} has no entry in "
                             "[modules] and the mutant names no tests")
        return list(self.modules[mutant.file])


def load(path=DEFAULT_PATH):
    """Read and check a catalogue: unique ids, known keys, a test map entry for every mutant."""
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
    catalogue = Catalogue(seed=data.get("seed", 0), modules=modules, mutants=tuple(mutants))
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
