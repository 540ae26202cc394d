"""``ahasd regs check|generate|list``: stale generated files named (exit 1), regenerated, the map
listed (moved from tests/firmware/test_regmap.py)."""

from ahasd.cli import main
from ahasd.firmware.regmap_export import generate, stale_files
from ahasd.hw.regmap import load


def test_stale_file_is_detected(tmp_path, capsys):
    generate(tmp_path)
    assert stale_files(tmp_path) == []
    header = tmp_path / "firmware" / "ahasd_regs.h"
    header.write_text(header.read_text().replace("0x41485344", "0x41485345"))
    (tmp_path / "docs" / "registers.md").unlink()
    assert stale_files(tmp_path) == ["firmware/ahasd_regs.h", "docs/registers.md"]
    assert main(["regs", "check", str(tmp_path)]) == 1
    assert "firmware/ahasd_regs.h, docs/registers.md" in capsys.readouterr().err
    assert main(["regs", "generate", "-o", str(tmp_path)]) in (0, None)
    assert main(["regs", "check", str(tmp_path)]) == 0


def test_cli_list(capsys):
    assert main(["regs", "list"]) in (0, None)
    out = capsys.readouterr().out
    assert "0x0E0 GTS_STATUS" in out and "magic[31:0] const" in out
    assert len(out.splitlines()) == len(load().registers)
