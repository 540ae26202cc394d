"""ahasd.sim.traces.lines.spooled: ``-`` becomes a temporary copy of standard input (a text
stream here, as in tests; whole, however long), removed afterwards; a path passes through."""

import io
import os
import sys

from ahasd.sim.traces.lines import spooled


def test_standard_input_is_copied_whole_and_removed(monkeypatch):
    text = "".join(f'{{"line": {n}, "pad": "{"x" * 50}"}}\n' for n in range(30000))   # > 1 MiB
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    with spooled("-") as name:
        assert name != "-"
        with open(name, encoding="utf-8") as f:
            assert f.read() == text
    assert not os.path.exists(name)


def test_a_path_passes_through(tmp_path):
    path = tmp_path / "t.jsonl"
    with spooled(path) as got:
        assert got == path
