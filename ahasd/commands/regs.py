"""``ahasd regs generate|check|list``: the files generated from the register map ``hw/regs.rdl``.

``generate [-o ROOT]`` writes ``firmware/ahasd_regs.h``, ``firmware/regs.py`` and
``docs/registers.md`` under ROOT (default: the current folder, i.e. run it from the repository
root); ``check [ROOT]`` (default: the checkout the current folder is in; outside one it says
so) exits 1 and names the stale files when a regeneration would change them; ``list`` prints the
register map.
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
    c.add_argument("root", nargs="?", default=None, type=Path, metavar="ROOT",
                   help="the checkout to check (default: the checkout the current folder is in)")
    c.set_defaults(func=run_check)
    listing = verbs.add_parser("list", help="print the register map")
    listing.set_defaults(func=run_list)


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


#: A folder is a checkout when it holds the register map's source.
CHECKOUT_MARK = Path("hw") / "regs.rdl"


def _checkout_root(start):
    """The nearest folder at or above ``start`` that holds :data:`CHECKOUT_MARK`, else None."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / CHECKOUT_MARK).is_file():
            return folder
    return None


def run_check(args):
    from ahasd.firmware.regmap_export import OUTPUTS, stale_files
    if args.root is None:
        root = _checkout_root(Path.cwd())
        if root is None:
            raise CliError(f"regs check: not inside a checkout (no {CHECKOUT_MARK} in "
                           f"{Path.cwd()} or a parent folder); run it in the repository or give ROOT")
        args.root = Path(os.path.relpath(root)) if root != Path.cwd().resolve() else Path(".")
    elif not args.root.is_dir():
        raise CliError(f"cannot read {args.root}: not a folder")
    elif not (args.root / CHECKOUT_MARK).is_file() and not any((args.root / rel).exists()
                                                                for rel in OUTPUTS):
        raise CliError(f"regs check: {args.root} is not a checkout (none of {CHECKOUT_MARK}, "
                       f"{', '.join(OUTPUTS)} in it)")
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
