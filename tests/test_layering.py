"""The layering table of docs/architecture.md section 8, enforced on every import of every module
of the layered packages (imports inside functions and relative imports included)."""

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"


def layering_table():
    """{package: (allowed ahasd packages, third-party modules, {optional module: {module names}})}
    from the table under "## 8." of docs/architecture.md."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## 8. Code layout and layering"):]
    rows = [line for line in section.splitlines() if line.startswith("| `ahasd.")]
    table = {}
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        package = cells[0].strip("`")
        allowed = {f"ahasd.{name.strip()}" for name in cells[1].split(",") if name.strip()}
        third = {name.strip() for name in cells[2].split(",") if name.strip()}
        optional = {}
        # "matplotlib (`sim.system.plots`, `sim.system.sweep`), torch, transformers (`...`)"
        pending = []
        for part in re.finditer(r"([\w.]+)(?:\s*\(([^)]*)\))?", cells[3]):
            pending.append(part.group(1))
            if part.group(2):
                modules = {f"ahasd.{m}" for m in re.findall(r"`([\w.]+)`", part.group(2))}
                for name in pending:
                    optional[name] = modules
                pending = []
        assert not pending, f"optional packages without named modules in the row of {package}"
        table[package] = (allowed | {package}, third, optional)
    return table


def package_folders():
    """{"ahasd.hw": ROOT/"hw", ...}: the sub-packages that ahasd/ links to top-level folders."""
    return {f"ahasd.{link.name}": link.resolve() for link in sorted((ROOT / "ahasd").iterdir())
            if link.is_symlink()}


def modules_of(package, folder):
    for path in sorted(folder.rglob("*.py")):
        rel = path.relative_to(folder).with_suffix("").parts
        is_package = rel[-1] == "__init__"
        name = ".".join([package, *(rel[:-1] if is_package else rel)])
        yield name, is_package, path


def imports_of(name, is_package, path):
    """Every module named by an import statement anywhere in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = name.split(".") if is_package else name.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            found.append((module, node.lineno))
            # `from ahasd import hw` names a sub-package
            if module == "ahasd":
                found += [(f"ahasd.{alias.name}", node.lineno) for alias in node.names]
    return found


def violations():
    table = layering_table()
    folders = package_folders()
    assert set(table) == set(folders), (
        f"docs/architecture.md section 8 lists {sorted(table)}, ahasd/ links {sorted(folders)}")
    stdlib = set(sys.stdlib_module_names)
    bad, count = [], 0
    for package, folder in folders.items():
        allowed, third, optional = table[package]
        for name, is_package, path in modules_of(package, folder):
            count += 1
            for target, line in imports_of(name, is_package, path):
                where = f"{path.relative_to(folder.parent)}:{line}"
                top = target.split(".")[0]
                if top == "ahasd":
                    parts = target.split(".")
                    owner = ".".join(parts[:2])
                    if len(parts) < 2 or owner not in allowed:
                        bad.append(f"{where}: {name} imports {target}")
                elif top in stdlib or top in third:
                    continue
                elif top in optional and any(name == m or name.startswith(m + ".")
                                             for m in optional[top]):
                    continue
                else:
                    bad.append(f"{where}: {name} imports {target} (third-party, not allowed "
                               f"in {package})")
    return bad, count


def test_every_import_follows_the_layering_table():
    bad, count = violations()
    assert count >= 100, f"the walk found only {count} modules"
    assert not bad, "imports against docs/architecture.md section 8:\n" + "\n".join(bad)


@pytest.mark.parametrize("source, expected", [
    ("from ahasd.sim.blocks.edc import EDC\n", "ahasd.sim.blocks.edc"),
    ("def f():\n    from ..sim import params\n", "ahasd.sim"),
    ("import amaranth.lib\n", "amaranth.lib"),
    ("from ahasd import sim\n", "ahasd.sim"),
])
def test_the_walk_sees_every_kind_of_import(tmp_path, source, expected):
    path = tmp_path / "x.py"
    path.write_text(source)
    assert expected in [t for t, _ in imports_of("ahasd.hw.x", False, path)]


def test_a_violation_is_reported(monkeypatch, tmp_path):
    """A fixture package that breaks the table: hw importing sim, and matplotlib outside its
    named module."""
    (tmp_path / "hw").mkdir()
    (tmp_path / "hw" / "__init__.py").write_text("")
    (tmp_path / "hw" / "bad.py").write_text("def f():\n    from ahasd.sim.blocks import edc\n"
                                            "import matplotlib\n")
    monkeypatch.setattr(sys.modules[__name__], "package_folders",
                        lambda: {p: (tmp_path / "hw" if p == "ahasd.hw" else tmp_path / "none")
                                 for p in layering_table()})
    bad, _ = violations()
    assert any("hw/bad.py:2" in b and "ahasd.sim.blocks" in b for b in bad)
    assert any("matplotlib" in b for b in bad)
