"""Area sweeps on the sweep framework: axes and points validated (one-line errors, exit 2, before
any synthesis), the EDC's accuracy computed on recorded golden traces, and local processes and a
dask cluster writing identical files."""

import json

import pytest

from ahasd.bench.area_sweep import check_point, grid_of_axes, parse_axis, record_traces, run_area_sweep

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
