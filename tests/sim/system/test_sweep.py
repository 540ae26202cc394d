"""Sweeps: axes validated; local processes, one process and a dask cluster give identical rows."""

import json

import pytest

from ahasd.sim.system.config import ConfigError
from ahasd.sim.system.sweep import parse_axis, run_sweep

KW = {"tokens": 48, "max_files": 40, "plots": False}


def test_axes_are_validated():
    assert parse_axis("pim.internal_bw_gbps=128,256") == ("pim.internal_bw_gbps", [128, 256])
    assert parse_axis("acceptance_pair=ngram3-5,ngram4-5")[1] == ["ngram3-5", "ngram4-5"]
    with pytest.raises(ConfigError, match=r"unknown key pim\.nope"):
        parse_axis("pim.nope=1")
    with pytest.raises(ConfigError, match=r"pim\.internal_bw_gbps must be > 0, not 0"):
        parse_axis("pim.internal_bw_gbps=0,1")
    with pytest.raises(ConfigError, match=r"unknown EDC parameter edc\.size"):
        parse_axis("edc.size=3")
    with pytest.raises(ValueError, match=r"bucket_bits"):
        parse_axis("edc.bucket_bits=9")
    with pytest.raises(ConfigError, match=r"acceptance_pair must be one of"):
        parse_axis("acceptance_pair=gpt4")


def rows_of(path):
    return json.loads((path / "sweep.json").read_text())


def test_local_processes_and_one_process_agree(tmp_path):
    axes = [parse_axis("npu.int8_tops=8,16.384"), parse_axis("edc.llr_bits=2,3")]
    run_sweep(axes, tmp_path / "a", jobs=1, **KW)
    run_sweep(axes, tmp_path / "b", jobs=2, **KW)
    assert rows_of(tmp_path / "a") == rows_of(tmp_path / "b")
    assert len(rows_of(tmp_path / "a")) == 4
    assert (tmp_path / "a" / "sweep.csv").read_text() == (tmp_path / "b" / "sweep.csv").read_text()


def test_dask_local_cluster_agrees(tmp_path):
    import distributed
    axes = [parse_axis("controller.max_lookahead_batches=1,4")]
    run_sweep(axes, tmp_path / "a", jobs=1, **KW)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        run_sweep(axes, tmp_path / "d", scheduler=client.scheduler.address, **KW)
    assert rows_of(tmp_path / "a") == rows_of(tmp_path / "d")


def test_cell_evaluators_are_named():
    from ahasd.sim.system.parallel import resolve_evaluator, run_cell, run_cells
    assert resolve_evaluator("ahasd.sim.system.parallel:run_cell") is run_cell
    with pytest.raises(ValueError, match=r"is named 'package\.module:function', not 'run_cell'"):
        run_cells([{}], evaluate="run_cell")
    with pytest.raises(ValueError, match=r"ahasd\.sim\.system\.sweep:nope is not a function"):
        run_cells([{}], evaluate="ahasd.sim.system.sweep:nope")


def test_write_rows(tmp_path):
    from ahasd.sim.system.sweep import write_rows
    write_rows(tmp_path, ["a", "b"], [{"a": 1, "b": None}, {"a": 2, "c": 3}])
    assert (tmp_path / "sweep.csv").read_text() == "a,b\n1,\n2,\n"
    assert rows_of(tmp_path) == [{"a": 1, "b": None}, {"a": 2, "b": None}]
