"""Generate the checked-in files derived from ``hw/regs.rdl`` and check that they are fresh.

Three outputs, written relative to a root folder (the repository root by default):

* ``firmware/ahasd_regs.h`` — C header, by peakrdl-cheader (struct layout and field macros),
  plus one macro per member of each field enumeration (peakrdl-cheader 1.1 writes none);
* ``firmware/regs.py`` — Python constants (addresses, field positions, masks, resets) and a
  ``REGISTERS`` table, written here from :func:`ahasd.hw.regmap.load`;
* ``docs/registers.md`` — the register reference, by peakrdl-markdown, plus a table of the
  values of each field enumeration (peakrdl-markdown lists none).

``ahasd regs generate`` calls :func:`generate`; ``ahasd regs check`` and ``tests/firmware/test_regmap.py``
call :func:`stale_files`. The outputs hold no paths or dates of the machine that made them, so
regeneration is byte for byte reproducible.
"""

import filecmp
import tempfile
from pathlib import Path

from ahasd.hw.regmap import DATA_WIDTH, RDL_PATH, compile_rdl, load

__all__ = ["OUTPUTS", "generate", "stale_files", "python_constants", "add_enum_macros",
           "add_enum_tables"]

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
        "of :data:`ahasd.hw.regmap.KINDS` (reset ``None``: driven by hardware). A field with a",
        "SystemRDL enumeration also has ``NAME_FIELD_VALUE`` per member, and ``ENUMS`` maps",
        "``{name: {field: {member: value}}}``.",
        '"""',
        "",
    ]
    names = ["DATA_WIDTH", "REGISTERS", "ENUMS"]
    body = [f"DATA_WIDTH = {DATA_WIDTH}", ""]
    table = ["REGISTERS = {"]
    enums = ["ENUMS = {"]
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
            for member, value, _ in f.encoding:
                body.append(f"{base}_{member.upper()} = {value}")
                names.append(f"{base}_{member.upper()}")
            reset = "None" if f.reset is None else f"0x{f.reset:X}"
            entries.append(f"        {f.name!r}: ({f.lsb}, {f.width}, {f.kind!r}, {reset}),")
        body.append("")
        table.append(f"    {reg.ident!r}: (0x{reg.address:03X}, {{")
        table += entries
        table.append("    }),")
        encoded = [f for f in reg.fields if f.encoding]
        if encoded:
            enums.append(f"    {reg.ident!r}: {{")
            enums += [f"        {f.name!r}: {f.values!r}," for f in encoded]
            enums.append("    },")
    table.append("}")
    enums.append("}")
    all_lines = ["__all__ = ["] + [f"    {n!r}," for n in names] + ["]", ""]
    return "\n".join(lines + all_lines + body + table + [""] + enums) + "\n"


def add_enum_macros(header, regmap):
    """``header`` (peakrdl-cheader's text) with ``<FIELD>__<MEMBER>`` value macros after the
    field macros of every field that has an enumeration."""
    lines = header.splitlines()
    for reg in regmap.registers:
        for f in reg.fields:
            if not f.encoding:
                continue
            prefix = f"{regmap.name.upper()}__{reg.ident}__{f.name.upper()}"
            anchor = max(i for i, line in enumerate(lines)
                         if line.startswith(f"#define {prefix}_"))
            macros = [f"#define {prefix}__{member.upper()} {value} // {desc}"
                      for member, value, desc in f.encoding]
            lines[anchor + 1:anchor + 1] = macros
    return "\n".join(lines) + "\n"


def add_enum_tables(markdown, regmap):
    """``markdown`` (peakrdl-markdown's text) with a value table after the description of
    every field that has an enumeration."""
    lines = markdown.splitlines()
    for reg in regmap.registers:
        for f in reg.fields:
            if not f.encoding:
                continue
            start = lines.index(f"### {reg.ident} register")
            heading = lines.index(f"#### {f.name} field", start)
            end = next((i for i in range(heading + 1, len(lines)) if lines[i].startswith("#")),
                       len(lines))
            while lines[end - 1] == "":
                end -= 1
            table = ["", "|Value|Name|Meaning|", "|-----|----|-------|"]
            table += [f"|{value}|{member}|{desc}|" for member, value, desc in f.encoding]
            lines[end:end] = table
    return "\n".join(lines) + "\n"


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
    regmap = load(rdl_path)
    header.write_text(add_enum_macros(header.read_text(), regmap))
    constants = root / OUTPUTS[1]
    constants.write_text(python_constants(regmap))
    markdown = root / OUTPUTS[2]
    MarkdownExporter().export(rdl.top, str(markdown), input_files=[_SOURCE])
    markdown.write_text(add_enum_tables(markdown.read_text(), regmap))
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
