"""Speculative-decoding traces: a versioned JSON-lines format (``docs/trace-format.md``).

Line 1 is a header ``{"format": "ahasd-trace", "version": 1, ...}``; every further line is one
event, in the order the events happened in the run: ``draft`` (a batch finished drafting),
``verify`` (the oldest unverified batch was verified), ``squash`` (a batch was discarded because
an earlier batch was rejected) and a final ``end``. :func:`read` parses and validates a trace and
raises :class:`TraceError` naming the line and the problem for an unknown format or version, a
missing or mistyped field, or events out of order.
"""

import json
import math
from pathlib import Path

import numpy as np

__all__ = ["FORMAT", "VERSION", "TraceError", "header", "batch_entropy", "validate", "read",
           "write", "edc_events", "verified_batches", "stats"]

FORMAT = "ahasd-trace"
VERSION = 1

_HEADER_FIELDS = {"format": str, "version": int, "vocab_size": int, "policy": str,
                  "policy_params": dict, "greedy": bool, "tokens": int, "prompt": list,
                  "draft_cost": (int, float), "verify_cost": (int, float),
                  "max_unverified": int}
_EVENT_FIELDS = {
    "draft": {"batch": int, "t": (int, float), "tokens": list, "entropy": list, "q": list,
              "edc": (dict, type(None))},
    "verify": {"batch": int, "t": (int, float), "kv_len": int, "p": list, "accepted": int,
               "full": bool, "next_token": (int, type(None))},
    "squash": {"batch": int, "t": (int, float), "drafted": bool},
    "end": {"t": (int, float), "output": list},
}


class TraceError(ValueError):
    """A trace that is not a valid ahasd trace (the message says where and why)."""


def header(**fields):
    """The header record with the format name and version first."""
    return {"format": FORMAT, "version": VERSION, **fields}


def batch_entropy(entropies):
    """A batch's mean draft entropy (nats), the value EDC sees: the plain mean of the tokens'."""
    return sum(entropies) / len(entropies)


def _type_ok(value, types):
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) and bool not in types:
        return False  # JSON true is not an integer here
    return isinstance(value, types)


def _check_fields(rec, spec, where):
    for name, types in spec.items():
        if name not in rec:
            raise TraceError(f"{where}: missing field {name!r}")
        if not _type_ok(rec[name], types):
            raise TraceError(f"{where}: field {name!r} has the wrong type "
                             f"({type(rec[name]).__name__})")


def validate(records):
    """Check parsed records (header first); raise :class:`TraceError`; return the records."""
    records = list(records)
    if not records:
        raise TraceError("empty trace: no header line")
    head = records[0]
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        got = head.get("format") if isinstance(head, dict) else head
        raise TraceError(f"line 1: not an {FORMAT} header (format {got!r})")
    if head.get("version") != VERSION:
        raise TraceError(f"line 1: unsupported {FORMAT} version {head.get('version')!r} "
                         f"(this reader understands version {VERSION})")
    _check_fields(head, _HEADER_FIELDS, "line 1")
    drafted, verified, squashed = {}, set(), set()
    ended = False
    for n, rec in enumerate(records[1:], start=2):
        where = f"line {n}"
        if ended:
            raise TraceError(f"{where}: event after the end event")
        if not isinstance(rec, dict) or rec.get("event") not in _EVENT_FIELDS:
            got = rec.get("event") if isinstance(rec, dict) else rec
            raise TraceError(f"{where}: unknown event {got!r} "
                             f"(expected one of {', '.join(_EVENT_FIELDS)})")
        kind = rec["event"]
        _check_fields(rec, _EVENT_FIELDS[kind], where)
        if kind == "draft":
            k = len(rec["tokens"])
            if k == 0 or len(rec["entropy"]) != k or len(rec["q"]) != k:
                raise TraceError(f"{where}: a draft needs k >= 1 tokens and k entropies and q's")
            if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0
                       for x in rec["tokens"]):
                raise TraceError(f"{where}: tokens must be non-negative integer ids")
            if rec["batch"] in drafted:
                raise TraceError(f"{where}: batch {rec['batch']} drafted twice")
            if not all(isinstance(x, (int, float)) and math.isfinite(x) and x >= 0
                       for x in rec["entropy"]):
                raise TraceError(f"{where}: entropies must be finite numbers >= 0")
            drafted[rec["batch"]] = k
        elif kind == "verify":
            b = rec["batch"]
            if b not in drafted or b in verified or b in squashed:
                raise TraceError(f"{where}: verify of batch {b}, which is not an unverified "
                                 f"drafted batch")
            k = drafted[b]
            if len(rec["p"]) != k or not 0 <= rec["accepted"] <= k \
                    or rec["full"] != (rec["accepted"] == k):
                raise TraceError(f"{where}: verify of batch {b} is inconsistent with its "
                                 f"{k} drafted tokens")
            verified.add(b)
        elif kind == "squash":
            b = rec["batch"]
            if b in verified or b in squashed or (rec["drafted"] and b not in drafted):
                raise TraceError(f"{where}: squash of batch {b}, which is not unverified")
            squashed.add(b)
        else:
            ended = True
    if not ended:
        raise TraceError("trace has no end event (truncated?)")
    return records


def read(path):
    """Parse and validate a trace file; return its records (header first)."""
    records = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise TraceError(f"line {n}: not JSON ({e.msg})") from None
    return validate(records)


def write(records, path):
    """Validate and write records as JSON lines."""
    validate(records)
    path = Path(path)
    if path.parent != Path("."):
        path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")


def _records(records_or_path):
    if isinstance(records_or_path, (str, Path)):
        return read(records_or_path)
    return validate(records_or_path)


def edc_events(records):
    """The EDC event sequence of a run, in order: ``("draft", mean_entropy_nats)`` for each
    drafted batch and ``("verify", full)`` for each verification. ``records`` is a parsed trace or
    a path."""
    out = []
    for rec in _records(records)[1:]:
        if rec["event"] == "draft":
            out.append(("draft", batch_entropy(rec["entropy"])))
        elif rec["event"] == "verify":
            out.append(("verify", rec["full"]))
    return out


def verified_batches(records):
    """Each verified batch as one dict: the draft event's fields plus the verify event's."""
    recs = _records(records)
    drafts = {r["batch"]: r for r in recs[1:] if r["event"] == "draft"}
    out = []
    for r in recs[1:]:
        if r["event"] == "verify":
            d = drafts[r["batch"]]
            out.append({**d, **r, "t_draft": d["t"], "t_verify": r["t"]})
    return out


def stats(records, *, bins=10, h_max=10.0):
    """Summary figures of a trace (a dict); see ``ahasd trace stats``."""
    recs = _records(records)
    batches = verified_batches(recs)
    drafts = [r for r in recs[1:] if r["event"] == "draft"]
    drafted = sum(len(b["tokens"]) for b in batches)
    accepted = sum(b["accepted"] for b in batches)
    output = recs[-1]["output"]
    ents = [h for d in drafts for h in d["entropy"]]
    counts, edges = np.histogram(np.clip(ents, 0, h_max), bins=bins, range=(0, h_max))
    n_verify = len(batches)
    return {
        "policy": recs[0]["policy"],
        "edc": recs[0].get("edc", "off"),
        "output_tokens": len(output),
        "batches_drafted": len(drafts),
        "verifications": n_verify,
        "squashed": sum(1 for r in recs[1:] if r["event"] == "squash"),
        "acceptance_rate": accepted / drafted if drafted else 0.0,
        "accepted_per_verification": accepted / n_verify if n_verify else 0.0,
        "tokens_per_verification": len(output) / n_verify if n_verify else 0.0,
        "full_accept_rate": (sum(b["full"] for b in batches) / n_verify) if n_verify else 0.0,
        "mean_draft_length": (sum(len(d["tokens"]) for d in drafts) / len(drafts))
                             if drafts else 0.0,
        "mean_entropy": float(np.mean(ents)) if ents else 0.0,
        "entropy_histogram": {"edges": [float(e) for e in edges],
                              "counts": [int(c) for c in counts]},
        "time": recs[-1]["t"],
    }
