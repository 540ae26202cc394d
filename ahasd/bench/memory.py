"""Peak memory of an ``ahasd`` command, counted with its child processes (the Verilated model).

The command runs in a fresh interpreter; at its end that interpreter reports its own peak
resident set (``RUSAGE_SELF``) and the largest of its waited-for children's
(``RUSAGE_CHILDREN``). Their sum bounds the peak of the whole process tree from above (the two
peaks need not coincide), which is what a memory limit has to hold.
"""

import json
import os
import subprocess
import sys
import tempfile

__all__ = ["peak_memory_mb", "replay_memory"]

_WRAPPER = """
import json, resource, sys
from ahasd.cli import main
status = main(sys.argv[2:])
sys.stdout.flush()
mb = lambda who: resource.getrusage(who).ru_maxrss / 1024
with open(sys.argv[1], "w") as f:
    json.dump({"status": status, "self_mb": mb(resource.RUSAGE_SELF),
               "children_mb": mb(resource.RUSAGE_CHILDREN)}, f)
"""


def peak_memory_mb(argv, *, stdin=None, timeout=None):
    """Run ``ahasd argv`` (standard output discarded; ``stdin`` a path or None); return a dict
    with ``status``, ``self_mb``, ``children_mb`` and ``peak_mb`` (their sum), in MiB."""
    fd, report = tempfile.mkstemp(prefix="ahasd-rss-", suffix=".json")
    os.close(fd)
    try:
        with open(stdin or os.devnull, "rb") as source:
            proc = subprocess.run([sys.executable, "-c", _WRAPPER, report, *map(str, argv)],
                                  stdin=source, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, timeout=timeout)
        figures = {}
        if proc.returncode == 0:
            with open(report) as f:
                figures = json.load(f)
        if figures.get("status") != 0:
            raise RuntimeError(f"ahasd {' '.join(map(str, argv))} failed: {proc.stderr}")
    finally:
        os.unlink(report)
    figures["peak_mb"] = figures["self_mb"] + figures["children_mb"]
    figures["stderr"] = proc.stderr
    return figures


def replay_memory(verb, lines):
    """Peak memory (MiB, children included) of ``ahasd VERB replay`` on the trace ``lines``
    (an iterable of JSON lines), golden and ``--rtl``: ``{"golden_replay_peak_mb": ...,
    "rtl_replay_peak_mb": ...}``."""
    fd, path = tempfile.mkstemp(prefix=f"ahasd-{verb}-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.writelines(lines)
        return {f"{kind}_replay_peak_mb": peak_memory_mb([verb, "replay", path, *extra])["peak_mb"]
                for kind, extra in (("golden", []), ("rtl", ["--rtl"]))}
    finally:
        os.unlink(path)


if __name__ == "__main__":       # python -m ahasd.bench.memory edc replay big.jsonl
    print(json.dumps(peak_memory_mb(sys.argv[1:])))

