"""``ahasd decode``, ``ahasd trace stats`` and ``ahasd bench decode`` end to end."""

import json
import sys

import pytest

from ahasd.cli import main
from ahasd.sim.traces.decoding import edc_events, read


@pytest.mark.parametrize("policy, edc", [("fixed", "off"), ("specdecpp", "committed"),
                                         ("svip", "anchor"), ("adaedl", "off"),
                                         ("banditspec", "committed")])
def test_decode_writes_a_valid_trace_and_stats_reads_it(tmp_path, capsys, policy, edc):
    out = tmp_path / "t.jsonl"
    assert main(["decode", "--pair", "ngram", "--policy", policy, "--edc", edc,
                 "--tokens", "120", "--seed", "3", "--out", str(out)]) == 0
    assert "120 tokens" in capsys.readouterr().out
    records = read(out)
    assert records[0]["policy"] == policy and records[0]["edc"] == edc
    assert len(records[-1]["output"]) == 120
    drafts = [r for r in records[1:] if r["event"] == "draft"]
    assert all((r["edc"] is None) == (edc == "off") for r in drafts)
    assert len([e for e in edc_events(out) if e[0] == "draft"]) == len(drafts)
    assert main(["trace", "stats", str(out), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["output_tokens"] == 120 and 0 < figures["acceptance_rate"] <= 1
    assert main(["trace", "stats", str(out)]) == 0
    text = capsys.readouterr().out
    assert "acceptance rate" in text and "histogram" in text


def test_same_seed_same_trace(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (a, b):
        main(["decode", "--policy", "svip", "--edc", "committed", "--tokens", "80",
              "--seed", "9", "--out", str(path)])
    assert a.read_text() == b.read_text()


def test_stats_rejects_a_bad_trace_clearly(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"format": "ahasd-trace", "version": 7}) + "\n")
    assert main(["trace", "stats", str(bad)]) == 2
    assert "unsupported ahasd-trace version 7" in capsys.readouterr().err
    assert main(["trace", "stats", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl: no such file or directory" in capsys.readouterr().err


def test_decode_errors(tmp_path, capsys, monkeypatch):
    assert main(["decode", "--tokens", "0", "--out", str(tmp_path / "x")]) == 2
    assert ("ahasd: error: decode: argument --tokens: must be an integer in 1..100000, not 0"
            in capsys.readouterr().err)
    assert main(["decode", "--min-len", "4", "--max-len", "2", "--out", str(tmp_path / "x")]) == 2
    assert "min_len must be <= max_len, not 4 > 2" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if not installed
    assert main(["decode", "--pair", "hf", "--draft-model", "d", "--target-model", "t",
                 "--out", str(tmp_path / "x")]) == 2
    assert "pip install 'ahasd[hf]'" in capsys.readouterr().err


def test_bench_decode_quick(capsys):
    assert main(["bench", "decode", "--quick", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["benches"]["decode"]
    assert figures["speculative_greedy_tokens_per_s"] > 0
    assert len(figures["policies"]) == 15
    assert {r["mode"] for r in figures["policies"]} == {"sync", "ahead", "ahead+EDC"}
    assert all(0 < r["acceptance_rate"] < 1 for r in figures["policies"])
    agreement = figures["agreement"]
    assert 0 < agreement["mean_accept_prob"] < 1
    assert agreement["entropy_p10"] <= agreement["entropy_p50"] <= agreement["entropy_p90"]
