"""``ahasd regs generate|check|list``: the files generated from the register map ``hw/regs.rdl``.

``generate [-o ROOT]`` writes ``firmware/ahasd_regs.h``, ``firmware/regs.py`` and
``docs/registers.md`` under ROOT (default: the current folder, i.e. run it from the repository
root); ``check [ROOT]`` exits 1 and names the stale files when a regeneration would change them;
``list`` prints the register map.
"""

import os
import tempfile
from pathlib import Path

from ahasd.errors import CliError
from ahasd.files import output_dir

__all__ = ["register"]


def register(sub):
    p = sub.add_parser("regs", help="generate/check the files derived from hw/regs.rdl",
                       description="Files generated from the SystemRDL register map hw/regs.rdl.")
    verbs = p.add_subparsers(dest="regs_command", required=True, metavar="ACTION")
    g = verbs.add_parser("generate", help="write the C header, Python constants and Markdown doc")
    g.add_argument("-o", "--output", default=Path("."), type=Path, metavar="ROOT",
                   help="root folder for firmware/ and docs/ (default: .)")
    g.set_defaults(func=run_generate)
    c = verbs.add_parser("check", help="exit 1 if the generated files under ROOT are stale")
    c.add_argument("root", nargs="?", default=Path("."), type=Path, metavar="ROOT")
    c.set_defaults(func=run_check)
    l = verbs.add_parser("list", help="print the register map")
    l.set_defaults(func=run_list)


def run_generate(args):
    from ahasd.firmware.regmap_export import OUTPUTS, generate
    for folder in {os.path.dirname(rel) for rel in OUTPUTS}:     # before any work
        output_dir(args.output / folder, "-o")
    # Generate beside the destination, then rename each file into place: a failure part way
    # leaves the old files, never a truncated one.
    with tempfile.TemporaryDirectory(prefix=".ahasd-regs-", dir=args.output) as tmp:
        generate(tmp)
        for rel in OUTPUTS:
            os.replace(os.path.join(tmp, rel), args.output / rel)
    for rel in OUTPUTS:
        print(f"wrote {args.output / rel}")


def run_check(args):
    from ahasd.firmware.regmap_export import OUTPUTS, stale_files
    if not args.root.is_dir():
        raise CliError(f"cannot read {args.root}: not a folder")
    stale = stale_files(args.root)
    if stale:
        raise CliError(f"stale generated files under {args.root}: {', '.join(stale)} "
                       f"(run `ahasd regs generate -o {args.root}`)", status=1)
    print(f"up to date: {', '.join(OUTPUTS)}")


def run_list(args):
    from ahasd.hw.regmap import load
    regmap = load()
    for reg in regmap.registers:
        fields = ", ".join(f"{f.name}[{f.msb}:{f.lsb}] {f.kind}" for f in reg.fields)
        print(f"0x{reg.address:03X} {reg.ident:<22} {fields}")
