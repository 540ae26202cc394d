"""The EDC command line: verilog (lint), edc replay (golden, anchor, --rtl, bad input), area."""

import json
import random

import pytest

from ahasd.cli import main
from ahasd.sim.traces.edc_events import random_cycles, run_lengths_cycles


def write_events(path, cycles):
    """Write cycle streams as EDC event lines (a same-cycle pair as verify, then draft)."""
    with open(path, "w") as f:
        for draft_fx, verify in cycles:
            if verify is not None:
                f.write(json.dumps({"op": "verify", "full": verify}) + "\n")
            if draft_fx is not None:
                f.write(json.dumps({"op": "draft", "entropy": draft_fx / 4096}) + "\n")


def test_verilog_edc_is_written_and_lint_clean(tmp_path, capsys):
    assert main(["verilog", "edc", "-o", str(tmp_path)]) == 0
    assert "module edc" in (tmp_path / "edc.v").read_text()
    assert "lint clean" in capsys.readouterr().out


def test_replay_rtl_prints_the_same_lines_as_golden(tmp_path, capsys):
    rng = random.Random(5)
    trace = tmp_path / "events.jsonl"
    write_events(trace, random_cycles(rng, 6000) + run_lengths_cycles(rng, 4000))
    assert main(["edc", "replay", str(trace)]) == 0
    golden = capsys.readouterr().out
    assert main(["edc", "replay", str(trace), "--rtl"]) == 0
    rtl = capsys.readouterr().out
    lines = golden.splitlines()
    assert len(lines) > 5000 and rtl == golden
    first = json.loads(lines[0])
    assert set(first) == {"continue", "index"} and isinstance(first["continue"], bool)


def test_replay_variants_differ_and_stats_go_to_stderr(tmp_path, capsys):
    trace = tmp_path / "events.jsonl"
    write_events(trace, run_lengths_cycles(random.Random(6), 3000))
    assert main(["edc", "replay", str(trace), "--stats"]) == 0
    committed = capsys.readouterr()
    assert main(["edc", "replay", str(trace), "--variant", "anchor"]) == 0
    anchor = capsys.readouterr().out
    assert committed.out != anchor and len(committed.out.splitlines()) == len(anchor.splitlines())
    assert "accuracy" in committed.err and "accuracy" not in committed.out


@pytest.mark.parametrize("line, message", [
    ('{"op": "draft", "entropy": 1.0', "line 3: not JSON"),
    ('{"op": "draft"}', "line 3: draft event lacks entropy"),
    ('{"op": "verify", "full": 1}', "line 3: full must be true or false, not 1"),
    ('{"op": "draft", "entropy": "high"}', "line 3: entropy must be a number >= 0, not 'high'"),
    ('{"op": "draft", "entropy": NaN}', "line 3: NaN is not a JSON number"),
    ('{"op": "draft", "entropy": -Infinity}', "line 3: -Infinity is not a JSON number"),
    ('{"op": "draft", "entropy": -0.5}', "line 3: entropy must be a number >= 0, not -0.5"),
    ('{"op": "draft", "entropy": 1' + "0" * 400 + '}', "line 3: an integer of 401 digits"),
    ('{"op": "draft", "entropy": 1' + "0" * 5000 + '}', "line 3: an integer of 5001 digits"),
    ('{"op": "draft", "entropy": 1e400}', "line 3: the number '1e400' is out of the range"),
    ('{"op": "draft", "entropy": true}', "line 3: entropy must be a number >= 0, not True"),
    ('{"op": "verify", "full": true, "full": false}', "line 3: duplicate key 'full'"),
    ('{"op": "stall"}', "line 3: \"op\" must be \"draft\" or \"verify\", not 'stall'"),
    ('{"op": "verify", "full": true, "len": 3}', "line 3: unknown field"),
    ('[1, 2]', "line 3: expected a JSON object"),
])
def test_replay_rejects_malformed_lines(tmp_path, capsys, line, message):
    trace = tmp_path / "bad.jsonl"
    trace.write_text('{"op": "draft", "entropy": 2.5}\n\n' + line + "\n"
                     '{"op": "verify", "full": true}\n')
    assert main(["edc", "replay", str(trace)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert message in err and err.startswith("ahasd: error:")


def test_replay_rejects_anchor_on_rtl_and_missing_file(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"op": "draft", "entropy": 2.5}\n')
    assert main(["edc", "replay", str(trace), "--rtl", "--variant", "anchor"]) == 2
    assert main(["edc", "replay", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.slow
def test_area_edc_json(tmp_path, capsys):
    assert main(["area", "edc", "--json", "--build-dir", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"blocks", "anchors"} and data["anchors"] is None
    (report,) = data["blocks"]
    # The memories: the PHT (512 x 2 bits, in 64 rows of 8 counters), the decision's
    # continue bits (counter >= threshold, 512 x 1) in three copies (read at the row of no
    # verify, of an accept and of a reject), and the pending FIFO (8 x (9 + 3) bits) in two
    # copies; the PHT and the continue bits are SRAM macros, the FIFO copies flip-flops.
    assert report["memory_bits"] == 512 * 2 + 3 * 512 + 2 * 8 * 12
    assert report["sram_bits"] == 512 * 2 + 3 * 512 and report["ff_bits"] >= 2 * 8 * 12
    assert report["total_mm2"] > report["sram_mm2"] > 0
    assert report["area_ge"] > report["ff_area_ge"] > 0
    assert report["logic_depth"] > 0 and report["cells"] == sum(report["cell_counts"].values())


def test_replay_output_is_json(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"op":"draft","entropy":1.0}\n{"op":"verify","full":false}\n'
                     '{"op":"draft","entropy":9.0}\n')
    assert main(["edc", "replay", str(trace)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.dumps(json.loads(line)) for line in lines] == lines and len(lines) == 2
