"""Drift: the headlines must stay within 1 % of the committed reference summaries.

The headlines are means over the decoding seeds (5 for the full grid, 3 for the quick one) with
their intervals (``headlines.intervals``), every number of which is checked the same way.

A change that moves a headline on purpose regenerates the reference it moved:

* quick grid (this test, ``make test``)::

    .venv/bin/python -c "from pathlib import Path; from ahasd.sim.system.reproduce import reproduce; \
reproduce(Path('build/rq'), quick=True, jobs=1, max_files=40, plots=False)"
    cp build/rq/summary.json sim/system/reference/summary-quick.json

* full grid (``make regress``)::

    .venv/bin/ahasd reproduce --out build/repro && cp build/repro/summary.json \
sim/system/reference/summary.json
"""

import json
from importlib import resources

import pytest

from ahasd.sim.system.reproduce import reproduce


def reference(name):
    return json.loads(resources.files("ahasd.sim.system").joinpath("reference", name).read_text())


def drift(ours, ref, path="headlines"):
    """Every numeric leaf that moved by more than 1 % (or changed shape)."""
    out = []
    if isinstance(ref, dict):
        if not isinstance(ours, dict) or set(ours) != set(ref):
            return [f"{path}: keys changed"]
        for k in ref:
            out += drift(ours[k], ref[k], f"{path}.{k}")
    elif isinstance(ref, list):
        if not isinstance(ours, list) or len(ours) != len(ref):
            return [f"{path}: length changed"]
        for i, (a, b) in enumerate(zip(ours, ref)):
            out += drift(a, b, f"{path}[{i}]")
    elif isinstance(ref, (int, float)) and not isinstance(ref, bool):
        if ours is None or abs(ours - ref) > 0.01 * abs(ref) + 1e-12:
            out.append(f"{path}: {ours} vs reference {ref}")
    elif ours != ref:
        out.append(f"{path}: {ours!r} vs reference {ref!r}")
    return out


def test_drift_check_catches_a_move():
    ref = {"a": {"b": [1.0, 2.0]}, "c": "x"}
    assert drift({"a": {"b": [1.005, 2.0]}, "c": "x"}, ref) == []
    assert drift({"a": {"b": [1.02, 2.0]}, "c": "x"}, ref) == [
        "headlines.a.b[0]: 1.02 vs reference 1.0"]


def test_quick_grid_matches_its_reference(tmp_path):
    h, _ = reproduce(tmp_path, quick=True, jobs=1, max_files=40,
                     plots=False)
    assert drift(h, reference("summary-quick.json")["headlines"]) == []


@pytest.mark.regress
def test_full_grid_matches_its_reference(tmp_path):
    h, _ = reproduce(tmp_path, jobs=2, plots=False)
    ref = reference("summary.json")
    assert json.loads((tmp_path / "summary.json").read_text())["grid"] == ref["grid"]
    assert drift(h, ref["headlines"]) == []
