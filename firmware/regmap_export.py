"""Generate the checked-in files derived from ``hw/regs.rdl`` and check that they are fresh.

Three outputs, written relative to a root folder (the repository root by default):

* ``firmware/ahasd_regs.h`` — C header, by peakrdl-cheader (struct layout and field macros);
* ``firmware/regs.py`` — Python constants (addresses, field positions, masks, resets) and a
  ``REGISTERS`` table, written here from :func:`ahasd.hw.regmap.load`;
* ``docs/registers.md`` — the register reference, by peakrdl-markdown.

``ahasd regs generate`` calls :func:`generate`; ``ahasd regs check`` and ``tests/firmware/test_regmap.py``
call :func:`stale_files`. The outputs hold no paths or dates of the machine that made them, so
regeneration is byte for byte reproducible.
"""

import filecmp
import tempfile
from pathlib import Path

from ahasd.hw.regmap import DATA_WIDTH, RDL_PATH, compile_rdl, load

__all__ = ["OUTPUTS", "generate", "stale_files", "python_constants"]

#: Generated files, relative to the output root.
OUTPUTS = ("firmware/ahasd_regs.h", "firmware/regs.py", "docs/registers.md")

_SOURCE = "hw/regs.rdl"


def python_constants(regmap):
    """Text of ``firmware/regs.py`` for ``regmap``."""
    lines = [
        f'"""Register map constants of {regmap.title or regmap.name}.',
        "",
        f"Generated from {_SOURCE} by `ahasd regs generate`; do not edit (tests/firmware/test_regmap.py",
        "fails when this file is stale). For each register ``NAME`` (its byte address) and each",
        "field ``NAME_FIELD_LSB`` / ``_WIDTH`` / ``_MASK`` / ``_RESET``; ``REGISTERS`` describes",
        "every register as ``{name: (address, {field: (lsb, width, kind, reset)})}`` with the kinds",
        "of :data:`ahasd.hw.regmap.KINDS` (reset ``None``: driven by hardware).",
        '"""',
        "",
    ]
    names = ["DATA_WIDTH", "REGISTERS"]
    body = [f"DATA_WIDTH = {DATA_WIDTH}", ""]
    table = ["REGISTERS = {"]
    for reg in regmap.registers:
        body.append(f"# {reg.title}" if reg.title else f"# {reg.ident}")
        body.append(f"{reg.ident} = 0x{reg.address:03X}")
        names.append(reg.ident)
        entries = []
        for f in reg.fields:
            base = f"{reg.ident}_{f.name.upper()}"
            body.append(f"{base}_LSB = {f.lsb}")
            body.append(f"{base}_WIDTH = {f.width}")
            body.append(f"{base}_MASK = 0x{f.mask:08X}")
            names += [f"{base}_LSB", f"{base}_WIDTH", f"{base}_MASK"]
            if f.reset is not None:
                body.append(f"{base}_RESET = 0x{f.reset:X}")
                names.append(f"{base}_RESET")
            reset = "None" if f.reset is None else f"0x{f.reset:X}"
            entries.append(f"        {f.name!r}: ({f.lsb}, {f.width}, {f.kind!r}, {reset}),")
        body.append("")
        table.append(f"    {reg.ident!r}: (0x{reg.address:03X}, {{")
        table += entries
        table.append("    }),")
    table.append("}")
    all_lines = ["__all__ = ["] + [f"    {n!r}," for n in names] + ["]", ""]
    return "\n".join(lines + all_lines + body + table) + "\n"


def generate(root=".", rdl_path=RDL_PATH):
    """Write :data:`OUTPUTS` under ``root``; return the list of paths written."""
    from peakrdl_cheader.exporter import CHeaderExporter
    from peakrdl_markdown.exporter import MarkdownExporter
    root = Path(root)
    for rel in OUTPUTS:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
    rdl = compile_rdl(rdl_path)
    header = root / OUTPUTS[0]
    CHeaderExporter().export(rdl.top, str(header))
    constants = root / OUTPUTS[1]
    constants.write_text(python_constants(load(rdl_path)))
    markdown = root / OUTPUTS[2]
    MarkdownExporter().export(rdl.top, str(markdown), input_files=[_SOURCE])
    return [root / rel for rel in OUTPUTS]


def stale_files(root=".", rdl_path=RDL_PATH):
    """Regenerate into a temporary folder; return the :data:`OUTPUTS` under ``root`` that are
    missing or differ from a fresh generation (empty when everything is fresh)."""
    root = Path(root)
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp, rdl_path)
        return [rel for rel in OUTPUTS
                if not (root / rel).is_file()
                or not filecmp.cmp(Path(tmp) / rel, root / rel, shallow=False)]
