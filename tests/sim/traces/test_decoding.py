"""Trace format: round trip, validation messages, the EDC event sequence, statistics."""

import json

import numpy as np
import pytest

from ahasd.sim.blocks.edc import EDC
from ahasd.sim.decoding.lookahead import decode
from ahasd.sim.decoding.ngram import load_pair
from ahasd.sim.decoding.policies import SVIPPolicy
from ahasd.sim.traces.decoding import TraceError, edc_events, read, stats, validate, verified_batches, write


@pytest.fixture(scope="module")
def run():
    pair = load_pair(max_files=40)
    prompt = pair.tokenizer.encode("def main():\n    ")
    return decode(pair.draft, pair.target, prompt, n_tokens=250, policy=SVIPPolicy(),
                  rng=np.random.default_rng(11), edc=EDC("committed"), max_unverified=4,
                  meta={"edc": "committed", "seed": 11})


def test_round_trip(run, tmp_path):
    path = tmp_path / "sub" / "t.jsonl"
    write(run.records, path)
    assert read(path) == run.records
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["format"] == "ahasd-trace" and json.loads(lines[0])["version"] == 1


def test_edc_events_replay_the_recorded_decisions(run, tmp_path):
    """Feeding edc_events to a fresh EDC reproduces every decision recorded during the run, so
    the order of draft and verify events is the order EDC saw them."""
    path = tmp_path / "t.jsonl"
    write(run.records, path)
    events = edc_events(path)
    assert events == edc_events(run.records)
    recorded = [(r["edc"]["cont"], r["edc"]["index"]) for r in run.records[1:]
                if r["event"] == "draft"]
    edc = EDC("committed")
    replayed = []
    for kind, value in events:
        if kind == "draft":
            assert isinstance(value, float)
            d = edc.draft(value)
            replayed.append((d.cont, d.index))
        else:
            assert isinstance(value, bool)
            edc.verify(value)
    assert replayed == recorded and len(recorded) > 10
    assert any(v is False for k, v in events if k == "verify")


def test_stats(run):
    s = stats(run.records, bins=5)
    batches = verified_batches(run.records)
    assert s["verifications"] == run.verifications == len(batches)
    assert s["acceptance_rate"] == pytest.approx(run.acceptance_rate)
    assert s["output_tokens"] == 250 and s["squashed"] == run.squashed
    assert s["accepted_per_verification"] == pytest.approx(run.accepted_tokens / run.verifications)
    assert sum(s["entropy_histogram"]["counts"]) == sum(
        len(r["entropy"]) for r in run.records[1:] if r["event"] == "draft")
    assert len(s["entropy_histogram"]["edges"]) == 6
    assert all(len(b["p"]) == len(b["q"]) == len(b["tokens"]) for b in batches)


def mutate(records, line, change):
    recs = json.loads(json.dumps(records))
    change(recs[line - 1])
    return recs


@pytest.mark.parametrize("line, change, message", [
    (1, lambda r: r.update(version=2), "line 1: unsupported ahasd-trace version 2"),
    (1, lambda r: r.update(format="other"), "line 1: not an ahasd-trace header"),
    (1, lambda r: r.pop("vocab_size"), "line 1: missing field 'vocab_size'"),
    (2, lambda r: r.pop("entropy"), "line 2: missing field 'entropy'"),
    (2, lambda r: r.update(event="guess"), "line 2: unknown event 'guess'"),
    (2, lambda r: r.update(tokens="abc"), "line 2: field 'tokens' must be a list, not str"),
    (2, lambda r: r.update(q=[0.5] * 99), r"line 2: field 'q' must hold \d+ values \(one per drafted token\), not 99"),
    (2, lambda r: r["tokens"].__setitem__(0, "x"), r"line 2: tokens\[0\] must be an integer in 0\.\.\d+, not 'x'"),
])
def test_bad_traces_are_rejected_with_a_clear_message(run, line, change, message):
    with pytest.raises(TraceError, match=message):
        validate(mutate(run.records, line, change))


def test_inconsistent_and_truncated_traces(run, tmp_path):
    verify_line = next(i for i, r in enumerate(run.records, start=1) if r.get("event") == "verify")
    with pytest.raises(TraceError, match=f"line {verify_line}: verify of batch .* inconsistent"):
        validate(mutate(run.records, verify_line,
                        lambda r: r.update(full=not r["full"])))
    with pytest.raises(TraceError, match=f"line {verify_line}: accepted must be an integer in 0"):
        validate(mutate(run.records, verify_line, lambda r: r.update(accepted=99)))
    with pytest.raises(TraceError, match=f"line {len(run.records)}: trace has no end event"):
        validate(run.records[:-1])
    with pytest.raises(TraceError, match="line 1: empty trace"):
        validate([])
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(run.records[0]) + "\n{not json\n")
    with pytest.raises(TraceError, match="line 2: not JSON"):
        read(path)
