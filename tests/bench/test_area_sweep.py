"""Area sweeps on the sweep framework: axes and points validated (one-line errors, exit 2, before
any synthesis), the EDC's accuracy computed on recorded golden traces, and local processes and a
dask cluster writing identical files."""

import json

import pytest

from ahasd.bench.area_sweep import check_point, file_trace, grid_of_axes, parse_axis, record_traces, run_area_sweep
from ahasd.cli import main

#: Two small EDC points (a few seconds of synthesis each).
TINY = [{"block": "edc", "history_depth": d, "bucket_bits": 1, "llr_bits": 1} for d in (2, 4)]


@pytest.mark.parametrize("text, message", [
    ("nope.depth=1",
     r"unknown block 'nope' in axis nope\.depth \(area sweeps: edc, queues, gemv\)"),
    ("edc.size=3", r"edc has no sweep parameter 'size' \(known: history_depth, "),
    ("edc.history_depth=4,4.5", r"edc\.history_depth values must be integers, not '4\.5'"),
    ("edc.history_depth=" + "9" * 40, r"values must be integers, not '9999"),
    ("edc.history_depth=", r"sweep axis edc\.history_depth has no values"),
    ("edc.history_depth=4,4", r"repeats a value"),
    ("history_depth=4", r"an area sweep axis is BLOCK\.PARAM=V1,V2,\.\.\., not 'history_depth=4'"),
])
def test_bad_axes(text, message):
    with pytest.raises(ValueError, match=message):
        parse_axis(text)


def test_grid_is_per_block_product():
    axes = [parse_axis("edc.history_depth=4,8"), parse_axis("queues.draft_depth=16,32"),
            parse_axis("edc.llr_bits=2,3")]
    points = grid_of_axes(axes)
    assert [p["block"] for p in points] == ["edc"] * 4 + ["queues"] * 2
    assert points[1] == {"block": "edc", "history_depth": 4, "llr_bits": 3}
    with pytest.raises(ValueError, match=r"axis edc\.llr_bits is given twice"):
        grid_of_axes(axes + [parse_axis("edc.llr_bits=1")])
    with pytest.raises(ValueError, match=r"history_depth must be a power of two in 2..64, not 3"):
        check_point({"block": "edc", "history_depth": 3})
    with pytest.raises(ValueError, match=r"draft_depth must be a power of two >= 2, not 24"):
        check_point({"block": "queues", "draft_depth": 24})
    with pytest.raises(ValueError, match=r"burst_bytes must be a power of two, not 48"):
        check_point({"block": "gemv", "burst_bytes": 48})


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


def test_local_processes_and_dask_agree(tmp_path, traces):
    import distributed

    from ahasd.sim.blocks.edc import EDC, score_events
    kw = {"traces": traces, "build_dir": tmp_path / "build", "plots": False}
    rows = run_area_sweep(TINY, tmp_path / "local", jobs=2, **kw)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        run_area_sweep(TINY, tmp_path / "dask", scheduler=client.scheduler.address, **kw)
    for name in ("sweep.csv", "sweep.json", "traces.json"):
        assert (tmp_path / "local" / name).read_text() == (tmp_path / "dask" / name).read_text()
    # Synthesised, not typed in: a deeper history has more flip-flops; the accuracy is the
    # golden EDC's on the trace at the point's parameters.
    assert rows[1]["ff_bits"] > rows[0]["ff_bits"] > 0 and rows[0]["total_mm2"] > 0
    name, events, summary = traces[0]
    for point, row in zip(TINY, rows):
        _, score = score_events(EDC(**{k: v for k, v in point.items() if k != "block"}), events)
        assert row["edc_accuracy"] == row[f"accuracy_{name}"] == round(score.accuracy, 6)
        assert score.scored == summary["scored"] > 50
    timing = json.loads((tmp_path / "local" / "timing.json").read_text())
    assert [p["point"] for p in timing["points"]] == TINY and timing["wall_s"] > 0


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
