"""``python -m ahasd.formal [BLOCK|all] [--readme FILE] [--build-dir DIR]``: the formal proofs of
:mod:`ahasd.synth.formal` (``make formal``) and, with ``--readme``, the README's generated table
of them (section ``formal``, :mod:`ahasd.readme`; checked before any proof starts)."""

import argparse
import sys
from pathlib import Path

__all__ = ["main"]


def main(argv=None):
    from ahasd.errors import CliError
    from ahasd.readme import check_readme, update_section
    from ahasd.synth import formal
    parser = argparse.ArgumentParser(prog="python -m ahasd.formal",
                                     description="Formal proofs of the RTL blocks (sby), each "
                                                 "property also on its broken copy.")
    parser.add_argument("block", nargs="?", default="all",
                        help=f"one of {', '.join(formal.BLOCKS)}, or all (default)")
    parser.add_argument("--readme", type=Path, default=None, metavar="FILE",
                        help=f"also rewrite the generated section '{formal.README_SECTION}' "
                             f"of FILE")
    parser.add_argument("--build-dir", type=Path, default=Path("build/formal"), metavar="DIR",
                        help="where the sby runs go (default: build/formal)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.readme is not None:
        try:
            check_readme(args.readme, [formal.README_SECTION])
        except CliError as error:
            raise SystemExit(f"formal: {error}") from None
    rows, seconds = formal.run_table(args.block, args.build_dir)
    if args.readme is not None:
        update_section(args.readme, formal.README_SECTION, formal.readme_table(rows, seconds))
    formal.fail_unless_all_hold(rows)


if __name__ == "__main__":
    main()
