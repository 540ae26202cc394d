"""The register map (hw/regs.rdl): compilation, field kinds, and freshness of generated files."""

from pathlib import Path

import pytest

from ahasd.firmware.regmap_export import OUTPUTS, generate, stale_files
from ahasd.hw.regmap import load

ROOT = Path(__file__).resolve().parents[2]


def test_committed_generated_files_are_fresh():
    stale = stale_files(ROOT)
    assert stale == [], f"stale generated files {stale}: run `ahasd regs generate`"


def test_python_constants_match_the_map():
    from ahasd.firmware import regs
    regmap = load()
    assert set(regs.REGISTERS) == {r.ident for r in regmap.registers}
    for reg in regmap.registers:
        assert getattr(regs, reg.ident) == reg.address
        address, fields = regs.REGISTERS[reg.ident]
        assert address == reg.address
        for f in reg.fields:
            assert fields[f.name] == (f.lsb, f.width, f.kind, f.reset)
            assert getattr(regs, f"{reg.ident}_{f.name.upper()}_MASK") == f.mask
    assert regs.ID_MAGIC_RESET == 0x41485344


def test_map_layout():
    regmap = load()
    addresses = [r.address for r in regmap.registers]
    assert addresses == sorted(set(addresses))
    assert all(a % 4 == 0 for a in addresses)
    for reg in regmap.registers:
        bits = 0
        for f in reg.fields:
            assert bits & f.mask == 0, f"{reg.ident}.{f.name} overlaps"
            bits |= f.mask
            if f.reset is not None:
                assert 0 <= f.reset < 1 << f.width
    assert regmap["DRAFT_Q_PUSHES"].address == 0x88
    assert regmap.at(0x8B) is regmap["DRAFT_Q_PUSHES"]
    assert regmap.at(0x3C) is None


@pytest.mark.parametrize("field, message", [
    ("field { sw = w; hw = r; } f[0:0] = 0;", r"sw=w hw=r is not supported"),
    ("field { sw = r; hw = na; counter; } f[3:0] = 0;", r"counters must be sw=r hw=na incrsaturate"),
    ("field { sw = rw; hw = w; intr; } f[0:0] = 0;", r"interrupts must be sw=rw hw=w onwrite=woclr"),
    ("field { sw = rw; hw = r; onwrite = woset; } f[0:0] = 0;", r"onwrite=woset is only supported"),
    ("field { sw = r; hw = w; onread = rclr; } f[0:0];", r"read side effects are not supported"),
])
def test_unsupported_fields_are_rejected(tmp_path, field, message):
    rdl = tmp_path / "bad.rdl"
    rdl.write_text(f"addrmap bad {{ reg {{ {field} }} R @ 0x0; }};")
    with pytest.raises(ValueError, match=message):
        load(rdl)


def test_outputs_hold_no_machine_paths(tmp_path):
    generate(tmp_path)
    for rel in OUTPUTS:
        text = (tmp_path / rel).read_text()
        assert str(tmp_path) not in text and str(ROOT) not in text


def test_edc_modes_are_one_enumeration_everywhere():
    """The EDC modes come from the edc_mode_e enumeration of EDC_CTRL.mode: the RTL, the Python
    constants, the driver, the C header and the register reference all carry the same values."""
    from ahasd.firmware import driver, regs
    from ahasd.hw.controller import EDC_MODES
    field = load()["EDC_CTRL"].field("mode")
    assert field.values == {"predict": 0, "always": 1, "never": 2}
    assert EDC_MODES == driver.EDC_MODES == regs.ENUMS["EDC_CTRL"]["mode"] == field.values
    assert (regs.EDC_CTRL_MODE_PREDICT, regs.EDC_CTRL_MODE_ALWAYS,
            regs.EDC_CTRL_MODE_NEVER) == (0, 1, 2)
    header = (ROOT / "firmware" / "ahasd_regs.h").read_text()
    markdown = (ROOT / "docs" / "registers.md").read_text()
    for name, value, _ in field.encoding:
        assert f"#define AHASD_CTRL__EDC_CTRL__MODE__{name.upper()} {value} " in header
        assert f"|{value}|{name}|" in markdown


def test_interrupts_are_the_int_status_fields():
    from ahasd.firmware import driver
    from ahasd.hw.controller import INTERRUPTS
    names = tuple(f.name for f in load()["INT_STATUS"].fields)
    assert INTERRUPTS == driver.INTERRUPTS == names
    assert len(names) == 6 and names[0] == "draft_q"


def test_field_insert_and_extract():
    field = load()["TVC_CTRL"].field("max_len")
    word = field.insert(0xFFFF_FF0F, 5)
    assert word == 0xFFFF_FF5F and field.extract(word) == 5
    with pytest.raises(ValueError, match="field max_len holds 4 bits, not 16"):
        field.insert(0, 16)
