"""EDC event traces: JSON lines read by ``ahasd edc replay``.

Two formats are accepted:

* EDC event lines, one event per line::

      {"op": "draft", "entropy": 3.2}      # batch mean entropy in nats (a number, not NaN)
      {"op": "verify", "full": true}       # the oldest unverified batch: fully accepted or not

* a speculative-decoding trace (``{"format": "ahasd-trace", ...}`` header, see
  ``docs/trace-format.md``), whose draft and verify events are taken in the order they happened
  (:func:`ahasd.sim.traces.decoding.edc_events`).

Blank lines are ignored. Anything else is an error naming the line.
"""

import json
import math

__all__ = ["TraceFormatError", "parse_events", "read_events"]

_FIELDS = {"draft": ("entropy",), "verify": ("full",)}


class TraceFormatError(ValueError):
    """A malformed trace line; the message starts with ``line N:``."""


def _event(record, n):
    if not isinstance(record, dict):
        raise TraceFormatError(f"line {n}: expected a JSON object, got {type(record).__name__}")
    op = record.get("op")
    if op not in _FIELDS:
        raise TraceFormatError(f"line {n}: \"op\" must be \"draft\" or \"verify\", not {op!r}")
    expected = {"op", *_FIELDS[op]}
    missing = expected - record.keys()
    if missing:
        raise TraceFormatError(f"line {n}: {op} event lacks {', '.join(sorted(missing))}")
    extra = record.keys() - expected
    if extra:
        raise TraceFormatError(f"line {n}: unknown field(s) {', '.join(sorted(extra))} "
                               f"in a {op} event")
    if op == "draft":
        h = record["entropy"]
        if isinstance(h, bool) or not isinstance(h, (int, float)) or math.isnan(h):
            raise TraceFormatError(f"line {n}: entropy must be a number of nats, not {h!r}")
        return ("draft", float(h))
    full = record["full"]
    if not isinstance(full, bool):
        raise TraceFormatError(f"line {n}: full must be true or false, not {full!r}")
    return ("verify", full)


def parse_events(lines):
    """Parse an iterable of text lines into ``[("draft", nats) | ("verify", full)]``."""
    records = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append((n, json.loads(line)))
        except json.JSONDecodeError as error:
            raise TraceFormatError(f"line {n}: not valid JSON ({error.msg})") from None
    if not records:
        return []
    first = records[0][1]
    if isinstance(first, dict) and "format" in first:
        from ahasd.sim.traces import decoding as trace
        try:
            return trace.edc_events([record for _, record in records])
        except trace.TraceError as error:
            raise TraceFormatError(str(error)) from None
    return [_event(record, n) for n, record in records]


def read_events(path):
    """:func:`parse_events` of a file."""
    with open(path, encoding="utf-8") as f:
        return parse_events(f)
