"""The FuseSoC core written by ``ahasd verilog``: fusesoc (PyPI) lists it and runs its Verilator
lint target offline, with the project's verilator and waivers; a lint warning fails the run."""

import shutil
import subprocess
import sys
from pathlib import Path

from ahasd.cli import main
from ahasd.synth.fusesoc import CORE_FILE, CORE_NAME
from ahasd.synth.verilator import tool_env


def run_fusesoc(cores, *args):
    config = cores / "fusesoc.conf"
    config.write_text("")
    cmd = [str(Path(sys.executable).parent / "fusesoc"), "--config", str(config),
           "--cores-root", str(cores), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=tool_env(), cwd=cores,
                          timeout=300)


def test_core_lists_and_lints(tmp_path, capsys):
    out = tmp_path / "v"
    assert main(["verilog", "gts", "-o", str(out), "--no-lint"]) == 0
    assert f"wrote {out / CORE_FILE}" in capsys.readouterr().out
    listed = run_fusesoc(out, "core", "list")
    assert listed.returncode == 0, listed.stderr
    assert CORE_NAME in listed.stdout
    lint = run_fusesoc(out, "run", "--build-root", str(tmp_path / "build"), "--target",
                       "lint_gts", CORE_NAME)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    # The same target fails on Verilog with a warning that is not waived (BLKSEQ).
    (out / "gts.v").write_text("module gts(input clk, input d, output reg q);\n"
                               "  always @(posedge clk) q = d;\nendmodule\n")
    shutil.rmtree(tmp_path / "build")
    bad = run_fusesoc(out, "run", "--build-root", str(tmp_path / "build"), "--target",
                      "lint_gts", CORE_NAME)
    assert bad.returncode != 0 and "BLKSEQ" in bad.stdout + bad.stderr


def test_one_core_lists_every_block_written_to_the_folder(tmp_path, capsys):
    """verilog edc, then gts, into one folder: the core lists and lints both (a block whose .v
    is gone drops out)."""
    out = tmp_path / "v"
    assert main(["verilog", "gts", "-o", str(out), "--no-lint"]) == 0
    assert main(["verilog", "edc", "-o", str(out), "--no-lint"]) == 0
    core = (out / CORE_FILE).read_text()
    assert "  rtl_edc:" in core and "  rtl_gts:" in core
    assert "lint_edc:" in core and "lint_gts:" in core
    for block in ("edc", "gts"):
        lint = run_fusesoc(out, "run", "--build-root", str(tmp_path / f"build-{block}"),
                           "--target", f"lint_{block}", CORE_NAME)
        assert lint.returncode == 0, lint.stdout + lint.stderr
    (out / "gts.v").unlink()
    assert main(["verilog", "edc", "-o", str(out), "--no-lint"]) == 0
    core = (out / CORE_FILE).read_text()
    assert "  rtl_edc:" in core and "rtl_gts" not in core
