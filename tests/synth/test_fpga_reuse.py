"""``ahasd fpga`` reuses a block's saved place-and-route result only when everything it depends
on matches: the tools are replaced by a stub that counts its calls (no synthesis here)."""

import json

import pytest

from ahasd.synth import fpga_report
from ahasd.synth.fpga import FpgaReport


def _report(block, fmax):
    return FpgaReport(block=block, part="LFE5U-25F", fits=True, luts=10, dsps=0, brams=0, ffs=4,
                      utilisation={"TRELLIS_COMB": {"used": 10, "available": 24288}},
                      fmax_mhz=fmax, fmax_by_clock={"clk": fmax}, note="", seconds=1.0,
                      cpu_seconds=1.0)


@pytest.fixture
def tools(monkeypatch):
    calls = []

    def place_and_route(verilog, top, family, work, **options):
        calls.append((top, family, options))
        return _report(top, 100.0 + len(calls))
    monkeypatch.setattr(fpga_report, "fpga_of_verilog", place_and_route)
    return calls


def test_a_matching_result_is_reused_and_a_changed_one_is_not(tmp_path, tools):
    first = fpga_report.fpga_report("gts", "ecp5", tmp_path, freq_mhz=100)
    assert len(tools) == 1 and first.fmax_mhz == 101.0
    again = fpga_report.fpga_report("gts", "ecp5", tmp_path, freq_mhz=100)
    assert len(tools) == 1 and again == first                      # reused, the same figures
    fpga_report.fpga_report("gts", "ecp5", tmp_path, freq_mhz=90)   # another option
    assert len(tools) == 2
    fpga_report.fpga_report("gts", "ecp5", tmp_path, freq_mhz=90, reuse=False)   # --rerun
    assert len(tools) == 3
    # another design (a parameter changes the Verilog) under the same top name
    fpga_report.fpga_report("gts", "ecp5", tmp_path, freq_mhz=90, params={"ranks": 8})
    assert len(tools) == 4
    fpga_report.fpga_report("gts", "ice40", tmp_path, freq_mhz=90)   # another family
    assert len(tools) == 5


def test_the_default_speed_grade_named_or_not_shares_a_result(tmp_path, tools):
    fpga_report.fpga_report("gts", "ecp5", tmp_path)
    fpga_report.fpga_report("gts", "ecp5", tmp_path, speed=6)       # the default, named
    assert len(tools) == 1 and tools[0][2] == {"speed": 6}
    fpga_report.fpga_report("gts", "ecp5", tmp_path, speed=8)       # another grade
    assert len(tools) == 2 and tools[1][2] == {"speed": 8}
    assert fpga_report.fpga_report("gts", "ecp5", tmp_path).fmax_mhz == 101.0
    assert len(tools) == 2               # the default's result is still there, not replaced
    with pytest.raises(ValueError, match="speed grade must be one of 6, 7, 8, not 9"):
        fpga_report.fpga_report("gts", "ecp5", tmp_path / "bad", speed=9)
    assert not (tmp_path / "bad").exists()                         # checked before any work


def test_a_variant_is_built_in_its_own_folder(tmp_path, tools):
    fpga_report.fpga_report("gts", "ecp5", tmp_path, freq_mhz=100.0, speed=6)
    fpga_report.fpga_report("gts", "ecp5", tmp_path, freq_mhz=62.5, speed=8)
    fpga_report.fpga_report("gts", "ice40", tmp_path, freq_mhz=90)
    built = sorted(str(p.parent.relative_to(tmp_path)) for p in tmp_path.glob("*/*/result.json"))
    assert built == ["ecp5/gts", "ecp5/gts-freq_mhz62.5-speed8", "ice40/gts-freq_mhz90"]
    assert fpga_report.build_folder("controller", "ecp5", {"seed": 2, "speed": 7}) == \
        "controller-seed2-speed7"
    assert fpga_report.build_folder("controller", "ice40", {"speed": None}) == "controller"


def test_a_damaged_result_file_is_run_again(tmp_path, tools):
    fpga_report.fpga_report("gts", "ecp5", tmp_path)
    saved = tmp_path / "ecp5" / "gts" / "result.json"
    data = json.loads(saved.read_text())
    assert set(data) == {"key", "report"} and data["report"]["block"] == "gts"
    saved.write_text('{"key": "%s", "report": {"block": 1}}' % data["key"])
    assert fpga_report.fpga_report("gts", "ecp5", tmp_path).fmax_mhz == 102.0
    assert len(tools) == 2
    saved.write_text("not json")
    fpga_report.fpga_report("gts", "ecp5", tmp_path)
    assert len(tools) == 3


def test_the_key_covers_the_tools_versions(monkeypatch):
    key = fpga_report.result_key("module m; endmodule", "m", "ecp5", {"freq_mhz": 100})
    assert key == fpga_report.result_key("module m; endmodule", "m", "ecp5", {"freq_mhz": 100})
    monkeypatch.setattr(fpga_report.metadata, "version", lambda package: "0.0-other")
    assert key != fpga_report.result_key("module m; endmodule", "m", "ecp5", {"freq_mhz": 100})
