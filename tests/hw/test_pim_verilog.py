"""The PIM datapath blocks export to Verilog that passes ``verilator --lint-only -Wall``."""

import pytest

from ahasd.hw.blocks import BLOCKS, to_verilog
from ahasd.synth.export import write_verilog
from ahasd.synth.verilator import lint


@pytest.mark.parametrize("name", ["gemv", "aau", "entropy"])
def test_registered_block_lints_clean(name, tmp_path):
    assert name in BLOCKS
    path = write_verilog(name, tmp_path)
    assert f"module {name}(" in path.read_text()


def test_bank_model_lints_clean(tmp_path):
    from ahasd.tb.dram_bank import DRAMBankModel
    path = tmp_path / "dram_bank_model.v"
    path.write_text(to_verilog(DRAMBankModel(), "dram_bank_model"))
    lint(path, "dram_bank_model")


def test_read_scheduler_lints_clean(tmp_path):
    from ahasd.hw.dram_port import ReadScheduler
    from ahasd.spec.dram import DRAMConfig
    path = tmp_path / "read_scheduler.v"
    path.write_text(to_verilog(ReadScheduler(DRAMConfig()), "read_scheduler"))
    lint(path, "read_scheduler")
