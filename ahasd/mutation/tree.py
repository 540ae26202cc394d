"""A private copy of the source tree, importable as ``ahasd``, for one mutant's test run.

The repository is an ordinary package tree: ``ahasd/hw`` is a relative symlink to the top-level
folder ``hw/`` (and so on for every sub-package, see docs/architecture.md, "Layout"), so a copy
made with its symlinks kept imports as the repository does. :func:`make_tree` copies the
top-level folders, ``tests/``, ``docs/`` and ``pyproject.toml``; with ``<dest>`` first on
``PYTHONPATH`` the ordinary path finder imports every ``ahasd`` module from the copy.
:func:`check_imports` proves it in a subprocess, and the probe plugin (:data:`PROBE_SOURCE`)
proves it for the mutated module inside each test run.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["package_dirs", "make_tree", "copy_path", "module_name", "test_env",
           "check_imports", "PROBE_MODULE", "PROBE_SOURCE"]

#: Name of the pytest plugin written into each copy (loaded with ``-p``).
PROBE_MODULE = "_ahasd_mutation_probe"

#: At the end of the session, the plugin records where the mutated module was imported from.
PROBE_SOURCE = '''\
"""Written by ahasd.mutation: where did the tests import the mutated module from?"""
import json
import os
import sys


def pytest_sessionfinish(session, exitstatus):
    name = os.environ["AHASD_MUTATION_MODULE"]
    module = sys.modules.get(name)
    with open(os.environ["AHASD_MUTATION_PROBE"], "w", encoding="utf-8") as out:
        json.dump({"module": name, "file": getattr(module, "__file__", None)}, out)
'''

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "build", ".hypothesis", "*.egg-info")


def package_dirs(repo):
    """{import package: repository folder}: ``ahasd`` itself and every sub-package that
    ``ahasd/`` links to a top-level folder (``{"ahasd.hw": "hw", ...}``)."""
    root = Path(repo) / "ahasd"
    dirs = {"ahasd": "ahasd"}
    for link in sorted(root.iterdir()):
        if link.is_symlink():
            target = (root / os.readlink(link)).resolve()
            dirs[f"ahasd.{link.name}"] = target.relative_to(Path(repo).resolve()).as_posix()
    return dirs


def copy_path(repo_path, dirs):
    """Where the repository file ``repo_path`` (``hw/tvc.py``) lies in a copy: the same place
    (the copy keeps the repository's layout and its symlinks)."""
    return Path(repo_path)


def module_name(repo_path, dirs):
    """Import name of the repository module ``repo_path`` (``hw/tvc.py`` -> ``ahasd.hw.tvc``)."""
    parts = Path(repo_path).with_suffix("").parts
    for package, folder in sorted(dirs.items(), key=lambda kv: -len(Path(kv[1]).parts)):
        top = Path(folder).parts
        if parts[:len(top)] == top:
            rest = [p for p in parts[len(top):] if p != "__init__"]
            return ".".join([package, *rest])
    return ".".join(p for p in parts if p != "__init__")


def make_tree(repo, dest):
    """Copy the packages, ``tests/``, ``docs/`` and ``pyproject.toml`` of ``repo`` to ``dest``;
    return :func:`package_dirs` of the copy."""
    repo, dest = Path(repo), Path(dest)
    dirs = package_dirs(repo)
    dest.mkdir(parents=True, exist_ok=True)
    for folder in sorted(set(dirs.values()) | {"tests", "docs"}):
        if (repo / folder).is_dir():
            shutil.copytree(repo / folder, dest / folder, ignore=_IGNORE, symlinks=True)
    shutil.copy2(repo / "pyproject.toml", dest / "pyproject.toml")
    (dest / f"{PROBE_MODULE}.py").write_text(PROBE_SOURCE, encoding="utf-8")
    return dirs


def test_env(dest, **extra):
    """Environment of a test run in the copy ``dest``: the copy first on the path, no bytecode
    written (a mutant and its restore may share a size and a second of mtime)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(dest)] + [p for p in
                                                       env.get("PYTHONPATH", "").split(os.pathsep)
                                                       if p])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def check_imports(dest, packages, python=sys.executable):
    """Raise unless every package in ``packages`` imports from the copy ``dest``."""
    script = ("import importlib, json, sys\n"
              f"print(json.dumps({{n: importlib.import_module(n).__file__ for n in {list(packages)!r}}}))")
    done = subprocess.run([python, "-c", script], cwd=dest, env=test_env(dest),
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"the copy in {dest} does not import: {done.stderr.strip()}")
    files = json.loads(done.stdout)
    root = Path(dest).resolve()
    wrong = {n: f for n, f in files.items() if root not in Path(f).resolve().parents}
    if wrong:
        raise RuntimeError(f"packages imported from outside the copy {dest}: {wrong}")
    return files
