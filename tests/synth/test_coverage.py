"""ahasd.synth.coverage: Verilator coverage files merged and summarised per block."""

import json

import pytest

from ahasd.synth.coverage import main, read_points, summarise


def point(kind, module, count, *, line=1, name="x[0]:0->1", top="top"):
    key = (f"\x01f\x02/b/{top}.v\x01l\x02{line}\x01n\x020\x01t\x02{kind}\x01page\x02v_{kind}/"
           f"{module}\x01o\x02{name}\x01h\x02{top}.{module}")
    return f"C '{key}' {count}"


def write(path, lines):
    path.write_text("# SystemC::Coverage-3\n" + "\n".join(lines) + "\n")


def test_runs_merge_and_blocks_are_separate(tmp_path):
    write(tmp_path / "a.dat", [point("line", "top", 0, line=5), point("line", "top", 3, line=6),
                               point("toggle", "top.edc", 0, name="llr[1]:0->1"),
                               point("toggle", "top.edc", 0, name="llr[2]:0->1"),
                               point("toggle", "top.edc", 0, name="__024123:0->1")])
    write(tmp_path / "b.dat", [point("line", "top", 2, line=5)])
    rows = summarise(read_points(sorted(tmp_path.glob("*.dat"))))
    by_block = {r["block"]: r for r in rows}
    assert by_block["top"]["line"] == {"hit": 2, "total": 2, "missed": []}   # merged: 5 hit
    # Yosys' anonymous wires are not counted; a signal's missed bits are counted.
    assert by_block["top.edc"]["toggle"] == {"hit": 0, "total": 2, "missed": ["llr (2)"]}
    assert main([str(tmp_path)]) == 0
    assert json.loads((tmp_path / "summary.json").read_text()) == rows
    assert "| top | top.edc | 0/0 | 100.0 | 0/2 | 0.0 |" in (tmp_path / "summary.md").read_text()


def test_bad_files_are_named(tmp_path, capsys):
    assert main([str(tmp_path)]) == 1
    assert "no coverage files (*.dat) in" in capsys.readouterr().err
    (tmp_path / "x.dat").write_text("hello\n")
    with pytest.raises(ValueError, match=r"x\.dat is not a Verilator coverage file"):
        read_points([tmp_path / "x.dat"])
    write(tmp_path / "y.dat", ["C 'broken"])
    with pytest.raises(ValueError, match=r"y\.dat:2: unreadable coverage line"):
        read_points([tmp_path / "y.dat"])
