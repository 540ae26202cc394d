"""Point 3 of issue 23: every table reads at 80 columns in a pipe. Each command's table is rendered
from saved results (tests/cli/data/saved_reports.json, the README's generated figures; no
synthesis) with COLUMNS=80 into captured (non-terminal) output: no line is over 80 characters,
every figure of the command's JSON output appears whole in its block's row, every column names
its unit, and integers carry thousands separators throughout."""

import json
import re
from pathlib import Path

import pytest

from ahasd.cli import main
from ahasd.synth.fpga import FpgaReport
from ahasd.synth.sta import TimingReport
from ahasd.synth.yosys import AreaReport

SAVED = json.loads((Path(__file__).parent / "data" / "saved_reports.json").read_text(encoding="utf-8"))


@pytest.fixture
def saved(monkeypatch):
    area = {d["block"]: AreaReport(**d) for d in SAVED["area"]}
    fpga = {d["block"]: FpgaReport(**d) for d in SAVED["fpga_ecp5"]}
    timing = {d["block"]: TimingReport(**d) for d in SAVED["timing"]}
    monkeypatch.setattr("ahasd.synth.area_report.area_report", lambda name, *a, **k: area[name])
    monkeypatch.setattr("ahasd.synth.fpga_report.fpga_report", lambda name, *a, **k: fpga[name])
    monkeypatch.setattr("ahasd.commands.timing.timing_report",
                        lambda name, *a, **k: (timing[name], True))
    monkeypatch.setenv("COLUMNS", "80")


def run(capsys, argv):
    assert main([str(a) for a in argv]) in (0, None)
    captured = capsys.readouterr()
    return captured.out


def whole(text, figure):
    """``figure`` appears in ``text`` not as part of a longer number."""
    return re.search(r"(?<![\d.,])" + re.escape(figure) + r"(?![\d,]|\.\d)", text) is not None


def block_text(text, name):
    """The part of the output about block ``name``: its table row, or its key: value block."""
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line in (name, f"block {name}")]
    if heads:                                          # stacked layout
        start = heads[0] + 1
        end = next((i for i in range(start, len(lines)) if lines[i] and not lines[i].startswith(" ")),
                   len(lines))
        return "\n".join(lines[start:end])
    rows = [line for line in lines if re.search(r"[│|]\s*" + re.escape(name) + r"\s*[│|]", line)]
    assert rows, f"no row for {name}:\n{text}"
    return "\n".join(rows)


def check_width(text):
    too_long = [line for line in text.splitlines() if len(line) > 80]
    assert too_long == [], too_long


#: command -> (argv, {JSON key: how the table shows it}), the formats written out independently
INT = "{:,}".format
CASES = {
    "area": (["area", "all"], {"cells": INT, "ff_bits": INT, "memory_bits": INT, "sram_bits": INT,
                               "area_ge": "{:,.0f}".format, "logic_depth": INT, "delay_depth": INT,
                               "total_mm2": "{:.4f}".format, "die_percent": "{:.3f}".format,
                               "seconds": "{:,.0f}".format}),
    "fpga": (["fpga", "ecp5", "all"], {"luts": INT, "ffs": INT, "dsps": INT, "brams": INT,
                                       "fmax_mhz": lambda v: "-" if v is None else f"{v:.1f}",
                                       "seconds": "{:,.0f}".format}),
    "timing": (["timing", "all"], {"critical_ns": "{:.3f}".format, "fmax_mhz": "{:,.0f}".format,
                                   "logic_depth": INT, "failing_endpoints": INT, "endpoints": INT}),
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_table_at_80_columns(tmp_path, capsys, saved, command):
    argv, shown = CASES[command]
    argv = argv + ["--build-dir", tmp_path]
    text = run(capsys, argv)
    data = run(capsys, argv + ["--json"])
    check_width(text)
    blocks = json.loads(data)["blocks"]
    assert len(blocks) == 10
    for block in blocks:
        part = block_text(text, block["block"])
        for key, fmt in shown.items():
            figure = fmt(block[key])
            assert whole(part, figure), (block["block"], key, figure, part)
    if command == "fpga":
        for block in blocks:
            assert all(word in block_text(text, block["block"]).replace("\n", " ").split()
                       for word in (block["note"] or "").split())


def test_area_anchors_at_80_columns(tmp_path, capsys, saved):
    argv = ["area", "all", "--anchors", "--build-dir", tmp_path]
    text = run(capsys, argv)
    check_width(text)
    anchors = json.loads(run(capsys, argv + ["--json"]))["anchors"]
    for row in anchors:
        part = block_text(text.split("beside the AHASD paper")[-1], row["item"])
        for key in ("ours", "paper", "authors_docs"):
            assert whole(part, "-" if row[key] is None else f"{row[key]:.4f}"), (row, part)


def test_trace_stats_at_80_columns(tmp_path, capsys, monkeypatch):
    trace = tmp_path / "t.jsonl"
    assert main(["decode", "--tokens", "40", "--out", str(trace)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "80")
    text = run(capsys, ["trace", "stats", trace])
    figures = json.loads(run(capsys, ["trace", "stats", trace, "--json"]))
    check_width(text)
    from ahasd.commands.trace import STATS_ROWS
    for key, label, places in STATS_ROWS:
        line = next(line for line in text.splitlines() if label in line)
        assert whole(line, f"{figures[key]:,}" if places is None else f"{figures[key]:.{places}f}")


def test_units_in_headers():
    from ahasd.commands.timing import TERMINAL_HEADER
    from ahasd.synth import area_report, fpga_report
    unitless = {"block", "part", "item", "from", "to", "ours/paper", "ours/docs", "late end points",
                "meets {target:g} MHz", "utilisation / note"}
    for column in (*area_report.TABLE_COLUMNS, *area_report.ANCHOR_COLUMNS, *fpga_report.TABLE_COLUMNS,
                   *TERMINAL_HEADER):
        if column in unitless:
            continue
        assert re.search(r"\[.+\]|bits|GE|cells|LUTs|FFs|DSPs|BRAMs", column), column


def test_stacked_layout_never_cuts():
    from ahasd.tables import render_stacked
    lines = render_stacked("a title " * 20, ("block", "figure [unit]", "note"),
                           [("edc", "1,234,567.891", "word " * 40)], 40)
    assert all(len(line) <= 40 for line in lines)
    assert "  figure [unit]: 1,234,567.891" in lines
