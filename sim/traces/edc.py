"""EDC event traces: the JSON lines read by ``ahasd edc replay`` (``docs/trace-format.md``).

Two formats are accepted:

* EDC event lines, one event per line::

      {"op": "draft", "entropy": 3.2}      # batch mean entropy in nats: a number >= 0
      {"op": "verify", "full": true}       # the oldest unverified batch: fully accepted or not

* a speculative-decoding trace (``{"format": "ahasd-trace", ...}`` header), whose draft and verify
  events are taken in the order they happened (:func:`ahasd.sim.traces.decoding.edc_events`).

The line rules of :mod:`ahasd.sim.traces.lines` apply; anything else raises
:class:`ahasd.sim.traces.errors.TraceError` naming the line. The readers stream: memory does not
grow with the length of the trace.
"""

from ahasd.sim.traces.errors import TraceError
from ahasd.sim.traces.lines import check_bool, check_real, json_lines, names, open_binary, show

__all__ = ["TraceError", "iter_events", "parse_events", "read_events", "event_of"]

_FIELDS = {"draft": ("entropy",), "verify": ("full",)}


def event_of(record, n):
    """The event ``("draft", nats)`` or ``("verify", full)`` of one parsed line ``n``."""
    if not isinstance(record, dict):
        raise TraceError(n, f"expected a JSON object, got {type(record).__name__}")
    op = record.get("op")
    if not isinstance(op, str) or op not in _FIELDS:
        raise TraceError(n, f"\"op\" must be \"draft\" or \"verify\", not {show(op)}")
    expected = {"op", *_FIELDS[op]}
    missing = expected - record.keys()
    if missing:
        raise TraceError(n, f"{op} event lacks {', '.join(sorted(missing))}")
    extra = record.keys() - expected
    if extra:
        raise TraceError(n, f"unknown field(s) {names(extra)} in a {op} event")
    if op == "draft":
        return ("draft", check_real(n, "entropy", record["entropy"], 0.0))
    return ("verify", check_bool(n, "full", record["full"]))


def iter_events(source):
    """Yield the events of ``source`` (a file object or an iterable of lines), checking each."""
    lines = json_lines(source)
    for n, first in lines:
        if isinstance(first, dict) and "format" in first:
            from ahasd.sim.traces.decoding import events_of_records
            yield from events_of_records(_chain((n, first), lines))
            return
        yield event_of(first, n)
        for m, record in lines:
            yield event_of(record, m)
        return


def _chain(first, rest):
    yield first
    yield from rest


def parse_events(lines):
    """All events of an iterable of lines, as a list (small traces; prefer :func:`iter_events`)."""
    return list(iter_events(lines))


def read_events(path):
    """All events of a file (``-``: standard input), as a list."""
    with open_binary(path) as f:
        return list(iter_events(f))
