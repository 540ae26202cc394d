"""The application layer (``ahasd/`` without the symlinked library packages) has no import cycle.

Every module of ``ahasd/`` is parsed with :mod:`ast`; every import counts, at module level or
inside a function, absolute or relative, and so does a string naming a module of the layer
(``"ahasd.commands.area"``, ``"ahasd.bench.edc:bench"``: what ``importlib`` loads, as the CLI's
verb list and the bench table do). From these edges the test builds the module graph and the
graph of the layer's parts (its top-level modules and subpackages: ``ahasd.cli``,
``ahasd.commands``, ``ahasd.bench``, ...) and fails on any cycle, naming it. The library
packages (``ahasd.hw``, ``ahasd.sim``, ... symlinks to the top-level folders) are not walked as
part of the layer; a last test checks that they import nothing of it.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ahasd"
#: The library packages: symlinks under ahasd/ to the repository's top-level folders.
LIBRARY = ("hw", "sim", "spec", "tb", "cosim", "synth", "firmware")


def app_modules(package=PACKAGE, name="ahasd"):
    """``{module name: path}`` of every ``.py`` file under ``package``, symlinks skipped."""
    out = {}
    for path in sorted(package.iterdir()):
        if path.is_symlink() or path.name.startswith((".", "__pycache__")):
            continue
        if path.is_dir():
            if (path / "__init__.py").exists():
                out.update(app_modules(path, f"{name}.{path.name}"))
        elif path.suffix == ".py":
            out[name if path.name == "__init__.py" else f"{name}.{path.stem}"] = path
    return out


def _resolve(module, is_package, level, target):
    """The absolute name of ``from <level dots><target> import ...`` written in ``module``."""
    if level == 0:
        return target
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    if level > 1:
        base = base[:-(level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(module, path, known):
    """Sorted ``[(imported module, line)]`` of every import in ``path`` (module ``module``) that
    lands on a module of ``known``: import statements anywhere in the file, and string constants
    naming a known module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    top = module.partition(".")[0]
    # A string constant that names a module (optionally ``:attribute``), as importlib takes it.
    dynamic = re.compile(rf"({top}(?:\.\w+)+)(?::\w+)?")

    def land(name):
        """The known module ``name`` is, or the closest known package holding it (not the top
        package for a module outside the layer, such as ``ahasd.sim.x``)."""
        probe = name
        while probe and probe not in known:
            probe = probe.rpartition(".")[0]
        return None if not probe or (probe == top and name != top) else probe

    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module or "")
            # `from ahasd.bench import area_sweep` imports the module ahasd.bench.area_sweep.
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                     for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = dynamic.fullmatch(node.value)
            if match and match.group(1) in known:
                names = [match.group(1)]
        for name in names:
            target = land(name)
            if target is not None and target != module:
                found.add((target, node.lineno))
    return sorted(found)


def part_of(module):
    """The part of the layer a module belongs to: ``ahasd.commands.area`` -> ``ahasd.commands``,
    ``ahasd.cli`` -> ``ahasd.cli``."""
    return ".".join(module.split(".")[:2])


def find_cycles(graph):
    """The cycles of ``graph`` ({node: {successor: where}}): for each node on a cycle, a shortest
    cycle through it, each written from its smallest node, ``[[a, b, ..., a]]``, sorted and
    without repeats."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(node):                    # Tarjan's algorithm (the graphs are small)
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(set(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    cycles = set()
    for component in components:
        for node in component:
            cycle = _cycle_through(graph, component, node)[:-1]
            first = cycle.index(min(cycle))
            cycle = cycle[first:] + cycle[:first]
            cycles.add(tuple(cycle + cycle[:1]))
    return sorted(list(c) for c in cycles)


def _cycle_through(graph, component, start):
    """A shortest cycle from ``start`` back to itself inside ``component`` (breadth first)."""
    paths, seen = [[start]], {start}
    while paths:
        grown = []
        for path in paths:
            for succ in sorted(graph.get(path[-1], ())):
                if succ == start:
                    return path + [start]
                if succ in component and succ not in seen:
                    seen.add(succ)
                    grown.append(path + [succ])
        paths = grown
    raise AssertionError(f"{sorted(component)} is not strongly connected")


def graphs(modules, root=ROOT):
    """``(module graph, part graph)``: {node: {successor: "file:line"}} each, files relative
    to ``root``."""
    module_graph, part_graph = {}, {}
    for module, path in modules.items():
        module_graph.setdefault(module, {})
        part_graph.setdefault(part_of(module), {})
        for target, line in imports_of(module, path, modules):
            where = f"{path.relative_to(root)}:{line}"
            module_graph[module].setdefault(target, where)
            if part_of(target) != part_of(module):
                part_graph[part_of(module)].setdefault(part_of(target), where)
    return module_graph, part_graph


def describe(graph, cycles):
    return "; ".join(" -> ".join(c) + " (" + ", ".join(graph[a][b] for a, b in zip(c, c[1:]))
                     + ")" for c in cycles)


MODULES = app_modules()
MODULE_GRAPH, PART_GRAPH = graphs(MODULES)


def test_the_walk_sees_the_layer_and_skips_the_library():
    assert {"ahasd.cli", "ahasd.errors", "ahasd.files", "ahasd.commands.simulate",
            "ahasd.bench.area_sweep", "ahasd.mutation.runner"} <= set(MODULES)
    assert not any(m.split(".")[1] in LIBRARY for m in MODULES if "." in m)
    # Function-level imports and importlib strings are edges.
    assert "ahasd.commands.simulate" in MODULE_GRAPH["ahasd.cli"]
    assert "ahasd.bench.edc" in MODULE_GRAPH["ahasd.commands.bench"]


def test_no_module_cycle():
    cycles = find_cycles(MODULE_GRAPH)
    assert not cycles, f"import cycles between modules of ahasd/: {describe(MODULE_GRAPH, cycles)}"


def test_no_cycle_between_the_parts_of_the_layer():
    cycles = find_cycles(PART_GRAPH)
    assert not cycles, (f"import cycles between the parts of ahasd/: "
                        f"{describe(PART_GRAPH, cycles)}")


def test_the_library_imports_nothing_of_the_layer():
    layer = {part_of(m) for m in MODULES if m != "ahasd"}
    bad = []
    for folder in LIBRARY:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom) and
                         node.level == 0 else [])
                bad += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                        if part_of(n) in layer]
    assert not bad, "; ".join(bad)


# The checker itself, on a tree with the cycles it must find.

FIXTURE = {
    "__init__.py": "",
    "cli.py": "import importlib\nVERBS = ['pkg.commands.a']\n",
    "files.py": "def f():\n    from pkg.cli import main\n",
    "commands/__init__.py": "",
    "commands/a.py": "from ..files import f\nfrom . import b\n",
    "commands/b.py": "def g():\n    from pkg.bench import x\n",
    "bench/__init__.py": "",
    "bench/x.py": "from pkg.bench.y import z\n",
    "bench/y.py": "def h():\n    import pkg.bench.x\n    return 'pkg.commands.b:g'\n",
    "lib.py": "import os\n",
}


@pytest.fixture
def fixture_modules(tmp_path):
    for rel, text in FIXTURE.items():
        (tmp_path / "pkg" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / rel).write_text(text)
    (tmp_path / "pkg" / "hw").symlink_to(tmp_path / "pkg" / "commands")  # skipped
    return tmp_path, app_modules(tmp_path / "pkg", "pkg")


def test_the_checker_finds_hidden_and_relative_cycles(fixture_modules):
    root, modules = fixture_modules
    assert "pkg.hw.a" not in modules and "pkg.commands.a" in modules
    module_graph, part_graph = graphs(modules, root)
    assert find_cycles(module_graph) == [
        ["pkg.bench.x", "pkg.bench.y", "pkg.bench.x"],
        ["pkg.bench.x", "pkg.bench.y", "pkg.commands.b", "pkg.bench.x"],
        ["pkg.cli", "pkg.commands.a", "pkg.files", "pkg.cli"]]
    assert find_cycles(part_graph) == [
        ["pkg.bench", "pkg.commands", "pkg.bench"],
        ["pkg.cli", "pkg.commands", "pkg.files", "pkg.cli"]]
    assert describe(module_graph, [["pkg.bench.x", "pkg.bench.y", "pkg.bench.x"]]) == (
        "pkg.bench.x -> pkg.bench.y -> pkg.bench.x (pkg/bench/x.py:1, pkg/bench/y.py:2)")


def test_an_acyclic_graph_passes():
    assert find_cycles({"a": {"b": ""}, "b": {"c": ""}, "c": {}, "d": {"a": ""}}) == []
