"""``ahasd.errors.grid_errors``: around a run of simulator cells, a bad value and an unreachable
scheduler are one-line user errors; an OSError without a scheduler is not the user's."""

import pytest

from ahasd.cli import main
from ahasd.errors import CliError, grid_errors


def test_value_errors_and_an_unreachable_scheduler_become_cli_errors():
    with pytest.raises(CliError, match=r"^bad value$"):
        with grid_errors(None):
            raise ValueError("bad value")
    with pytest.raises(CliError, match=r"^cannot reach scheduler tcp://h:1: refused$"):
        with grid_errors("tcp://h:1"):
            raise ConnectionRefusedError("refused")
    with pytest.raises(ValueError):                 # values=False: a ValueError is a bug
        with grid_errors("tcp://h:1", values=False):
            raise ValueError("bug")
    with pytest.raises(FileNotFoundError):          # no scheduler: not the user's error
        with grid_errors(None):
            raise FileNotFoundError("x")


def test_sweep_with_an_unreachable_scheduler_is_one_line(tmp_path, capsys, monkeypatch):
    def unreachable(*a, **k):
        raise ConnectionRefusedError("connection refused")
    monkeypatch.setattr("ahasd.sim.system.sweep.run_sweep", unreachable)
    status = main(["sweep", "--axis", "pim.internal_bw_gbps=100", "--tokens", "16",
                   "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "o")])
    out, err = capsys.readouterr()
    assert status == 2 and err.count("\n") == 1
    assert "cannot reach scheduler tcp://127.0.0.1:1: connection refused" in err
