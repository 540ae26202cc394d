"""`pip install .` (not editable) gives the same import namespace as the source tree."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"ahasd": "ahasd", "hw": "ahasd.hw", "sim": "ahasd.sim", "spec": "ahasd.spec", "firmware": "ahasd.firmware",
           "synth": "ahasd.synth", "cosim": "ahasd.cosim", "tb": "ahasd.tb"}


def source_modules():
    """Every module of the source tree under its import name."""
    names = []
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            if parts and parts[-1] == "__main__":
                continue
            names.append(".".join([package, *parts]))
    return names


@pytest.mark.slow
def test_regular_install_imports_every_module(tmp_path):
    target = tmp_path / "site"
    built = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps",
                            "--target", str(target), str(ROOT)],
                           check=True, capture_output=True, text=True, cwd=tmp_path)
    # A data folder that is not a declared package is shipped only by luck of setuptools.
    assert "absent from the `packages` configuration" not in built.stdout + built.stderr
    modules = source_modules()
    assert "ahasd.hw.edc" in modules
    # Run outside the source tree, with the installed copy first on the path.
    script = (
        "import importlib, sys\n"
        f"sys.path.insert(0, {str(target)!r})\n"
        "import ahasd\n"
        f"assert ahasd.__file__.startswith({str(target)!r}), ahasd.__file__\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "from ahasd.synth.yosys import LIBERTY\n"
        "assert LIBERTY.exists(), LIBERTY\n"
        # the data the system simulator ships: platform and model TOML, reference summaries
        "from ahasd.sim.system.config import load_config\n"
        "load_config()\n"
        "from importlib import resources\n"
        "assert resources.files('ahasd.sim.system.reference').joinpath('summary.json').is_file()\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
