"""Point 9 of issue 23: ``simulate --trace`` reports the trace's own policy and length and says
(stderr) when it uses fewer tokens than the trace holds; ``decode`` and ``trace stats`` name what
their batch counts count; the demo's steps are numbered in order."""

import json
import re

import pytest

from ahasd.cli import main


def run(capsys, argv):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def trace60(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "t60.jsonl"
    assert main(["decode", "--tokens", "60", "--policy", "svip", "--seed", "3", "--out", str(path)]) == 0
    return path


def _header(path):
    with open(path, encoding="utf-8") as f:
        return json.loads(f.readline())


def test_simulate_trace_reports_its_policy_and_length(trace60, capsys):
    head = _header(trace60)
    assert (head["policy"], head["tokens"]) == ("svip", 60)
    status, out, err = run(capsys, ["simulate", "--trace", trace60, "--json"])
    assert status == 0 and err == ""
    result = json.loads(out)
    assert result["tokens"] == 60 and result["policy"] == "svip"
    status, out, err = run(capsys, ["simulate", "--trace", trace60])
    assert status == 0 and out.startswith("AHASD on opt (svip, golden pair trace): 60 tokens")


def test_simulate_trace_rejects_another_policy(trace60, capsys):
    status, out, err = run(capsys, ["simulate", "--trace", trace60, "--policy", "fixed"])
    assert (status, out) == (2, "")
    assert err == (f"ahasd: error: --policy fixed: the trace {trace60} was recorded with svip "
                   "(drop --policy: a trace's policy is its own)\n")
    status, out, err = run(capsys, ["simulate", "--trace", trace60, "--policy", "svip", "--json"])
    assert status == 0 and json.loads(out)["policy"] == "svip"


def test_simulate_trace_says_when_it_uses_fewer_tokens(trace60, capsys):
    status, out, err = run(capsys, ["simulate", "--trace", trace60, "--tokens", "25", "--json"])
    assert status == 0 and json.loads(out)["tokens"] == 25
    assert err == "ahasd: note: simulating the first 25 of the trace's 60 tokens (--tokens 25)\n"
    status, out, err = run(capsys, ["simulate", "--trace", trace60, "--tokens", "90", "--json"])
    assert status == 0 and json.loads(out)["tokens"] == 90
    assert "replaying the trace's 60 from the start again" in err


def test_decode_and_trace_stats_name_their_batch_counts(tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    status, out, err = run(capsys, ["decode", "--tokens", "60", "--policy", "svip", "--seed", "3",
                                    "--out", path])
    assert status == 0
    started, drafted = map(int, re.search(r"(\d+) batches started \((\d+) drafted, as trace stats "
                                          r"counts\)", out).groups())
    with open(path, encoding="utf-8") as f:
        events = [json.loads(line).get("event") for line in f]
    assert drafted == events.count("draft") and started >= drafted
    status, out, err = run(capsys, ["trace", "stats", path, "--json"])
    assert status == 0 and json.loads(out)["batches_drafted"] == drafted


def test_steps_count_in_order():
    from rich.console import Console

    from ahasd.commands.demo import Steps
    console = Console(record=True, width=80)
    steps = Steps(console)
    for text in "abc":
        steps.say(text)
    Steps(console, done=steps.count).say("d")
    assert console.export_text().splitlines() == ["1. a", "2. b", "3. c", "4. d"]


@pytest.mark.slow
def test_demo_steps_are_numbered_in_order(tmp_path, capsys):
    status = main(["demo", "--tokens", "50", "--build-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0
    numbers = [int(m) for m in re.findall(r"^(\d+)\. ", out, flags=re.M)]
    assert numbers == [1, 2, 3, 4, 5], out
