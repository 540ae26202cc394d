"""Point 1 of issue 23: ``ahasd verilog|area|fpga BLOCK --param NAME=VALUE`` for every
constructor parameter (nested ones dotted), ``--list-params``, validation before any work with
the block's own rules, and a module and file name that says the build is not the default."""

import re

import pytest

from ahasd.cli import main
from ahasd.hw.blocks import block_names
from ahasd.spec.dram import DRAMConfig
from ahasd.synth.params import param_specs, parse_params, variant_name


def run(capsys, argv):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_every_block_lists_its_parameters():
    for block in block_names():
        for spec in param_specs(block):
            assert spec.type in ("int", "float", "bool", "str"), spec
    names = [s.name for s in param_specs("controller")]
    assert "edc.history_depth" in names and "tvc.depth" in names and "draft_depth" in names
    assert "edc.stats_bits" not in names                   # the controller sets it itself
    edc = {s.name: s for s in param_specs("edc")}
    assert (edc["history_depth"].default, edc["history_depth"].range) == (8, "power of two 2..64")
    assert {s.name for s in param_specs("gemv")} >= {"config.n_banks", "max_n"}


def test_parse_nested():
    assert parse_params("controller", ["edc.history_depth=16", "draft_depth=32"]) == {
        "edc": {"history_depth": 16}, "draft_depth": 32}
    assert parse_params("gemv", ["config.n_banks=8"])["config"] == DRAMConfig(n_banks=8)
    assert variant_name("controller", ["edc.history_depth=16"]) == "controller_edc_history_depth16"


def test_verilog_with_params(tmp_path, capsys):
    status, out, err = run(capsys, ["verilog", "controller", "--param", "edc.history_depth=16",
                                    "--no-lint", "-o", tmp_path])
    assert status == 0 and err == ""
    path = tmp_path / "controller_edc_history_depth16.v"
    text = path.read_text()
    assert re.search(r"^module controller_edc_history_depth16\(", text, flags=re.M)
    # the EDC inside holds a 16-entry history: its default build does not have the same text
    status, _, _ = run(capsys, ["verilog", "controller", "--no-lint", "-o", tmp_path])
    default = (tmp_path / "controller.v").read_text()
    assert default.replace("module controller(", "") != text.replace(
        "module controller_edc_history_depth16(", "")
    core = (tmp_path / "ahasd_blocks.core").read_text()
    assert "toplevel: controller_edc_history_depth16" in core and "toplevel: controller" in core
    assert "# controller_edc_history_depth16: generated with edc.history_depth=16" in core


def test_verilog_name_and_dram_config(tmp_path, capsys):
    status, out, err = run(capsys, ["verilog", "gemv", "--param", "config.n_banks=8", "--name",
                                    "gemv_8banks", "--no-lint", "-o", tmp_path])
    assert status == 0
    assert re.search(r"^module gemv_8banks\(", (tmp_path / "gemv_8banks.v").read_text(), flags=re.M)


@pytest.mark.parametrize("argv,message", [
    (["verilog", "edc", "--param", "history_depth=12"],
     "edc: history_depth must be a power of two in 2..64, not 12"),
    (["verilog", "edc", "--param", "history_depth=x"], "--param history_depth=x: not an integer"),
    (["verilog", "edc", "--param", "nope=1"], "--param nope: edc has no such parameter"),
    (["verilog", "edc", "--param", "history_depth"], "expected NAME=VALUE"),
    (["verilog", "all", "--param", "history_depth=16"], "apply to one block, not to all"),
    (["verilog", "edc", "--name", "9x"], "--name '9x': not a Verilog module name"),
    (["area", "controller", "--param", "edc.bucket_bits=9"], "bucket_bits must be"),
    (["fpga", "ecp5", "gemv", "--param", "config.n_banks=0"], "n_banks"),
])
def test_bad_params_fail_before_any_work(tmp_path, capsys, monkeypatch, argv, message):
    called = []
    for target in ("ahasd.synth.export.block_verilog", "ahasd.synth.area_report.area_report",
                   "ahasd.synth.fpga_report.fpga_report"):
        monkeypatch.setattr(target, lambda *a, **k: called.append(a))
    out_dir = tmp_path / "out"
    option = ["-o", out_dir] if argv[0] == "verilog" else ["--build-dir", out_dir]
    status, out, err = run(capsys, argv + option)
    assert (status, out) == (2, "") and err.startswith("ahasd: error: ") and err.count("\n") == 1
    assert message in err, err
    assert called == [] and not out_dir.exists()


@pytest.mark.parametrize("verb", [["area"], ["fpga", "ecp5"]], ids=" ".join)
def test_area_and_fpga_pass_params_and_name(tmp_path, capsys, monkeypatch, verb):
    seen = []

    class Report:
        def as_dict(self):
            return {"block": "x"}

    target = "ahasd.synth.area_report.area_report" if verb == ["area"] else \
        "ahasd.synth.fpga_report.fpga_report"
    monkeypatch.setattr(target, lambda name, *a, **k: seen.append((name, k["params"], k["top"]))
                        or Report())
    status, _, err = run(capsys, verb + ["edc", "--param", "history_depth=16", "--json",
                                         "--build-dir", tmp_path])
    assert status == 0, err
    assert seen == [("edc", {"history_depth": 16}, "edc_history_depth16")]


def test_list_params(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    status, out, err = run(capsys, ["verilog", "controller", "--list-params"])
    assert status == 0
    assert all(len(line) <= 80 for line in out.splitlines())
    for spec in param_specs("controller"):
        assert spec.name in out
    assert "power of two 2..64" in out
