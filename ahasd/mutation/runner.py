"""Apply each mutant to a private copy of the tree and run the tests that cover its module.

A mutant is *killed* when its tests fail (pytest exit status 1, or 2 for an error while
collecting, such as an import that the change broke) or run past the time limit; it *survives*
when they pass, or when none of its test files exists (so no test can see it). Every run also
checks, through the probe plugin of :mod:`ahasd.mutation.tree`, that the tests imported the
mutated module from the copy: a run that imported it from anywhere else is an error, not a
result. Runs happen in a fresh temporary copy each, so several can go at once and the working
tree is never touched.
"""

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from ahasd.mutation.locate import apply, is_c
from ahasd.mutation.tree import PROBE_MODULE, copy_path, make_tree, module_name, test_env

__all__ = ["Result", "PYTEST_ARGS", "run_mutant", "run_campaign", "score_line", "file_scores",
           "report"]

#: Options of every test run: stop at the first failure, quiet, no xdist, no cache folder, and
#: the tests in the order given even when a test named first (the mutant's likely killer, as
#: ``file::test``) lies in a file named after it (pytest would otherwise merge the two and run
#: the file's order).
PYTEST_ARGS = ["-x", "-q", "-n", "0", "-p", "no:cacheprovider", "--keep-duplicates",
               "-p", PROBE_MODULE]


@dataclass(frozen=True)
class Result:
    """The outcome of one mutant: ``status`` is killed, survived or error."""
    mutant: object
    status: str
    seconds: float
    detail: str = ""

    @property
    def scored(self):
        return not self.mutant.equivalent


def _test_paths(args):
    return [a for a in args if not a.startswith("-") and (a.startswith("tests/") or "::" in a)]


def _present(dest, arg):
    """Whether the test argument ``arg`` (``file`` or ``file::test[param]``) names something in
    the copy ``dest``: the file exists and, for a node id, the file defines its test function (a
    renamed test then drops out of the selection, with a note, instead of erroring the run)."""
    path, _, node = arg.partition("::")
    if not (dest / path).is_file():
        return False
    name = node.split("::")[-1].split("[")[0]
    return not name or re.search(rf"^\s*(async\s+)?def {re.escape(name)}\(",
                                 (dest / path).read_text(encoding="utf-8"), re.M) is not None


def _tail(text, lines=6):
    return "\n".join(text.strip().splitlines()[-lines:])


def run_mutant(repo, catalogue, mutant, *, timeout=900, workdir=None, python=sys.executable,
               nice=True):
    """Run one mutant in a fresh copy of ``repo``; return its :class:`Result`."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ahasd-mutant-", dir=workdir) as tmp:
        dest = Path(tmp) / "tree"
        dirs = make_tree(repo, dest)
        target = dest / copy_path(mutant.file, dirs)
        if not target.is_file():
            return Result(mutant, "error", 0.0, f"{mutant.file} does not exist")
        try:
            target.write_text(apply(target.read_text(encoding="utf-8"), mutant),
                              encoding="utf-8")
        except ValueError as err:
            return Result(mutant, "error", 0.0, str(err))
        args = catalogue.tests_for(mutant)
        present = [a for a in args if a not in _test_paths(args) or _present(dest, a)]
        missing = sorted(set(args) - set(present))
        note = f"missing test file(s) {', '.join(missing)}; " if missing else ""
        if not _test_paths(present):
            return Result(mutant, "survived", 0.0, f"{note}no test to run")
        probe = Path(tmp) / "probe.json"
        # A C source is compiled from its package's folder (ahasd.firmware.build.source_dir):
        # the probe checks that package instead.
        name = module_name(Path(mutant.file).parent / "__init__.py" if is_c(mutant.file)
                           else mutant.file, dirs)
        env = test_env(dest, AHASD_MUTATION_MODULE=name, AHASD_MUTATION_PROBE=probe)
        command = ([] if not nice or not shutil.which("nice") else ["nice", "-n", "10"]) + \
            [python, "-m", "pytest", *PYTEST_ARGS, *present]
        try:
            done = subprocess.run(command, cwd=dest, env=env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return Result(mutant, "killed", time.monotonic() - start,
                          f"{note}timeout after {timeout} s")
        seconds = time.monotonic() - start
        output = done.stdout + done.stderr
        if done.returncode in (3, 4):
            return Result(mutant, "error", seconds,
                          f"pytest exit {done.returncode}: {_tail(output)}")
        if probe.exists():
            seen = json.loads(probe.read_text(encoding="utf-8"))
            file = seen["file"]
            if file is not None and dest.resolve() not in Path(file).resolve().parents:
                return Result(mutant, "error", seconds,
                              f"the tests imported {name} from {file}, not from the copy")
        else:
            file = None
        if done.returncode in (1, 2):
            failed = [line for line in output.splitlines()
                      if line.startswith(("FAILED", "ERROR"))]
            return Result(mutant, "killed", seconds, note + (failed[0] if failed else
                                                            f"exit {done.returncode}"))
        if done.returncode == 0:
            if file is None:
                note += f"the tests never imported {name}; "
            return Result(mutant, "survived", seconds, note + "all tests passed")
        if done.returncode == 5:
            return Result(mutant, "survived", seconds, f"{note}no test collected")
        return Result(mutant, "error", seconds, f"pytest exit {done.returncode}: {_tail(output)}")


def run_campaign(repo, catalogue, mutants, *, jobs=2, timeout=900, log=None, times=None,
                 **kwargs):
    """Run ``mutants`` with ``jobs`` at once; progress lines go to ``log`` (standard error).

    ``times`` ({id: seconds} of an earlier run) orders the work longest first, so that the
    slow cocotb mutants do not end up alone at the end; mutants without a time go first.
    Results in catalogue order.
    """
    log = log or sys.stderr
    times = times or {}
    results = {}
    total = len(mutants)
    order = sorted(mutants, key=lambda m: -times.get(m.id, float("inf")))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_mutant, repo, catalogue, m, timeout=timeout, **kwargs): m
                   for m in order}
        for future in as_completed(futures):
            result = future.result()
            results[result.mutant.id] = result
            eq = " (equivalent)" if result.mutant.equivalent else ""
            why = f": {result.detail[:120]}" if result.detail else ""
            print(f"[{len(results)}/{total}] {result.mutant.id}: {result.status}{eq} "
                  f"in {result.seconds:.1f} s{why}", file=log, flush=True)
    return [results[m.id] for m in mutants]


def score_line(results):
    """``mutation score: K/N killed (P%)`` over the non-equivalent mutants."""
    scored = [r for r in results if r.scored]
    killed = sum(r.status == "killed" for r in scored)
    percent = 100.0 * killed / len(scored) if scored else 0.0
    return f"mutation score: {killed}/{len(scored)} killed ({percent:.1f}%)"


def file_scores(results):
    """``[(file, killed, scored)]`` per source file, in file order (equivalents not scored; a
    mutant whose run was an error, or that no longer located, counts as not killed)."""
    files = {}
    for r in results:
        if r.scored:
            killed, scored = files.get(r.mutant.file, (0, 0))
            files[r.mutant.file] = (killed + (r.status == "killed"), scored + 1)
    return [(f, k, n) for f, (k, n) in sorted(files.items())]


def report(results, seconds, out=None, cpu_seconds=None):
    """Survivors, errors and equivalents, then the score as the last line (standard output).

    ``cpu_seconds``: the test runs' processor time, reported beside the wall time because on a
    shared machine the wall time says more about the load than about the campaign.
    """
    out = out or sys.stdout
    scored = [r for r in results if r.scored]
    by = {s: [r for r in scored if r.status == s] for s in ("killed", "survived", "error")}
    cpu = f", processor time {cpu_seconds / 60:.1f} min" if cpu_seconds is not None else ""
    print(f"{len(results)} mutants, {len(scored)} scored, wall time {seconds / 60:.1f} min{cpu}",
          file=out)
    for status in ("survived", "error"):
        if by[status]:
            print(f"{status}:", file=out)
        for r in by[status]:
            m = r.mutant
            print(f"  {m.id}  {m.file} [{m.scope or '<module>'}] {m.find!r} -> {m.replace!r}"
                  f"  ({m.behaviour}): {r.detail}", file=out)
    equivalent = [r for r in results if not r.scored]
    if equivalent:
        print("equivalent (not scored):", file=out)
    for r in equivalent:
        m = r.mutant
        print(f"  {m.id}  {m.file} {m.find!r} -> {m.replace!r}: {m.equivalent} "
              f"[run: {r.status}]", file=out)
    print("per source file:", file=out)
    for file, killed, scored in file_scores(results):
        print(f"  {file}: {killed}/{scored} killed ({100.0 * killed / scored:.1f}%)", file=out)
    print(score_line(results), file=out)
