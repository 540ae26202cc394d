"""``python -m ahasd.mutation``: run the mutation campaign (``make mutate``), list or draw mutants.

    python -m ahasd.mutation [run] [--jobs 2] [--only ID ... | --files PATH ...] [--timeout 900]
                             [--equivalents] [--record-killers]
    python -m ahasd.mutation list
    python -m ahasd.mutation draw --count 45 [--seed 14]    # TOML on stdout, to review and append
"""

import argparse
import json
import resource
import sys
import time
from pathlib import Path

from ahasd.mutation.catalogue import (
    DEFAULT_PATH,
    KILLERS_NAME,
    killer_of,
    load,
    to_toml,
    write_killers,
)
from ahasd.mutation.draw import draw
from ahasd.mutation.runner import Result, report, run_campaign
from ahasd.mutation.tree import check_imports, make_tree


def _repo(start):
    for folder in [start, *start.parents]:
        if (folder / "pyproject.toml").exists() and (folder / "hw").is_dir():
            return folder
    raise SystemExit(f"ahasd.mutation: error: no ahasd checkout (pyproject.toml and hw/) at or "
                     f"above {start}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ahasd.mutation")
    parser.add_argument("verb", nargs="?", default="run", choices=["run", "list", "draw"])
    parser.add_argument("--catalogue", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--repo", type=Path, default=None, help="checkout (default: the one "
                        "at or above the current folder)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per mutant")
    parser.add_argument("--only", nargs="+", default=None, metavar="ID")
    parser.add_argument("--files", nargs="+", default=None, metavar="PATH",
                        help="only the mutants of these source files, or of files under these "
                        "folders (sim/, hw/gts.py)")
    parser.add_argument("--equivalents", action="store_true",
                        help="also run the mutants marked equivalent (not scored; a check that "
                        "they still survive), which --only does for the ids it names")
    parser.add_argument("--record-killers", action="store_true",
                        help=f"write each killed mutant's killing test to {KILLERS_NAME} beside "
                        "the catalogue (run first next time)")
    parser.add_argument("--count", type=int, default=45, help="draw: how many")
    parser.add_argument("--seed", type=int, default=None, help="draw: default the catalogue's")
    args = parser.parse_args(argv)
    repo = _repo((args.repo or Path.cwd()).resolve())
    catalogue = load(args.catalogue)

    if args.verb == "draw":
        modules = [m for m in catalogue.modules if m.endswith((".py", ".c"))]
        seed = catalogue.seed if args.seed is None else args.seed
        # A site some mutant already changes is not drawn again.
        taken = {(m.file, m.scope, m.find) for m in catalogue.mutants}
        drawn = [m for m in draw([str(repo / f) for f in modules], args.count + len(taken), seed)]
        out, counts = [], {}
        for m in drawn:
            rel = str(Path(m.file).relative_to(repo))
            if (rel, m.scope, m.find) in taken or len(out) >= args.count:
                continue
            stem = rel.removesuffix(".py").replace(".", "-").replace("/", "-")
            counts[(stem, m.operator)] = n = counts.get((stem, m.operator), 0) + 1
            out.append(type(m)(**{**m.__dict__, "file": rel,
                                  "id": f"drawn-{stem}-{m.operator}-{n}"}))
        sys.stdout.write(to_toml(out))
        return 0

    mutants = list(catalogue.mutants)
    if args.only:
        unknown = set(args.only) - {m.id for m in mutants}
        if unknown:
            parser.error(f"--only: no mutant {', '.join(sorted(unknown))} in {args.catalogue}")
        mutants = [m for m in mutants if m.id in args.only]
    if args.files:
        prefixes = [f.rstrip("/") for f in args.files]
        mutants = [m for m in mutants
                   if any(m.file == p or m.file.startswith(p + "/") for p in prefixes)]
        if not mutants:
            parser.error(f"--files: no mutant of {', '.join(args.files)} in {args.catalogue}")
    if args.verb == "list":
        for m in mutants:
            eq = f"  [equivalent: {m.equivalent}]" if m.equivalent else ""
            print(f"{m.id}  {m.file} [{m.scope}] {m.find!r} -> {m.replace!r}{eq}")
        return 0

    start = time.monotonic()
    # Canary: the copy must import every package from itself, not from the editable install.
    import tempfile
    with tempfile.TemporaryDirectory(prefix="ahasd-mutation-canary-") as tmp:
        dirs = make_tree(repo, Path(tmp) / "tree")
        files = check_imports(Path(tmp) / "tree", sorted(dirs))
    print(f"canary: {len(files)} packages import from the copy", file=sys.stderr)
    # Equivalent mutants are not scored: by default they are listed, not run (a survivor runs
    # every test of its selection, the slowest runs of all).
    skip = {m.id for m in mutants if m.equivalent and not (args.equivalents or args.only)}
    print(f"{len(mutants) - len(skip)} mutants to run ({len(skip)} equivalent not run), "
          f"{args.jobs} at once", file=sys.stderr)
    times_file = repo / "build" / "mutation" / "times.json"
    times = json.loads(times_file.read_text()) if times_file.exists() else {}
    done = run_campaign(repo, catalogue, [m for m in mutants if m.id not in skip],
                        jobs=args.jobs, timeout=args.timeout, times=times)
    by_id = {r.mutant.id: r for r in done}
    results = [by_id[m.id] if m.id not in skip else Result(m, "not run", 0.0)
               for m in mutants]
    times.update({r.mutant.id: round(r.seconds, 1) for r in done})
    times_file.parent.mkdir(parents=True, exist_ok=True)
    times_file.write_text(json.dumps(times, indent=1, sort_keys=True))
    if args.record_killers:
        first = dict(catalogue.first)
        for r in results:
            killer = killer_of(r.detail) if r.status == "killed" else None
            if killer:
                first[r.mutant.id] = killer
        write_killers(args.catalogue.with_name(KILLERS_NAME), first, catalogue.mutants)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    report(results, time.monotonic() - start, cpu_seconds=usage.ru_utime + usage.ru_stime)
    return 0


if __name__ == "__main__":
    sys.exit(main())
