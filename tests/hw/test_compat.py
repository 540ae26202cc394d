"""The non-public Amaranth APIs the project relies on (all in ahasd.hw.compat) still work; an
Amaranth upgrade that removes or changes one fails here, naming it."""

import ast
import importlib
import pathlib
import re

import pytest

from ahasd.hw import compat

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_private_api_still_works():
    found = compat.problems()
    assert not found, "Amaranth APIs that moved (fix ahasd/hw/compat.py):\n" + "\n".join(found)


def test_a_broken_api_is_named(monkeypatch):
    monkeypatch.setattr(compat, "silence_unused", lambda elaboratable: None)

    class NotAFlipFlop:
        pass
    monkeypatch.setattr(compat, "FlipFlop", NotAFlipFlop)
    found = compat.problems()
    assert len(found) == 2
    assert found[0].startswith("_MustUse__silence (silence_unused): does not behave as used")
    assert found[1].startswith("amaranth.hdl._ir.build_netlist / _nir cells")


@pytest.mark.parametrize("name", ["PortDirection", "Net", "FlipFlop", "SyncWritePort",
                                  "SyncReadPort", "AsyncReadPort"])
def test_names_resolve(name):
    assert getattr(compat, name) is not None, f"amaranth internal {name} is gone"


def test_the_version_checked_against():
    import amaranth
    assert amaranth.__version__.startswith(compat.AMARANTH_VERSION), (
        f"amaranth {amaranth.__version__}: the private APIs in ahasd.hw.compat were checked "
        f"against {compat.AMARANTH_VERSION}; re-check them and update AMARANTH_VERSION")


def _private_uses(tree):
    """``(line, text)`` of every import of a private Amaranth module or name and every access to
    a name-mangled private attribute (``x._Class__attr``) in a module's syntax tree."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "amaranth":
            parts = node.module.split(".") + [alias.name for alias in node.names]
            if any(part.startswith("_") for part in parts):
                yield node.lineno, f"from {node.module} import " + \
                    ", ".join(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "amaranth" and \
                        any(part.startswith("_") for part in alias.name.split(".")):
                    yield node.lineno, f"import {alias.name}"
        elif isinstance(node, ast.Attribute) and re.fullmatch(r"_[A-Za-z]\w*__\w+", node.attr):
            yield node.lineno, f".{node.attr}"


def test_no_private_api_outside_compat():
    offenders = []
    for folder in ("hw", "synth", "tb", "cosim"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "compat.py":
                continue
            for line, text in _private_uses(ast.parse(path.read_text())):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {text}")
    assert not offenders, "non-public Amaranth API outside ahasd.hw.compat:\n" + \
        "\n".join(offenders)


def test_the_scan_finds_private_uses():
    code = ("from amaranth.hdl import _ir\nfrom amaranth.hdl._ir import PortDirection\n"
            "import amaranth.hdl._nir\nx._MustUse__silence = True\nfrom amaranth import Module\n")
    assert [line for line, _ in _private_uses(ast.parse(code))] == [1, 2, 3, 4]


def test_compat_is_importable_alone():
    importlib.reload(compat)
