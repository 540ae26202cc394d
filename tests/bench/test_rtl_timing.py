"""``ahasd bench rtl-timing --quick``: measures the RTL and writes the table the simulator ships."""

import tomllib
from importlib import resources

import pytest

from ahasd.bench.rtl_timing import bench


@pytest.mark.slow
def test_bench_writes_the_shipped_table(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)                       # build/ of this folder
    figures = bench(json_output=True, quick=True)
    assert capsys.readouterr().out == ""
    written = tomllib.loads((tmp_path / "build" / "rtl_timing.toml").read_text())
    shipped = tomllib.loads(resources.files("ahasd.sim.system").joinpath(
        "configs", "rtl_timing.toml").read_text())
    # The RTL's cycles are data-independent and linear in the vector count, so even the quick
    # fit (two sizes) gives the shipped figures.
    assert written == shipped
    for f in figures["aau"].values():
        assert f["worst_residual"] < 1e-9 and f["cycles_per_elem"] > 0
