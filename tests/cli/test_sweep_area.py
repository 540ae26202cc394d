"""``ahasd sweep area``: one-line errors before any synthesis, a run on a recorded trace with its
plots, a malformed trace named (moved from tests/bench/test_area_sweep.py)."""

import json

import pytest

from ahasd.bench.area_sweep import file_trace, record_traces
from ahasd.cli import main

#: The work of a sweep: recording golden traces, synthesising the points, simulating.
SWEEP_WORK = ("ahasd.bench.area_sweep.record_traces", "ahasd.bench.area_sweep.run_area_sweep",
              "ahasd.sim.system.sweep.run_sweep")


def one_line_error(capsys, argv, message):
    # Refused before any work: the work is replaced by steps that raise (see ``forbid``).
    assert main([str(a) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("ahasd: error: "), err
    assert message in err, err


def test_cli_valid_input_reaches_the_work(capsys, tmp_path, forbid):
    """The control of test_cli_bad_input: valid arguments reach the replaced steps."""
    forbid(*SWEEP_WORK)
    out = ["--out", tmp_path / "o", "--build-dir", tmp_path / "b"]
    with pytest.raises(forbid.error, match="record_traces"):
        main([str(a) for a in ["sweep", "area", "--axis", "edc.history_depth=2", *out]])
    with pytest.raises(forbid.error, match="run_area_sweep"):
        main([str(a) for a in ["sweep", "area", "--axis", "queues.draft_depth=16", *out]])
    with pytest.raises(forbid.error, match="run_sweep"):
        main([str(a) for a in ["sweep", "--axis", "npu.int8_tops=8", "--out", tmp_path / "s"]])


def test_cli_bad_input(capsys, tmp_path, forbid):
    forbid(*SWEEP_WORK)
    out = ["--out", tmp_path / "o", "--build-dir", tmp_path / "b"]
    one_line_error(capsys, ["sweep", "area", "--axis", "edc.size=3", *out],
                   "edc has no sweep parameter 'size'")
    one_line_error(capsys, ["sweep", "area", "--axis", "tvc.depth=3", *out],
                   "unknown block 'tvc'")
    one_line_error(capsys, ["sweep", "area", "--axis", "queues.draft_depth=x", *out],
                   "queues.draft_depth values must be integers, not 'x'")
    one_line_error(capsys, ["sweep", "area", "--axis", "edc.history_depth=6", *out],
                   "history_depth must be a power of two in 2..64, not 6")
    one_line_error(capsys, ["sweep", "area", "--policy", "svip", *out],
                   "--policy applies to the system sweep, not to the area sweep")
    one_line_error(capsys, ["sweep", "--trace", "t.jsonl", "--axis", "npu.int8_tops=8", *out],
                   "--trace applies to the area sweep, not to the system sweep")
    one_line_error(capsys, ["sweep", "--out", tmp_path],
                   "the system sweep needs at least one --axis")
    one_line_error(capsys, ["sweep", "area", "--axis", "queues.draft_depth=16", "--trace",
                            tmp_path / "t.jsonl", *out], "--trace scores EDC points")
    one_line_error(capsys, ["sweep", "area", "--axis", "edc.history_depth=2", "--trace",
                            tmp_path / "missing.jsonl", *out], str(tmp_path / "missing.jsonl"))
    one_line_error(capsys, ["sweep", "volume", *out], "invalid choice: 'volume'")
    one_line_error(capsys, ["sweep", "area", "--seed", "-1", *out],
                   "argument --seed: must be an integer in 0..")
    one_line_error(capsys, ["sweep", "area", "--jobs", "0", *out],
                   "--jobs must be a positive integer, not 0")


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return record_traces(tmp_path_factory.mktemp("traces"), pairs=("ngram3-5",), tokens=300)


def test_cli_area_sweep(capsys, tmp_path, traces):
    # A recorded trace file, as a user would pass one, and the plots.
    _, _, summary = traces[0]
    status = main(["sweep", "area", "--axis", "edc.history_depth=2", "--axis",
                   "edc.bucket_bits=1", "--axis", "edc.llr_bits=1", "--jobs", "1",
                   "--trace", summary["file"], "--out", str(tmp_path / "o"),
                   "--build-dir", str(tmp_path / "b")])
    assert status == 0
    assert "1 points written to" in capsys.readouterr().out
    rows = json.loads((tmp_path / "o" / "sweep.json").read_text())
    events = file_trace(summary["file"], "t")[1]
    assert rows[0]["accuracy_ngram3-5"] == rows[0]["edc_accuracy"] and len(events) > 100
    for png in ("sweep.png", "edc_area_accuracy.png"):
        assert (tmp_path / "o" / png).read_bytes()[:4] == b"\x89PNG"


def test_cli_bad_trace_names_the_file(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xf4\x00binary")
    from ahasd.cli import main
    assert main(["sweep", "area", "--trace", str(bad), "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"ahasd: error: {bad}: line 1: not UTF-8 text")
