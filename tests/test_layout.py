"""The repository is an ordinary package tree (docs/architecture.md section 8): ahasd/'s
sub-packages are relative symlinks to the top-level folders, pyproject.toml lists every package,
and a type checker run from the repository root, without site-packages (so without the editable
install), resolves every ``ahasd.*`` import to its file."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINKED = ["hw", "spec", "sim", "tb", "cosim", "synth", "firmware"]


def test_sub_packages_are_relative_links_to_top_level_folders():
    for name in LINKED:
        link = ROOT / "ahasd" / name
        assert link.is_symlink(), f"ahasd/{name} is not a symlink"
        assert os.readlink(link) == f"../{name}", f"ahasd/{name} -> {os.readlink(link)}"
        assert (ROOT / name / "__init__.py").is_file()
    linked = sorted(p.name for p in (ROOT / "ahasd").iterdir() if p.is_symlink())
    assert linked == sorted(LINKED)


def test_pyproject_lists_every_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = set()
    for folder, dirs, files in os.walk(ROOT / "ahasd", followlinks=True):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if "__init__.py" in files:
            found.add(".".join(Path(folder).relative_to(ROOT).parts))
    # data-only folders are declared as packages too (they ship TOML and JSON)
    data_only = {p for p in listed if not (ROOT.joinpath(*p.split(".")) / "__init__.py").exists()}
    assert found == listed - data_only, (sorted(found - listed), sorted(listed - found))


@pytest.mark.slow
def test_a_type_checker_resolves_every_ahasd_import_from_the_root():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-site-packages", "--no-incremental",
         "--config-file", os.devnull, "--follow-imports=silent", "--cache-dir", os.devnull,
         "-p", "ahasd"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert "Success" in done.stdout or "error" in done.stdout, done.stderr[-2000:]
    unresolved = [line for line in done.stdout.splitlines()
                  if "import-not-found" in line and 'named "ahasd' in line]
    assert not unresolved, "\n".join(unresolved)
    # it did look: third-party modules are unresolved without site-packages
    assert 'named "amaranth' in done.stdout
