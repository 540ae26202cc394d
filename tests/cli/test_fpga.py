"""``ahasd fpga``: a JSON row with Fmax, --speed, bad --freq and --speed, --board on the wrong
family (moved from tests/synth/test_fpga.py and tests/synth/test_boards.py)."""

import json

import pytest

from ahasd.cli import main
from ahasd.synth.boards import ControllerBoardTop, build_board


@pytest.mark.slow
def test_cli_json_row_has_fmax(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("<!-- fpga-ecp5: begin (generated) -->\n<!-- fpga-ecp5: end -->\n")
    assert main(["fpga", "ecp5", "gts", "--json", "--build-dir", str(tmp_path),
                 "--readme", str(readme)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["blocks"]
    assert row["block"] == "gts" and row["part"] == "LFE5U-25F" and row["fmax_mhz"] > 50
    assert main(["fpga", "ecp5", "gts", "--freq", "0"]) == 2
    assert "--freq must be in 1..1000 MHz, not 0.0" in capsys.readouterr().err
    # another speed grade: named in the part column, and nextpnr was given it
    assert main(["fpga", "ecp5", "gts", "--json", "--speed", "8", "--build-dir",
                 str(tmp_path), "--readme", str(readme)]) == 0
    (fast,) = json.loads(capsys.readouterr().out)["blocks"]
    assert fast["part"] == "LFE5U-25F-8" and fast["speed_grade"] == 8
    # its README row sits beside the default grade's, which it does not replace
    rows = [line.split("|")[1:3] for line in readme.read_text().splitlines()[3:-1]]
    assert [[cell.strip() for cell in r] for r in rows] == [["gts", "LFE5U-25F"],
                                                             ["gts", "LFE5U-25F-8"]]
    # the same netlist on the fastest grade: every delay of its timing model is shorter
    assert row["speed_grade"] == 6 and fast["fmax_mhz"] > row["fmax_mhz"]


@pytest.mark.parametrize(("argv", "message"), [
    (["fpga", "ecp5", "gts", "--speed", "5"], "--speed: ecp5 speed grade must be one of 6, 7, 8, "
                                              "not 5"),
    (["fpga", "ice40", "gts", "--speed", "6"], "--speed: ice40 (iCE40UP5K-SG48) has no speed "
                                               "grade to choose, not 6"),
    (["fpga", "ecp5", "--board", "ulx3s", "--speed", "8"], "--board ulx3s fixes the part and "
                                                           "its speed grade: no --speed"),
])
def test_speed_errors_before_any_work(argv, message, tmp_path, capsys):
    build = tmp_path / "build"
    assert main([*argv, "--build-dir", str(build)]) == 2
    assert message in capsys.readouterr().err
    assert not build.exists()


def test_errors(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"unknown board 'de10'; known: ulx3s"):
        build_board("de10", tmp_path)
    with pytest.raises(ValueError, match=r"baud must be a positive integer, not 0"):
        ControllerBoardTop(baud=0)
    assert main(["fpga", "ice40", "--board", "ulx3s"]) == 2
    assert "builds the controller top on ecp5, not ice40" in capsys.readouterr().err
    assert main(["fpga", "ice40", "all", "--board", "ulx3s"]) == 2
    assert "builds the controller top on ecp5, not all on ice40" in capsys.readouterr().err


@pytest.mark.parametrize("family", ["ecp5", "ice40"])
def test_block_required(family, tmp_path, capsys):
    """No block and no --board is an error before any work (it no longer means 'all')."""
    build = tmp_path / "build"
    assert main(["fpga", family, "--build-dir", str(build)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"ahasd: error: fpga {family}: name a block or 'all' (")
    assert captured.err.count("\n") == 1 and "gts" in captured.err
    assert not build.exists()


def test_area_block_required(capsys):
    assert main(["area"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ahasd: error: area: the following arguments are required: block")
