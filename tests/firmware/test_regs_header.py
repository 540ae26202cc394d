"""The generated C header (firmware/ahasd_regs.h) compiles cleanly and lays the registers out at
the addresses of the register map."""

import shutil
import subprocess
from pathlib import Path

from ahasd.hw.regmap import load

HEADER = Path(__file__).resolve().parents[2] / "firmware" / "ahasd_regs.h"


def test_header_offsets_match_the_map(tmp_path):
    compiler = shutil.which("gcc") or shutil.which("cc")
    assert compiler, "a C compiler (gcc) is needed to check the generated header"
    regmap = load()
    lines = ["#include <stddef.h>", "#include <stdio.h>", f'#include "{HEADER}"',
             "int main(void) {"]
    for reg in regmap.registers:
        member = ".".join(reg.path)
        lines.append(f'    printf("%s %zu\\n", "{reg.ident}", offsetof(ahasd_ctrl_t, {member}));')
        for f in reg.fields:
            macro = "AHASD_CTRL__" + "__".join(p.upper() for p in reg.path[-1:]) + \
                f"__{f.name.upper()}"
            if len(reg.path) > 1:   # regfile members are named by the regfile type
                macro = f"AHASD_CTRL__QUEUE_REGS__{reg.path[-1].upper()}__{f.name.upper()}"
            lines.append(f'    printf("%s.%s %llu %d\\n", "{reg.ident}", "{f.name}", '
                         f'(unsigned long long){macro}_bm, {macro}_bp);')
    lines += ["    return 0;", "}"]
    source = tmp_path / "offsets.c"
    source.write_text("\n".join(lines) + "\n")
    binary = tmp_path / "offsets"
    subprocess.run([compiler, "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", str(binary),
                    str(source)], check=True, capture_output=True, text=True)
    out = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        key, *values = line.split()
        got[key] = tuple(int(v) for v in values)
    for reg in regmap.registers:
        assert got[reg.ident] == (reg.address,), reg.ident
        for f in reg.fields:
            assert got[f"{reg.ident}.{f.name}"] == (f.mask, f.lsb), f"{reg.ident}.{f.name}"
