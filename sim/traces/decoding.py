"""Speculative-decoding traces: a versioned JSON-lines format (``docs/trace-format.md``).

Line 1 is a header ``{"format": "ahasd-trace", "version": 1, ...}``; every further line is one
event, in the order the events happened in the run: ``draft`` (a batch finished drafting),
``verify`` (the oldest unverified batch was verified), ``squash`` (a batch was discarded because
an earlier batch was rejected) and a final ``end``. The reader (:func:`iter_records`, and
:func:`read` / :func:`validate` on top of it) streams: it keeps only the unverified batches (at
most the header's ``max_unverified``), so memory does not grow with the trace. It raises
:class:`ahasd.sim.traces.errors.TraceError` naming the line for an unknown format or version, a
missing, unknown, mistyped or out-of-range field, events out of order, or a missing ``end``.
"""

import hashlib
import math
import os
from array import array
from collections import deque

import numpy as np

from ahasd.sim.traces.errors import TraceError
from ahasd.sim.traces.lines import (
    check_bool,
    check_int,
    check_real,
    dumps,
    json_lines,
    names,
    open_binary,
    show,
)
from ahasd.spec.files import atomic_output
from ahasd.spec.params import check_positive

__all__ = ["FORMAT", "VERSION", "MAX_UNVERIFIED", "MAX_VOCAB", "POLICIES", "EDC_VARIANTS",
           "TraceError", "header",
           "batch_entropy", "iter_records", "check_records", "validate", "read", "write",
           "edc_events", "events_of_records", "verified_batches", "stats"]

FORMAT = "ahasd-trace"
VERSION = 1
#: Most batches drafted and not yet verified (``max_unverified``) a trace may declare.
MAX_UNVERIFIED = 1024
#: Largest vocabulary a trace may declare.
MAX_VOCAB = 1 << 31
_ID_MAX = (1 << 63) - 1
_COUNT_MAX = (1 << 63) - 1

#: The drafting policies a header may name (``ahasd.sim.decoding.policies``).
POLICIES = ("fixed", "specdecpp", "svip", "adaedl", "banditspec")
#: The header's optional ``edc``: the EDC variant that gated look-ahead drafting, or ``off``.
EDC_VARIANTS = ("committed", "anchor", "off")

_HEADER_REQUIRED = ("format", "version", "vocab_size", "policy", "policy_params", "greedy",
                    "tokens", "prompt", "draft_cost", "verify_cost", "max_unverified")
_HEADER_OPTIONAL = ("pair", "edc", "seed")
_EVENT_FIELDS = {
    "draft": ("batch", "t", "tokens", "entropy", "q", "edc"),
    "verify": ("batch", "t", "kv_len", "p", "accepted", "full", "next_token"),
    "squash": ("batch", "t", "drafted"),
    "end": ("t", "output"),
}


def header(**fields):
    """The header record with the format name and version first."""
    return {"format": FORMAT, "version": VERSION, **fields}


def batch_entropy(entropies):
    """A batch's mean draft entropy (nats), the value EDC sees: the plain mean of the tokens'.

    Finite entropies too large to sum (a trace may hold any finite entropy) are averaged as
    ``sum(h / k)`` instead, so the mean stays finite and saturates in EDC."""
    total = sum(entropies)
    if math.isinf(total):
        return sum(h / len(entropies) for h in entropies)
    return total / len(entropies)


def _list(n, name, value, check, length=None):
    if not isinstance(value, list):
        raise TraceError(n, f"field {name!r} must be a list, not {type(value).__name__}")
    if length is not None and len(value) != length:
        raise TraceError(n, f"field {name!r} must hold {length} values (one per drafted token), "
                            f"not {len(value)}")
    for i, item in enumerate(value):
        check(n, f"{name}[{i}]", item)
    return value


class _Checker:
    """The state of one trace being checked line by line."""

    def __init__(self, n, head):
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            got = head.get("format") if isinstance(head, dict) else head
            raise TraceError(n, f"not an {FORMAT} header (format {show(got)})")
        if type(head.get("version")) is not int or head["version"] != VERSION:
            raise TraceError(n, f"unsupported {FORMAT} version {show(head.get('version'))} "
                                f"(this reader understands version {VERSION})")
        for name in _HEADER_REQUIRED:
            if name not in head:
                raise TraceError(n, f"missing field {name!r}")
        extra = head.keys() - {*_HEADER_REQUIRED, *_HEADER_OPTIONAL}
        if extra:
            raise TraceError(n, f"unknown field(s) {names(extra)} in the header")
        self.vocab = check_int(n, "vocab_size", head["vocab_size"], 1, MAX_VOCAB)
        for name in ("policy",) + tuple(k for k in ("pair", "edc") if k in head):
            if not isinstance(head[name], str):
                raise TraceError(n, f"field {name!r} must be a string, not {show(head[name])}")
        for name, allowed in (("policy", POLICIES), ("edc", EDC_VARIANTS)):
            if name in head and head[name] not in allowed:
                raise TraceError(n, f"{name} must be one of {', '.join(allowed)}, not "
                                    f"{show(head[name])}")
        #: None: the header does not say whether EDC gated the drafts.
        self.edc_on = head["edc"] != "off" if "edc" in head else None
        if not isinstance(head["policy_params"], dict):
            raise TraceError(n, f"field 'policy_params' must be an object, not "
                                f"{show(head['policy_params'])}")
        check_bool(n, "greedy", head["greedy"])
        self.tokens = check_int(n, "tokens", head["tokens"], 1, _COUNT_MAX)
        self.prompt_len = len(_list(n, "prompt", head["prompt"], self._token))
        for name in ("draft_cost", "verify_cost"):
            if check_real(n, name, head[name], 0.0) <= 0:
                raise TraceError(n, f"{name} must be a number > 0, not {show(head[name])}")
        self.max_unverified = check_int(n, "max_unverified", head["max_unverified"], 1,
                                        MAX_UNVERIFIED)
        if "seed" in head:
            check_int(n, "seed", head["seed"], 0, (1 << 64) - 1)
        # (batch id, k, draft record) of unverified batches
        self.pending: deque[tuple[int, int, dict]] = deque()
        self.last_id = -1           # highest batch id drafted or squashed while drafting
        self.t = 0.0
        self.ended = False
        self.line = n
        self.committed = 0          # tokens the verify events emitted so far
        # A digest of the first `tokens` emitted tokens (the end line's output must match it):
        # constant memory, however long the run.
        self.digest, self.digested = hashlib.blake2b(digest_size=16), 0
        self.complete = None        # (line, t) of the verify that emitted the last needed token
        self.rejection = None       # (batch, line, t) of a rejection only squashes followed yet

    def _token(self, n, name, value):
        check_int(n, name, value, 0, self.vocab - 1)

    def check(self, n, rec):
        self.line = n
        if self.ended:
            raise TraceError(n, "event after the end event")
        if not isinstance(rec, dict) or not isinstance(rec.get("event"), str) \
                or rec["event"] not in _EVENT_FIELDS:
            got = rec.get("event") if isinstance(rec, dict) else rec
            raise TraceError(n, f"unknown event {show(got)} "
                                f"(expected one of {', '.join(_EVENT_FIELDS)})")
        kind = rec["event"]
        fields = _EVENT_FIELDS[kind]
        for name in fields:
            if name not in rec:
                raise TraceError(n, f"missing field {name!r}")
        extra = rec.keys() - {"event", *fields}
        if extra:
            raise TraceError(n, f"unknown field(s) {names(extra)} in a "
                                f"{kind} event")
        t = check_real(n, "t", rec["t"], 0.0)
        if t < self.t:
            raise TraceError(n, f"time t = {t:g} runs backwards (the previous event was at "
                                f"{self.t:g})")
        self.t = t
        if kind != "squash" and self.rejection is not None:
            if self.pending:
                b, line = self.rejection[:2]
                raise TraceError(n, f"batch {self.pending[0][0]} is neither verified nor "
                                    f"squashed after the rejection of batch {b} (line {line}): "
                                    f"a rejection squashes every later batch")
            self.rejection = None
        if kind in ("draft", "verify") and self.complete is not None:
            raise TraceError(n, f"{kind} event after the output was complete (the verify at "
                                f"line {self.complete[0]} emitted the last of the "
                                f"{self.tokens} tokens; the end event follows it)")
        getattr(self, "_" + kind)(n, rec)

    def _draft(self, n, rec):
        b = check_int(n, "batch", rec["batch"], 0, _ID_MAX)
        if b <= self.last_id:
            raise TraceError(n, f"batch {b} drafted out of order (batch ids increase in drafting "
                                f"order; the last was {self.last_id})")
        tokens = _list(n, "tokens", rec["tokens"], self._token)
        k = len(tokens)
        if k == 0:
            raise TraceError(n, "a draft needs k >= 1 tokens")
        _list(n, "entropy", rec["entropy"], lambda m, name, v: check_real(m, name, v, 0.0), k)
        _list(n, "q", rec["q"], lambda m, name, v: check_real(m, name, v, 0.0, 1.0), k)
        edc = rec["edc"]
        if edc is not None:
            if not isinstance(edc, dict) or set(edc) != {"cont", "index"}:
                raise TraceError(n, f"field 'edc' must be null or {{\"cont\": bool, \"index\": "
                                    f"int}}, not {show(edc)}")
            check_bool(n, "edc.cont", edc["cont"])
            check_int(n, "edc.index", edc["index"], 0, _ID_MAX)
        if self.edc_on is not None and (edc is not None) != self.edc_on:
            raise TraceError(n, "field 'edc' must be null: the header says edc off" if edc
                             else "field 'edc' must be EDC's decision {\"cont\": bool, "
                                  "\"index\": int}: the header names an EDC variant, not null")
        if len(self.pending) == self.max_unverified:
            raise TraceError(n, f"more than max_unverified = {self.max_unverified} batches "
                                f"drafted and not verified")
        self.last_id = b
        self.pending.append((b, k, rec))

    def _verify(self, n, rec):
        b = check_int(n, "batch", rec["batch"], 0, _ID_MAX)
        if not self.pending or self.pending[0][0] != b:
            oldest = self.pending[0][0] if self.pending else None
            raise TraceError(n, f"verify of batch {b}, which is not the oldest unverified drafted "
                                f"batch ({'none' if oldest is None else oldest})")
        k = self.pending[0][1]
        kv_len = check_int(n, "kv_len", rec["kv_len"], 0, _COUNT_MAX)
        if kv_len != self.prompt_len + self.committed:
            raise TraceError(n, f"kv_len must be {self.prompt_len + self.committed} (the "
                                f"{self.prompt_len} prompt tokens and the {self.committed} "
                                f"committed before batch {b}), not {kv_len}")
        _list(n, "p", rec["p"], lambda m, name, v: check_real(m, name, v, 0.0, 1.0), k)
        accepted = check_int(n, "accepted", rec["accepted"], 0, k)
        full = check_bool(n, "full", rec["full"])
        if full != (accepted == k):
            raise TraceError(n, f"verify of batch {b} is inconsistent with its {k} drafted "
                                f"tokens (accepted {accepted}, full {rec['full']})")
        following = rec["next_token"]
        if following is not None:
            self._token(n, "next_token", following)
        if not full and following is None:
            raise TraceError(n, f"next_token of batch {b} must be the token emitted after the "
                                f"rejection, not null")
        if full and len(self.pending) > 1 and following is not None:
            raise TraceError(n, f"next_token of batch {b} must be null: it was fully accepted "
                                f"with batch {self.pending[1][0]} drafted on top (whose first "
                                f"token is verified next), not {show(following)}")
        _, _, draft = self.pending.popleft()
        self._emit(draft["tokens"][:accepted] + ([] if following is None else [following]))
        if self.complete is None and self.committed >= self.tokens:
            self.complete = (n, self.t)
        if not full:
            self.rejection = (b, n, self.t)

    def _emit(self, tokens):
        self.committed += len(tokens)
        take = tokens[:max(0, self.tokens - self.digested)]
        if take:
            self.digest.update(array("q", take).tobytes())
            self.digested += len(take)

    def _squash(self, n, rec):
        b = check_int(n, "batch", rec["batch"], 0, _ID_MAX)
        if self.rejection is None:
            raise TraceError(n, f"squash of batch {b} without a rejection before it (squash "
                                f"events follow the verify that rejected an earlier batch)")
        if self.t != self.rejection[2]:
            raise TraceError(n, f"squash of batch {b} at t = {self.t:g}, not at the time of the "
                                f"rejection of batch {self.rejection[0]} (t = "
                                f"{self.rejection[2]:g})")
        if check_bool(n, "drafted", rec["drafted"]):
            for i, (pending_id, _, _) in enumerate(self.pending):
                if pending_id == b:
                    del self.pending[i]
                    return
            raise TraceError(n, f"squash of batch {b}, which is not unverified")
        if b <= self.last_id:
            raise TraceError(n, f"squash of batch {b} while drafting, but batch ids up to "
                                f"{self.last_id} were already used")
        self.last_id = b

    def _end(self, n, rec):
        output = _list(n, "output", rec["output"], self._token)
        if len(output) != self.tokens:
            raise TraceError(n, f"output holds {len(output)} tokens, the header asked for "
                                f"{self.tokens}")
        if self.complete is None:
            raise TraceError(n, f"the verify events emit {self.committed} tokens, fewer than "
                                f"the {self.tokens} of the output")
        digest = hashlib.blake2b(digest_size=16)
        for i in range(0, len(output), 1 << 16):      # a small buffer, however long the output
            digest.update(array("q", output[i:i + (1 << 16)]).tobytes())
        if digest.digest() != self.digest.digest():
            raise TraceError(n, "output is not the tokens the verify events emitted (each "
                                "batch's accepted prefix and next_token, in order)")
        if self.t != self.complete[1]:
            raise TraceError(n, f"end at t = {self.t:g}, not at t = {self.complete[1]:g} when "
                                f"the verify at line {self.complete[0]} emitted the last "
                                f"needed token")
        self.ended = True


def check_records(numbered):
    """Check ``(line_number, record)`` pairs (header first) as they stream by and yield
    ``(line_number, record, draft)``: ``draft`` is the verified batch's draft record for a verify
    event, else None. Raise :class:`TraceError`."""
    checker = None
    for n, rec in numbered:
        if checker is None:
            checker = _Checker(n, rec)
            yield n, rec, None
            continue
        draft = checker.pending[0][2] if (isinstance(rec, dict) and rec.get("event") == "verify"
                                          and checker.pending) else None
        checker.check(n, rec)
        yield n, rec, draft
    if checker is None:
        raise TraceError(1, "empty trace: no header line")
    if not checker.ended:
        raise TraceError(checker.line + 1, "trace has no end event (truncated?)")


def iter_records(source):
    """Yield the checked records of a file object or an iterable of lines."""
    for _, rec, _ in check_records(json_lines(source)):
        yield rec


def validate(records):
    """Check parsed records (header first, record ``i`` is line ``i + 1``); return them as a
    list."""
    records = list(records)
    for _ in check_records(enumerate(records, start=1)):
        pass
    return records


def read(path):
    """Parse and check a trace file (``-``: standard input); return its records."""
    with open_binary(path) as f:
        return list(iter_records(f))


def write(records, target):
    """Check and write records as strict JSON lines to ``target``: an open text file, or a path
    (written to a temporary name beside it and renamed at the end, so a failure leaves no
    truncated file)."""
    records = validate(records)
    if hasattr(target, "write"):
        for rec in records:
            target.write(dumps(rec) + "\n")
        return
    with atomic_output(target) as f:
        for rec in records:
            f.write(dumps(rec) + "\n")


def _numbered(records_or_path):
    """``(line, record, draft)`` triples of a checked trace given as records or a path."""
    if isinstance(records_or_path, (str, os.PathLike)):
        with open_binary(records_or_path) as f:
            yield from check_records(json_lines(f))
    else:
        yield from check_records(enumerate(records_or_path, start=1))


def events_of_records(numbered):
    """The EDC events of checked ``(line, record)`` pairs (see :func:`edc_events`)."""
    for _, rec, _ in check_records(numbered):
        event = rec.get("event")
        if event == "draft":
            yield ("draft", batch_entropy(rec["entropy"]))
        elif event == "verify":
            yield ("verify", rec["full"])


def edc_events(records):
    """The EDC event sequence of a run, in order: ``("draft", mean_entropy_nats)`` for each
    drafted batch and ``("verify", full)`` for each verification. ``records`` is a parsed trace or
    a path."""
    if isinstance(records, (str, os.PathLike)):
        with open_binary(records) as f:
            return list(events_of_records(json_lines(f)))
    return list(events_of_records(enumerate(records, start=1)))


def verified_batches(records):
    """Each verified batch as one dict: the draft event's fields plus the verify event's."""
    return [{**d, **r, "t_draft": d["t"], "t_verify": r["t"]}
            for _, r, d in _numbered(records) if d is not None]


class _Histogram:
    """Entropy histogram over ``[0, h_max]`` (values clipped), filled in chunks (exactly what one
    ``numpy.histogram`` call over all values gives: each value is binned on its own)."""

    def __init__(self, bins, h_max, chunk=1 << 16):
        self.bins, self.h_max, self.chunk = bins, h_max, chunk
        self.counts = np.zeros(bins, dtype=np.int64)
        self.edges = np.histogram([], bins=bins, range=(0, h_max))[1]
        self.buffer, self.total, self.n = [], 0.0, 0

    def add(self, values):
        self.buffer.extend(values)
        if len(self.buffer) >= self.chunk:
            self.flush()

    def flush(self):
        if self.buffer:
            values = np.asarray(self.buffer, dtype=float)
            self.counts += np.histogram(np.clip(values, 0, self.h_max), bins=self.bins,
                                        range=(0, self.h_max))[0]
            self.total += float(np.sum(values))
            self.n += len(values)
            self.buffer = []


def stats(records, *, bins=10, h_max=10.0):
    """Summary figures of a trace (a dict; see ``ahasd trace stats``), in one streaming pass.
    ``records`` is a parsed trace, a path, or an iterator of checked ``(line, record, draft)``
    triples (:func:`check_records`)."""
    check_positive("bins", bins, integer=True)
    hist = _Histogram(bins, h_max)
    head = end = None
    drafts = drafted_len = verified_tokens = accepted = full = n_verify = squashed = 0
    triples = records if hasattr(records, "__next__") else _numbered(records)
    for _, rec, draft in triples:
        event = rec.get("event") if head is not None else "header"
        if event == "header":
            head = rec
        elif event == "draft":
            drafts += 1
            drafted_len += len(rec["tokens"])
            hist.add(rec["entropy"])
        elif event == "verify":
            n_verify += 1
            verified_tokens += len(draft["tokens"])
            accepted += rec["accepted"]
            full += rec["full"]
        elif event == "squash":
            squashed += 1
        else:
            end = rec
    hist.flush()
    assert head is not None and end is not None   # checked records have both
    output = len(end["output"])
    return {
        "policy": head["policy"],
        "edc": head.get("edc", "off"),
        "output_tokens": output,
        "batches_drafted": drafts,
        "verifications": n_verify,
        "squashed": squashed,
        "acceptance_rate": accepted / verified_tokens if verified_tokens else 0.0,
        "accepted_per_verification": accepted / n_verify if n_verify else 0.0,
        "tokens_per_verification": output / n_verify if n_verify else 0.0,
        "full_accept_rate": full / n_verify if n_verify else 0.0,
        "mean_draft_length": drafted_len / drafts if drafts else 0.0,
        "mean_entropy": hist.total / hist.n if hist.n else 0.0,
        "entropy_histogram": {"edges": [float(e) for e in hist.edges],
                              "counts": [int(c) for c in hist.counts]},
        "time": end["t"],
    }
