"""``ahasd tvc replay``: output format, golden == RTL, malformed input."""

import io
import json

import pytest

from ahasd.cli import main
from ahasd.sim.blocks.tvc import TVCParams
from ahasd.sim.traces.tvc import boundary_trace, dump, random_trace, realistic_trace

HAND = """\
{"op":"preset","table":"nvct","ratio":102400}
{"op":"preset","table":"pdct","ratio":768000}

{"op":"preset","table":"pvct","ratio":3072000}
{"op":"decide","kv_len":100,"now":10000,"pending":8}
{"op":"decide","kv_len":100,"now":40000,"pending":8}
{"op":"record","table":"pdct","cycles":5,"length":0}
{"op":"config","freq_ratio":16384}
{"op":"decide","kv_len":1000,"now":0,"pending":5}
"""


def replay(tmp_path, capsys, text, *options):
    path = tmp_path / "trace.jsonl"
    path.write_text(text)
    status = main(["tvc", "replay", str(path), *options])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_replay_prints_one_line_per_decide(tmp_path, capsys):
    status, out, err = replay(tmp_path, capsys, HAND)
    assert status == 0 and err == ""
    # See test_sim_tvc.test_decide_by_hand: C_left = 29001 fits 2 x 12000; then C_left < 0;
    # then 400000 - 3000 fits 8, capped by pending.
    assert [json.loads(line) for line in out.splitlines()] == [
        {"insert": True, "length": 2}, {"insert": False, "length": 0},
        {"insert": True, "length": 5}]


def test_replay_from_stdin(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(HAND))
    assert main(["tvc", "replay", "-"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3


@pytest.mark.slow
def test_golden_and_rtl_print_the_same(tmp_path, capsys):
    params = TVCParams(depth=8, max_preverify_len=6)
    ops = (realistic_trace(300, seed=1, params=params) + random_trace(300, seed=2, params=params)
           + boundary_trace(300, seed=3, params=params))
    options = ["--depth", "8", "--max-preverify-len", "6"]
    status, golden, _ = replay(tmp_path, capsys, dump(ops), *options)
    assert status == 0
    status, rtl, err = replay(tmp_path, capsys, dump(ops), "--rtl", *options)
    assert status == 0 and err == ""
    assert rtl == golden and len(golden.splitlines()) == 900
    assert len(set(golden.splitlines())) == 7        # every length 0..6 occurs


@pytest.mark.parametrize("line, message", [
    ('{"op":"decide","kv_len":1,"now":2}', "line 3: decide: missing pending"),
    ('{"op":"record","table":"nvct","cycles":-4,"length":1}',
     "line 3: cycles must be an integer in 0..4294967295, not -4"),
    ('not json', "line 3: not JSON"),
    ('{"op":"preset","table":"gpu","ratio":1}', "line 3: table must be one of nvct, pdct, pvct"),
])
def test_malformed_line_is_reported_with_its_number(tmp_path, capsys, line, message):
    text = '{"op":"decide","kv_len":1,"now":2,"pending":3}\n\n' + line + "\n"
    status, out, err = replay(tmp_path, capsys, text)
    assert status == 2 and out == ""
    assert err.startswith(f"ahasd: error: {tmp_path / 'trace.jsonl'}: {message}")
    assert len(err.splitlines()) == 1


def test_bad_option_and_missing_file(tmp_path, capsys):
    status, out, err = replay(tmp_path, capsys, HAND, "--depth", "3")
    assert status == 2 and "depth must be a power of two in 1..64, not 3" in err
    assert main(["tvc", "replay", str(tmp_path / "none.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_verilog_tvc_is_written_and_lint_clean(tmp_path, capsys):
    assert main(["verilog", "tvc", "-o", str(tmp_path)]) in (0, None)
    assert capsys.readouterr().out.splitlines() == [
        f"wrote {tmp_path / 'tvc.v'} (lint clean)", f"wrote {tmp_path / 'ahasd_blocks.core'}"]
    assert "module tvc(" in (tmp_path / "tvc.v").read_text()
