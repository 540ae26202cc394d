"""Each failure listed in issue 9 (wrong and hostile input), now: one line ``ahasd: error: ...``
naming the file or option, exit 2, nothing on standard output, or the documented behaviour."""

import io
import json
import os
import sys

import pytest

from ahasd.cli import main
from ahasd.commands.bench import finite_or_null
from ahasd.sim.traces.large import decoding_lines

DRAFT = '{"op":"draft","entropy":2.0}\n'


def run(capsys, argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def error_line(status, out, err):
    assert status == 2 and out == "", (status, out, err)
    assert err.startswith("ahasd: error: ") and err.count("\n") == 1, err
    return err


@pytest.fixture
def good_trace(tmp_path):
    path = tmp_path / "good.jsonl"
    path.write_text("".join(decoding_lines(40, seed=2)))
    return path


@pytest.mark.parametrize("verb", [["edc", "replay"], ["trace", "stats"], ["tvc", "replay"]])
def test_non_utf8_file_and_the_same_bytes_on_stdin(tmp_path, capsys, monkeypatch, verb):
    first = b'{"op":"config","freq_ratio":1}\n' if verb[0] == "tvc" else DRAFT.encode()
    data = first + b'{"op":"dr\xe4ft"}\n'
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(data)
    from_file = error_line(*run(capsys, verb + [path]))
    from_stdin = error_line(*run(capsys, verb + ["-"], stdin=data, monkeypatch=monkeypatch))
    if verb[0] == "trace":
        message = "line 1: not an ahasd-trace header"     # the first line already fails there
    else:
        message = "line 2: not UTF-8 text (byte 0xe4 at column 10)"   # the physical line
    assert f"{path}: {message}" in from_file and f"stdin: {message}" in from_stdin


@pytest.mark.parametrize("value, message", [
    ("-Infinity", "-Infinity is not a JSON number"),
    ("Infinity", "Infinity is not a JSON number"),
    ("1" + "0" * 400, "an integer of 401 digits is out of range"),        # too large for a float
    ("1" + "0" * 5000, "an integer of 5001 digits is out of range"),      # Python's 4300 limit
    ("1e999", "the number '1e999' is out of the range of a float"),
])
def test_hostile_entropy(tmp_path, capsys, value, message):
    path = tmp_path / "t.jsonl"
    path.write_text(DRAFT + '{"op":"draft","entropy":%s}\n' % value)
    assert f"line 2: {message}" in error_line(*run(capsys, ["edc", "replay", path]))


def test_thousands_of_digits_anywhere(tmp_path, capsys, good_trace):
    huge = "9" * 5000
    tvc = tmp_path / "tvc.jsonl"
    tvc.write_text('{"op":"decide","kv_len":1,"now":%s,"pending":1}\n' % huge)
    assert "line 1: an integer of 5000 digits" in error_line(*run(capsys, ["tvc", "replay", tvc]))
    lines = good_trace.read_text().splitlines()
    lines[0] = lines[0].replace('"vocab_size":4096', f'"vocab_size":{huge}')
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    for verb in (["trace", "stats"], ["edc", "replay"]):
        assert "line 1: an integer of 5000 digits" in error_line(*run(capsys, verb + [bad]))


def test_directory_to_trace_stats(tmp_path, capsys):
    assert f"cannot read {tmp_path}: is a directory" in error_line(
        *run(capsys, ["trace", "stats", tmp_path]))


def test_empty_trace_through_tvc_replay_rtl(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    assert run(capsys, ["tvc", "replay", "--rtl", empty]) == (0, "", "")


def test_decode_unwritable_out_fails_before_decoding(tmp_path, capsys, monkeypatch):
    (tmp_path / "file").write_text("x")
    called = []
    monkeypatch.setattr("ahasd.sim.decoding.golden.load_models", lambda *a, **k: called.append(1))
    err = error_line(*run(capsys, ["decode", "--out", tmp_path / "file" / "t.jsonl"]))
    assert "cannot write" in err and called == []


def test_written_files_get_the_usual_mode(tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    assert run(capsys, ["decode", "--tokens", "5", "--out", out])[0] == 0
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


def test_failed_decode_keeps_the_old_file(tmp_path, capsys, monkeypatch):
    out = tmp_path / "t.jsonl"
    out.write_text("old")

    def boom(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr("ahasd.sim.decoding.lookahead.decode", boom)
    status, stdout, err = run(capsys, ["decode", "--tokens", "5", "--out", out])
    assert status == 130 and err == "ahasd: interrupted\n"
    assert out.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


@pytest.mark.parametrize("argv", [["demo", "--seed", "-1"], ["decode", "--seed", "-1", "--out", "x"],
                                  ["decode", "--seed", "1" * 30, "--out", "x"]])
def test_seed_errors_name_the_flag_and_come_first(capsys, argv):
    err = error_line(*run(capsys, argv))
    assert "argument --seed: must be an integer in 0..18446744073709551615" in err


def test_decode_verify_cost_inf_is_rejected(tmp_path, capsys):
    for value in ("inf", "nan", "-1", "0", "1e300"):
        err = error_line(*run(capsys, ["decode", "--verify-cost", value, "--out", tmp_path / "t"]))
        assert "argument --verify-cost: must be a finite number in (0, 1e+06]" in err
    assert not (tmp_path / "t").exists()


def strict_json(text):
    def refuse(name):
        raise AssertionError(f"{name} in JSON output")
    return json.loads(text, parse_constant=refuse)


def test_json_output_is_strict(capsys, good_trace):
    status, out, _ = run(capsys, ["trace", "stats", "--json", good_trace])
    assert status == 0 and strict_json(out)["verifications"] == 40
    assert finite_or_null({"rate": float("inf"), "x": [float("nan"), 1.5]}) == {
        "rate": None, "x": [None, 1.5]}


def test_trace_writers_refuse_non_finite_numbers(tmp_path):
    from ahasd.sim.traces.decoding import read, write
    records = read(_write(tmp_path, decoding_lines(3, seed=1)))
    records[0]["draft_cost"] = float("inf")
    with pytest.raises(ValueError, match="draft_cost must be a number >= 0, not inf"):
        write(records, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


def _write(tmp_path, lines):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(lines))
    return path


def test_blank_lines_are_counted(tmp_path, capsys, good_trace):
    lines = good_trace.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n\n\n" + '{"event":"guess"}\n')
    for verb in (["trace", "stats"], ["edc", "replay"]):
        assert f"{bad}: line 4: unknown event 'guess'" in error_line(*run(capsys, verb + [bad]))


def test_one_entropy_rule(tmp_path, capsys, good_trace):
    """Negative entropy is refused everywhere; a large one is accepted everywhere (EDC saturates
    it at the top of UQ4.12)."""
    records = [json.loads(line) for line in good_trace.read_text().splitlines()]
    for value, accepted in ((-1.0, False), (40.0, True)):
        records[1]["entropy"][0] = value
        trace = tmp_path / "trace.jsonl"
        trace.write_text("".join(json.dumps(r) + "\n" for r in records))
        events = tmp_path / "events.jsonl"
        events.write_text('{"op":"draft","entropy":%r}\n' % value)
        for argv in (["edc", "replay", events], ["edc", "replay", trace],
                     ["trace", "stats", trace]):
            status, out, err = run(capsys, argv)
            if accepted:
                assert status == 0 and out, argv
            else:
                assert "must be a number >= 0, not -1.0" in error_line(status, out, err)


def test_trace_stats_reads_stdin(capsys, monkeypatch, good_trace):
    status, out, err = run(capsys, ["trace", "stats", "--json", "-"],
                           stdin=good_trace.read_bytes(), monkeypatch=monkeypatch)
    assert status == 0 and strict_json(out)["verifications"] == 40


def test_decode_out_dash_writes_standard_output(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, ["decode", "--tokens", "30", "--out", "-"])
    assert status == 0 and not (tmp_path / "-").exists()
    from ahasd.sim.traces.decoding import validate
    records = validate(json.loads(line) for line in out.splitlines())
    assert len(records[-1]["output"]) == 30
    assert "30 tokens" in err and "trace standard output" in err


@pytest.mark.parametrize("argv, message", [
    (["trace", "stats", "--bins", "1000000000", "t"], "argument --bins: must be an integer in "
                                                      "1..1000, not 1000000000"),
    (["decode", "--tokens", "1000000000", "--out", "t"], "argument --tokens: must be an integer "
                                                         "in 1..100000, not 1000000000"),
    (["demo", "--tokens", "0"], "argument --tokens: must be an integer in 1..100000, not 0"),
    (["decode", "--max-len", "100000", "--out", "t"], "argument --max-len: must be an integer in "
                                                      "1..256"),
    (["decode", "--max-unverified", "0", "--out", "t"], "argument --max-unverified"),
])
def test_caps_are_checked_up_front(capsys, argv, message):
    assert message in error_line(*run(capsys, argv))


def test_progress_only_on_a_terminal(monkeypatch):
    from ahasd.progress import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    with progress("work", 10) as update:
        update(5)
    assert quiet.getvalue() == ""
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress("work", 10) as update:
        update(5)
    assert "work" in terminal.getvalue()
