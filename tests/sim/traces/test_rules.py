"""Every rule of docs/trace-format.md at its boundary: for each rule, the last valid value is
accepted and the first invalid one is refused with the documented message and line.

:data:`RULES` maps each documented rule to the test that checks it. The traces are written by
hand (a few lines each) so that every expectation can be read off the trace itself.
"""

import io
import json
import math
import sys

import pytest

from ahasd.sim.blocks.edc import EDC, entropy_to_fx
from ahasd.sim.blocks.tvc import TVCParams
from ahasd.sim.traces import decoding
from ahasd.sim.traces.edc import iter_events, read_events
from ahasd.sim.traces.errors import TraceError
from ahasd.sim.traces.lines import MAX_LINE_BYTES, json_lines
from ahasd.sim.traces.tvc import dump, iter_trace, read_trace
from ahasd.tb.trace_examples import TINY_HEADER, tiny_trace

#: docs/trace-format.md rule -> the test of this module that checks it at its boundary.
RULES = {
    # Rules for every format
    "every reader raises TraceError, message 'line N: ...', .line = N": "test_one_error_class",
    "lines split at \\n only; blank lines (spaces, tabs, \\r) skipped but counted":
        "test_lines_split_at_newline_only_and_blank_lines_count",
    "a line is at most 16 MiB": "test_line_length_limit",
    "each line is UTF-8, else 'not UTF-8 text (byte 0x.. at column C)'": "test_utf8",
    "a string may not hold a lone UTF-16 surrogate": "test_lone_surrogates",
    "NaN, Infinity, -Infinity refused": "test_non_finite_spellings",
    "a number that overflows a float refused": "test_float_overflow",
    "an integer of more than 20 digits refused": "test_integer_digits",
    "a duplicate key refused": "test_duplicate_keys",
    "one JSON value per non-blank line": "test_one_value_per_line",
    "types exact: bool not int, int refuses 1.0, string not a number": "test_exact_types",
    "numbers in range; message names field and value (long values cut)":
        "test_range_message_names_field_and_cuts_value",
    "unknown fields refused": "test_unknown_fields",
    "'-' names standard input for every reader": "test_standard_input",
    "entropy: finite >= 0 everywhere, large saturates at 65535": "test_entropy_one_rule",
    "writers emit strict JSON, refuse non-finite before writing": "test_writers_are_strict",
    # Decoding trace: header
    "header: format ahasd-trace": "test_header_format",
    "header: version 1 (an integer)": "test_header_version",
    "header: vocab_size 1..2^31": "test_header_vocab_size",
    "header: policy one of fixed, specdecpp, svip, adaedl, banditspec": "test_header_policy",
    "header: policy_params object, greedy bool": "test_header_policy_params_and_greedy",
    "header: tokens >= 1": "test_header_tokens",
    "header: prompt token ids in 0..V-1": "test_header_prompt",
    "header: draft_cost, verify_cost finite > 0": "test_header_costs",
    "header: max_unverified 1..1024": "test_header_max_unverified",
    "header: optional pair (str), edc (variant or off), seed (0..2^64-1)":
        "test_header_optional_fields",
    "header: required fields": "test_header_required_fields",
    # Decoding trace: events
    "unknown event; missing field": "test_unknown_event_and_missing_field",
    "draft: batch ids increase in drafting order (also over squashed-while-drafting)":
        "test_batch_ids_increase",
    "t: times never decrease": "test_time_never_decreases",
    "draft: k >= 1 tokens, token ids in 0..V-1": "test_draft_tokens",
    "draft: entropy k values >= 0": "test_draft_entropy",
    "draft: q k values in [0, 1]": "test_draft_q",
    "draft: edc object {cont, index} or null": "test_draft_edc_field",
    "draft: edc null exactly when the header says edc off": "test_draft_edc_matches_header",
    "at most max_unverified batches drafted and not verified": "test_max_unverified",
    "verify: of the oldest unverified batch": "test_verify_of_the_oldest",
    "verify: kv_len = prompt + committed tokens before the batch": "test_verify_kv_len",
    "verify: p k values in [0, 1]": "test_verify_p",
    "verify: accepted 0..k, full == (accepted == k)": "test_verify_accepted_and_full",
    "verify: next_token after a rejection, null after a full accept with a later batch":
        "test_verify_next_token",
    "squash drafted=true: an unverified drafted batch": "test_squash_drafted",
    "squash drafted=false: id newer than every drafted one": "test_squash_while_drafting",
    "squash: after a rejection, at the same t": "test_squash_follows_a_rejection",
    "a rejection squashes every later batch": "test_rejection_squashes_every_later_batch",
    "end: output exactly tokens ids; nothing follows; missing end at line after last":
        "test_end_event",
    "output = concatenation of accepted prefixes and next tokens, cut to tokens":
        "test_output_is_the_emitted_tokens",
    "end t = time the last needed token was emitted; no draft/verify after it":
        "test_end_when_the_output_is_complete",
    # EDC events
    "EDC: op draft (entropy number >= 0) or verify (full bool); empty file = zero events":
        "test_edc_events",
    # TVC transactions
    "TVC: every field an integer in 0..2^bits-1, bits from the TVC parameters":
        "test_tvc_field_ranges",
    "TVC: table nvct, pdct or pvct; op and fields": "test_tvc_ops_tables_and_fields",
}


def test_every_rule_has_its_test():
    assert all(callable(globals().get(name)) for name in RULES.values())


# -- helpers -------------------------------------------------------------------------------


def encode(records):
    """Bytes lines (with ``\\n``) of parsed records."""
    return [json.dumps(r).encode() + b"\n" for r in records]


def decode_lines(lines):
    return list(decoding.iter_records(lines))


def edc_lines(lines):
    return list(iter_events(lines))


def tvc_lines(lines, params=None):
    return list(iter_trace(lines, params))


def ok(reader, lines):
    """``lines`` (bytes lines, or records for the decoding reader) are accepted."""
    return reader(lines)


def refused(reader, lines, line, message):
    """``reader`` refuses ``lines`` at ``line`` with a message matching ``message``."""
    with pytest.raises(TraceError) as caught:
        reader(lines)
    assert caught.value.line == line, str(caught.value)
    assert str(caught.value).startswith(f"line {line}: ")
    assert caught.value.reason == str(caught.value)[len(f"line {line}: "):]
    import re
    assert re.search(message, caught.value.reason), str(caught.value)


def check(records):
    """The decoding reader on parsed records (record i is line i + 1)."""
    return decoding.validate(records)


HEADER = TINY_HEADER


def base():
    """:func:`ahasd.tb.trace_examples.tiny_trace`: a rejection, two squashes, a full accept."""
    return tiny_trace()


def lookahead():
    """Full accepts: batch 0 with batch 1 drafted on top (next_token null), then batch 1 with
    nothing on top (bonus 6)."""
    return [dict(HEADER, tokens=4),
            {"event": "draft", "batch": 0, "t": 2.0, "tokens": [3, 4], "entropy": [1.0, 1.0],
             "q": [0.5, 0.5], "edc": None},
            {"event": "draft", "batch": 1, "t": 3.0, "tokens": [5], "entropy": [1.0],
             "q": [0.5], "edc": None},
            {"event": "verify", "batch": 0, "t": 7.0, "kv_len": 2, "p": [0.9, 0.9],
             "accepted": 2, "full": True, "next_token": None},
            {"event": "verify", "batch": 1, "t": 12.0, "kv_len": 4, "p": [0.9],
             "accepted": 1, "full": True, "next_token": 6},
            {"event": "end", "t": 12.0, "output": [3, 4, 5, 6]}]


def changed(records, line, **fields):
    """A deep copy of ``records`` with ``fields`` set on line ``line``."""
    records = json.loads(json.dumps(records))
    records[line - 1].update(fields)
    return records


def header_only(head):
    """Check a header alone: accepted iff the reader gets to the missing end event."""
    with pytest.raises(TraceError) as caught:
        check([head])
    return caught.value


def header_ok(head):
    error = header_only(head)
    assert str(error) == "line 2: trace has no end event (truncated?)", str(error)


def header_refused(head, message):
    error = header_only(head)
    assert error.line == 1, str(error)
    import re
    assert re.search(message, error.reason), str(error)


def test_the_base_traces_are_valid():
    assert check(base()) == base() and check(lookahead()) == lookahead()
    assert decode_lines(encode(base())) == base()


# -- rules for every format ----------------------------------------------------------------

READERS = {"decoding": decode_lines, "edc": edc_lines, "tvc": tvc_lines}


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS)
def test_one_error_class(reader):
    for lines in ([b"\n", b"\n", b"{nope\n"], [b"\x00\n"], [b"[]\n"]):
        with pytest.raises(TraceError) as caught:
            reader(lines)
        assert isinstance(caught.value, ValueError)
        assert str(caught.value).startswith(f"line {caught.value.line}: ")
    refused(reader, [b"\n", b" \t\r\n", b"{nope\n"], 3, "not JSON")


def test_lines_split_at_newline_only_and_blank_lines_count():
    draft = b'{"op":"draft","entropy":1}'
    # Blank: spaces, tabs and \r only; skipped, but counted.
    assert edc_lines([b" \t\r\n", draft + b"\r\n", b"\n", draft]) == [("draft", 1.0)] * 2
    refused(edc_lines, [b" \t\r\n", b"\n", b'{"op":"draft","entropy":-1}\n'], 3, "entropy")
    # A vertical tab or form feed is not blank; NEL, \r, U+2028 do not end a line.
    refused(edc_lines, [draft + b"\n", b"\x0b\n"], 2, "not JSON")
    refused(edc_lines, [draft + b"\n", b"\x0c\n"], 2, "not JSON")
    for separator in (b"\r", b"\xc2\x85", b"\xe2\x80\xa8", b"\x0b"):
        source = io.BytesIO(draft + separator + draft + b"\n" + draft + b"\n")
        refused(edc_lines, source, 1, r"not JSON \(Extra data")
    source = io.BytesIO(b"\n\n" + draft + b"\n" + b'{"op":"verify","full":1}' + b"\n")
    refused(edc_lines, source, 4, "full must be true or false, not 1")


def _padded(size):
    """An EDC draft line of exactly ``size`` bytes (JSON whitespace after the object)."""
    line = b'{"op":"draft","entropy":1}'
    return line + b" " * (size - len(line))


@pytest.mark.parametrize("newline", [b"\n", b""], ids=["with newline", "at end of file"])
def test_line_length_limit(newline):
    # MAX_LINE_BYTES is the limit on a line's bytes, not counting its terminating \n; it
    # does not matter whether the line ends the file.
    longest, too_long = _padded(MAX_LINE_BYTES), _padded(MAX_LINE_BYTES + 1)
    assert MAX_LINE_BYTES == 16 << 20
    draft = b'{"op":"draft","entropy":1}\n'
    assert edc_lines(io.BytesIO(draft + longest + newline)) == [("draft", 1.0)] * 2
    refused(edc_lines, io.BytesIO(draft + too_long + newline), 2,
            f"line longer than {MAX_LINE_BYTES} bytes")
    assert edc_lines([draft, longest + newline]) == [("draft", 1.0)] * 2
    refused(edc_lines, [draft, too_long + newline], 2, "line longer than")
    # A text source counts bytes too (a 2-byte character is 2 bytes of the line).
    rest = [line.decode() for line in encode(base())[1:]]
    head = json.dumps(dict(HEADER, pair="X"))
    pad = MAX_LINE_BYTES - len(head.encode()) + 1            # bytes the pair must hold
    text = head.replace('"X"', '"' + "x" * (pad % 2) + "é" * (pad // 2) + '"')
    assert len(text.encode()) == MAX_LINE_BYTES and len(text) < MAX_LINE_BYTES * 0.6
    assert decode_lines([text + newline.decode()] + rest)[0]["pair"].endswith("é")
    refused(decode_lines, [text.replace("é", "éx", 1) + newline.decode()] + rest, 1,
            "line longer than")


def test_utf8():
    # The largest code point (U+10FFFF, F4 8F BF BF) is UTF-8; F4 90 80 80 is past it.
    head = json.dumps(dict(HEADER, pair="X")).encode()
    at = head.index(b'"X"') + 1
    rest = [line for line in encode(base())[1:]]
    last = head[:at] + b"\xf4\x8f\xbf\xbf" + head[at + 1:] + b"\n"
    assert decode_lines([last] + rest)[0]["pair"] == "\U0010ffff"
    first_bad = head[:at] + b"\xf4\x90\x80\x80" + head[at + 1:] + b"\n"
    refused(decode_lines, [first_bad] + rest, 1,
            rf"^not UTF-8 text \(byte 0xf4 at column {at + 1}\)$")
    # Overlong encodings and UTF-8-encoded surrogates are not UTF-8.
    for bad in (b"\xc0\xaf", b"\xed\xa0\x80"):
        line = head[:at] + bad + head[at + 1:] + b"\n"
        refused(decode_lines, [line] + rest, 1, rf"byte 0x{bad[0]:02x} at column {at + 1}")


@pytest.mark.parametrize("escape, valid", [
    ("\\ud7ff", True), ("\\ud800", False), ("\\udbff", False), ("\\udc00", False),
    ("\\udfff", False), ("\\ue000", True), ("\\ud83d\\ude00", True), ("\\ude00\\ud83d", False)])
def test_lone_surrogates(escape, valid):
    head = json.dumps(dict(HEADER, pair="X")).replace('"X"', f'"{escape}"').encode() + b"\n"
    lines = [head] + encode(base())[1:]
    if valid:
        assert decode_lines(lines)[0]["pair"] == json.loads(f'"{escape}"')
    else:
        refused(decode_lines, lines, 1, "a string holds a lone UTF-16 surrogate")
    key = b'{"op":"draft","entropy":1,"' + escape.encode() + b'":1}\n'
    refused(edc_lines, [key], 1, "unknown field" if valid else "lone UTF-16 surrogate")


@pytest.mark.parametrize("spelling", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_spellings(spelling):
    for reader, line in ((edc_lines, '{"op":"draft","entropy":%s}'),
                         (tvc_lines, '{"op":"config","freq_ratio":%s}')):
        refused(reader, [(line % spelling).encode()], 1, f"^{spelling} is not a JSON number$")


def test_float_overflow():
    largest, first_inf = "1.7976931348623157e308", "1.7976931348623159e308"
    assert edc_lines([f'{{"op":"draft","entropy":{largest}}}'.encode()]) == \
        [("draft", sys.float_info.max)]
    for number in (first_inf, "-" + first_inf, "1e400"):
        refused(edc_lines, [f'{{"op":"draft","entropy":{number}}}'.encode()], 1,
                "is out of the range of a float")


def test_integer_digits():
    # 20 digits parse (the field rules then judge the value); 21 do not.
    for sign in ("", "-"):
        twenty, twenty_one = sign + "9" * 20, sign + "9" * 21
        head = json.dumps(dict(HEADER, policy_params={"x": 0})).replace(
            '"x": 0', f'"x": {twenty}')
        assert decode_lines([head.encode()] + encode(base())[1:])[0]["policy_params"] == \
            {"x": int(twenty)}
        refused(decode_lines, [head.replace(twenty, twenty_one).encode()], 1,
                "^an integer of 21 digits is out of range \\(at most 20 digits\\)$")
    refused(tvc_lines, [b'{"op":"config","freq_ratio":' + b"1" * 20 + b"}"], 1,
            "freq_ratio must be an integer in 0..65535")


def test_duplicate_keys():
    assert edc_lines([b'{"op":"verify","full":true}']) == [("verify", True)]
    refused(edc_lines, [b'{"op":"verify","full":true,"full":true}'], 1,
            "^duplicate key 'full'$")
    refused(edc_lines, [b'{"op":"verify","full":true,"\\u0066ull":true}'], 1,
            "duplicate key 'full'")
    head = json.dumps(dict(HEADER, policy_params={"a": 1, "b": 2})).replace('"b"', '"a"')
    refused(decode_lines, [head.encode()], 1, "duplicate key 'a'")


def test_one_value_per_line():
    line = b'{"op":"verify","full":true}'
    assert edc_lines([line + b" \t\r\n"]) == [("verify", True)]
    refused(edc_lines, [line + b" " + line], 1, "not JSON")
    refused(edc_lines, [line + b"0"], 1, "not JSON")


@pytest.mark.parametrize("value", ["true", "1.0", '"1"', "1e0", "null", "[1]"])
def test_exact_types(value):
    # Integer fields: 1 is accepted, a bool, a float spelling or a string is not.
    assert tvc_lines([b'{"op":"config","freq_ratio":1}']) == [{"op": "config",
                                                               "freq_ratio": 1}]
    refused(tvc_lines, [f'{{"op":"config","freq_ratio":{value}}}'.encode()], 1,
            r"^freq_ratio must be an integer in 0\.\.65535, not ")
    records = changed(base(), 4, accepted=json.loads(value))
    refused(check, records, 4, r"^accepted must be an integer in 0\.\.2, not ")
    # Number fields take integers and floats, not bools or strings.
    assert edc_lines([b'{"op":"draft","entropy":1}']) == [("draft", 1.0)]
    if value not in ("1.0", "1e0"):
        refused(edc_lines, [f'{{"op":"draft","entropy":{value}}}'.encode()], 1,
                r"^entropy must be a number >= 0, not ")
        refused(check, changed(base(), 2, t=json.loads(value)), 2, r"^t must be a number >= 0")
    # Bool fields take only true and false.
    if value != "true":
        refused(edc_lines, [f'{{"op":"verify","full":{value}}}'.encode()], 1,
                r"^full must be true or false, not ")


def test_range_message_names_field_and_cuts_value():
    refused(tvc_lines, [b'{"op":"record","table":"nvct","cycles":1,"length":65536}'], 1,
            r"^length must be an integer in 0\.\.65535, not 65536$")
    long = "x" * 10_000
    for reader, line in ((tvc_lines, {"op": "record", "table": "nvct", "cycles": long,
                                      "length": 0}),
                         (edc_lines, {"op": "draft", "entropy": long})):
        with pytest.raises(TraceError) as caught:
            reader([json.dumps(line).encode()])
        assert ("cycles" if reader is tvc_lines else "entropy") in str(caught.value)
        assert "'xxx" in str(caught.value) and str(caught.value).endswith("...")
        assert len(str(caught.value)) < 200


def test_unknown_fields():
    refused(edc_lines, [b'{"op":"draft","entropy":1,"x":0}'], 1,
            "^unknown field\\(s\\) x in a draft event$")
    refused(edc_lines, [b'{"op":"verify","full":true,"entropy":1}'], 1,
            "unknown field\\(s\\) entropy in a verify event")
    refused(tvc_lines, [b'{"op":"config","freq_ratio":1,"table":"nvct"}'], 1,
            "^config: unknown table$")
    header_refused(dict(HEADER, colour="blue"), "^unknown field\\(s\\) colour in the header$")
    for line in range(2, 10):
        kind = base()[line - 1]["event"]
        refused(check, changed(base(), line, extra=1), line,
                f"^unknown field\\(s\\) extra in a {kind} event$")
    refused(check, changed(base(), 3, edc={"cont": True, "index": 7, "x": 1}), 3,
            "field 'edc' must be null or")


def test_standard_input(monkeypatch, tmp_path):
    def stdin(data):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    stdin(b"".join(encode(base())))
    assert decoding.read("-") == base()
    stdin(b'{"op":"verify","full":false}\n')
    assert read_events("-") == [("verify", False)]
    stdin(b'{"op":"config","freq_ratio":3}\n')
    assert read_trace("-") == [{"op": "config", "freq_ratio": 3}]
    stdin(b'\n{"op":"config","freq_ratio":-3}\n')
    refused(read_trace, "-", 2, "freq_ratio must be an integer")


def test_entropy_one_rule():
    tiny_negative, huge = -5e-324, 1e308
    # EDC events, the decoding trace's per-token entropy and EDC.draft: 0 and a huge value
    # pass, the smallest negative number does not.
    assert edc_lines([b'{"op":"draft","entropy":0}', b'{"op":"draft","entropy":1e308}']) == \
        [("draft", 0.0), ("draft", huge)]
    refused(edc_lines, [f'{{"op":"draft","entropy":{tiny_negative!r}}}'.encode()], 1,
            "^entropy must be a number >= 0, not -5e-324$")
    assert check(changed(base(), 2, entropy=[0.0, huge]))
    refused(check, changed(base(), 2, entropy=[0.0, tiny_negative]), 2,
            r"^entropy\[1\] must be a number >= 0, not -5e-324$")
    EDC("committed").draft(0.0)
    with pytest.raises(ValueError, match="entropy_nats"):
        EDC("committed").draft(tiny_negative)
    # A large entropy saturates at the top of UQ4.12, as the hardware input does.
    assert entropy_to_fx(huge) == entropy_to_fx(16.0) == 65535
    assert entropy_to_fx(65535 / 4096) == 65535 and entropy_to_fx(65534 / 4096) == 65534
    edc = EDC("committed")
    assert edc.draft(huge) == EDC("committed").draft_fx(65535)


def test_writers_are_strict(tmp_path):
    records = changed(base(), 2, q=[0.5, math.nan])
    path = tmp_path / "t.jsonl"
    with pytest.raises(TraceError, match=r"line 2: q\[1\] must be a number"):
        decoding.write(records, path)
    assert list(tmp_path.iterdir()) == []              # nothing written, no temporary left
    out = io.StringIO()
    with pytest.raises(TraceError):
        decoding.write(records, out)
    assert out.getvalue() == ""
    with pytest.raises(ValueError, match="not JSON compliant"):
        dump([{"op": "config", "freq_ratio": 1}, {"op": "config", "freq_ratio": math.inf}])
    decoding.write(base(), path)
    assert [json.loads(line) for line in path.read_text().splitlines()] == base()
    assert "NaN" not in path.read_text() and list(tmp_path.iterdir()) == [path]


# -- decoding trace: header -----------------------------------------------------------------


def test_header_format():
    header_ok(dict(HEADER))
    for bad in ("ahasd-trace2", "Ahasd-trace", None):
        header_refused(dict(HEADER, format=bad), r"^not an ahasd-trace header \(format ")
    refused(check, [[1]], 1, "not an ahasd-trace header")


def test_header_version():
    header_ok(dict(HEADER, version=1))
    for bad in (0, 2, 1.0, True, "1"):
        header_refused(dict(HEADER, version=bad),
                       r"^unsupported ahasd-trace version .* \(this reader understands version "
                       r"1\)$")


def test_header_vocab_size():
    for good in (1, 2**31):
        header_ok(dict(HEADER, vocab_size=good, prompt=[]))
    for bad in (0, 2**31 + 1, True, 2.0):
        header_refused(dict(HEADER, vocab_size=bad),
                       r"^vocab_size must be an integer in 1\.\.2147483648, not ")


def test_header_policy():
    from ahasd.sim.decoding import policies
    names = {cls.name for cls in vars(policies).values()
             if isinstance(cls, type) and issubclass(cls, policies.DraftPolicy)
             and cls is not policies.DraftPolicy}
    assert set(decoding.POLICIES) == names == {"fixed", "specdecpp", "svip", "adaedl",
                                                "banditspec"}
    for good in decoding.POLICIES:
        header_ok(dict(HEADER, policy=good))
    for bad in ("Fixed", "base", "", "fixed "):
        header_refused(dict(HEADER, policy=bad),
                       "^policy must be one of fixed, specdecpp, svip, adaedl, banditspec, not ")
    header_refused(dict(HEADER, policy=1), "^field 'policy' must be a string, not 1$")


def test_header_policy_params_and_greedy():
    header_ok(dict(HEADER, policy_params={"min_len": 1, "h": 0.5}))
    header_refused(dict(HEADER, policy_params=[]), "^field 'policy_params' must be an object")
    header_ok(dict(HEADER, greedy=False))
    header_refused(dict(HEADER, greedy=0), "^greedy must be true or false, not 0$")


def test_header_tokens():
    header_ok(dict(HEADER, tokens=1))
    header_refused(dict(HEADER, tokens=0), r"^tokens must be an integer in 1\.\.")


def test_header_prompt():
    header_ok(dict(HEADER, prompt=[0, 9]))
    header_refused(dict(HEADER, prompt=[0, 10]), r"^prompt\[1\] must be an integer in 0\.\.9, "
                                                 r"not 10$")
    header_refused(dict(HEADER, prompt=[-1]), r"^prompt\[0\] must be an integer in 0\.\.9")
    header_refused(dict(HEADER, prompt=5), "^field 'prompt' must be a list, not int$")


@pytest.mark.parametrize("name", ["draft_cost", "verify_cost"])
def test_header_costs(name):
    header_ok(dict(HEADER, **{name: 5e-324}))
    header_ok(dict(HEADER, **{name: 1}))
    header_refused(dict(HEADER, **{name: 0.0}), f"^{name} must be a number > 0, not 0.0$")
    header_refused(dict(HEADER, **{name: -5e-324}), f"^{name} must be a number >= 0")
    header_refused(dict(HEADER, **{name: True}), f"^{name} must be a number >= 0, not True$")


def test_header_max_unverified():
    for good in (1, 1024):
        header_ok(dict(HEADER, max_unverified=good))
    for bad in (0, 1025):
        header_refused(dict(HEADER, max_unverified=bad),
                       rf"^max_unverified must be an integer in 1\.\.1024, not {bad}$")


def test_header_optional_fields():
    header_ok(dict(HEADER, pair="ngram3-5", seed=0))
    header_ok(dict(HEADER, seed=2**64 - 1))
    for bad in (-1, 2**64):
        header_refused(dict(HEADER, seed=bad), r"^seed must be an integer in 0\.\.")
    header_refused(dict(HEADER, pair=3), "^field 'pair' must be a string, not 3$")
    for good in ("committed", "anchor", "off"):
        header_ok(dict(HEADER, edc=good))
    for bad in ("on", "Committed", ""):
        header_refused(dict(HEADER, edc=bad), "^edc must be one of committed, anchor, off, not ")
    header_refused(dict(HEADER, edc=None), "^field 'edc' must be a string, not None$")


@pytest.mark.parametrize("name", ["vocab_size", "policy", "policy_params", "greedy", "tokens",
                                  "prompt", "draft_cost", "verify_cost", "max_unverified"])
def test_header_required_fields(name):
    head = dict(HEADER)
    del head[name]
    header_refused(head, f"^missing field '{name}'$")


# -- decoding trace: events ------------------------------------------------------------------


def test_unknown_event_and_missing_field():
    refused(check, changed(base(), 2, event="drafted"), 2,
            r"^unknown event 'drafted' \(expected one of draft, verify, squash, end\)$")
    refused(check, base()[:1] + [[1]], 2, "^unknown event ")
    for line in range(2, 10):
        records = base()
        name = next(k for k in records[line - 1] if k != "event")
        del records[line - 1][name]
        refused(check, records, line, f"^missing field '{name}'$")


def test_batch_ids_increase():
    # Batch 3 follows batch 2, squashed while drafting: 3 is the next id, 2 is not.
    check(changed(base(), 7, batch=3))
    check(changed(changed(base(), 7, batch=10), 8, batch=10))     # ids may skip
    refused(check, changed(base(), 7, batch=2), 7,
            r"^batch 2 drafted out of order \(batch ids increase in drafting order; the last "
            r"was 2\)$")
    refused(check, changed(base(), 3, batch=0), 3, "^batch 0 drafted out of order")


def test_time_never_decreases():
    check(changed(base(), 7, t=7.0))                      # equal times: fine
    refused(check, changed(base(), 7, t=math.nextafter(7.0, 0)), 7,
            r"^time t = 7 runs backwards \(the previous event was at 7\)$")
    refused(check, changed(base(), 2, t=-5e-324), 2, "^t must be a number >= 0")


def test_draft_tokens():
    refused(check, changed(base(), 2, tokens=[]), 2, "^a draft needs k >= 1 tokens$")
    check(changed(base(), 2, tokens=[3, 9], entropy=[1.0, 1.0]))
    refused(check, changed(base(), 2, tokens=[3, 10]), 2,
            r"^tokens\[1\] must be an integer in 0\.\.9, not 10$")


def test_draft_entropy():
    for k in (1, 3):
        refused(check, changed(base(), 2, entropy=[1.0] * k), 2,
                rf"^field 'entropy' must hold 2 values \(one per drafted token\), not {k}$")
    check(changed(base(), 2, entropy=[0.0, 0.0]))


def test_draft_q():
    check(changed(base(), 2, q=[0.0, 1.0]))
    refused(check, changed(base(), 2, q=[0.0, math.nextafter(1.0, 2)]), 2,
            r"^q\[1\] must be a number in \[0, 1\], not 1.0000000000000002$")
    refused(check, changed(base(), 2, q=[-5e-324, 1.0]), 2, r"^q\[0\] must be a number in")
    refused(check, changed(base(), 2, q=[0.5]), 2, "^field 'q' must hold 2 values")


def test_draft_edc_field():
    check(changed(base(), 3, edc={"cont": False, "index": 0}))
    for bad in ({"cont": True}, [], 1, {"cont": True, "index": 1, "x": 0}):
        refused(check, changed(base(), 3, edc=bad), 3, "^field 'edc' must be null or ")
    refused(check, changed(base(), 3, edc={"cont": 1, "index": 0}), 3,
            "^edc.cont must be true or false, not 1$")
    refused(check, changed(base(), 3, edc={"cont": True, "index": -1}), 3,
            r"^edc.index must be an integer in 0\.\.")


def test_draft_edc_matches_header():
    off = changed(base(), 3, edc=None)
    check(changed(off, 1, edc="off"))
    refused(check, changed(base(), 1, edc="off"), 3,
            "^field 'edc' must be null: the header says edc off$")
    on = changed(changed(base(), 2, edc={"cont": True, "index": 1}), 7,
                 edc={"cont": False, "index": 2})
    check(changed(on, 1, edc="committed"))
    refused(check, changed(base(), 1, edc="anchor"), 2,
            "^field 'edc' must be EDC's decision .* the header names an EDC variant, not null$")


def test_max_unverified():
    check(changed(base(), 1, max_unverified=2))           # two drafted, unverified: the most
    refused(check, changed(base(), 1, max_unverified=1), 3,
            "^more than max_unverified = 1 batches drafted and not verified$")


def test_verify_of_the_oldest():
    refused(check, changed(base(), 4, batch=1), 4,
            r"^verify of batch 1, which is not the oldest unverified drafted batch \(0\)$")
    records = base()
    del records[6]                                       # batch 3 never drafted
    refused(check, records, 7, r"^verify of batch 3, which is not the oldest unverified drafted "
                               r"batch \(none\)$")


def test_verify_kv_len():
    # Batch 3 is verified after the 2 prompt tokens and the 2 tokens the rejection of batch 0
    # committed (its accepted token 3 and the residual 6).
    for kv_len in (3, 5):
        refused(check, changed(base(), 8, kv_len=kv_len), 8,
                rf"^kv_len must be 4 \(the 2 prompt tokens and the 2 committed before batch 3\)"
                rf", not {kv_len}$")
    refused(check, changed(base(), 4, kv_len=3), 4, "^kv_len must be 2 ")
    refused(check, changed(lookahead(), 5, kv_len=3), 5, "^kv_len must be 4 ")


def test_verify_p():
    check(changed(base(), 4, p=[0.0, 1.0]))
    refused(check, changed(base(), 4, p=[0.0, math.nextafter(1.0, 2)]), 4,
            r"^p\[1\] must be a number in \[0, 1\]")
    refused(check, changed(base(), 4, p=[0.5]), 4, "^field 'p' must hold 2 values")


def test_verify_accepted_and_full():
    check(changed(changed(changed(base(), 4, accepted=0, next_token=3), 8, kv_len=3), 9,
                  output=[3, 7, 8]))
    check(changed(base(), 8, accepted=1, full=True))
    refused(check, changed(base(), 8, accepted=2), 8,
            r"^accepted must be an integer in 0\.\.1, not 2$")
    refused(check, changed(base(), 8, accepted=0), 8,
            r"^verify of batch 3 is inconsistent with its 1 drafted tokens \(accepted 0, full "
            r"True\)$")
    refused(check, changed(base(), 4, full=True), 4, "^verify of batch 0 is inconsistent")


def test_verify_next_token():
    # After a rejection: the residual token, never null.
    refused(check, changed(base(), 4, next_token=None), 4,
            "^next_token of batch 0 must be the token emitted after the rejection, not null$")
    refused(check, changed(base(), 4, next_token=10), 4,
            r"^next_token must be an integer in 0\.\.9, not 10$")
    # A full accept with a later batch drafted on top: null.
    refused(check, changed(lookahead(), 4, next_token=9), 4,
            r"^next_token of batch 0 must be null: it was fully accepted with batch 1 drafted "
            r"on top \(whose first token is verified next\), not 9$")
    # A full accept with nothing drafted on top: the bonus token, or null while a later batch
    # is still being drafted (the output is complete here either way).
    check(changed(base(), 8, next_token=9))
    check(changed(base(), 8, next_token=None))


def test_squash_drafted():
    refused(check, changed(base(), 5, batch=0), 5,
            "^squash of batch 0, which is not unverified$")
    refused(check, changed(base(), 5, batch=2), 5, "^squash of batch 2, which is not unverified$")


def test_squash_while_drafting():
    newer = changed(changed(changed(base(), 6, batch=5), 7, batch=6), 8, batch=6)
    check(newer)                                          # newer than every drafted id
    refused(check, changed(base(), 6, batch=1), 6,
            r"^squash of batch 1 while drafting, but batch ids up to 1 were already used$")


def test_squash_follows_a_rejection():
    refused(check, changed(base(), 5, t=7.5), 5,
            r"^squash of batch 1 at t = 7.5, not at the time of the rejection of batch 0 "
            r"\(t = 7\)$")
    # Squashes follow the rejecting verify directly: not after a full accept or a draft.
    records = lookahead()
    records.insert(4, {"event": "squash", "batch": 1, "t": 7.0, "drafted": True})
    refused(check, records, 5, r"^squash of batch 1 without a rejection before it")
    records = base()
    records.insert(4, {"event": "draft", "batch": 5, "t": 7.0, "tokens": [1], "entropy": [0.0],
                       "q": [0.5], "edc": None})
    refused(check, records, 5, "^batch 1 is neither verified nor squashed after the rejection")


def test_rejection_squashes_every_later_batch():
    records = base()
    del records[4]                                        # batch 1 (drafted) not squashed
    refused(check, records, 6,
            r"^batch 1 is neither verified nor squashed after the rejection of batch 0 \(line "
            r"4\): a rejection squashes every later batch$")
    records = base()
    del records[5]                                        # no batch was being drafted: fine
    check(records)


def test_end_event():
    for output in ([3, 6], [3, 6, 7, 8]):
        refused(check, changed(base(), 9, output=output), 9,
                rf"^output holds {len(output)} tokens, the header asked for 3$")
    refused(check, base() + [{"event": "end", "t": 12.0, "output": [3, 6, 7]}], 10,
            "^event after the end event$")
    refused(check, base()[:-1], 9, r"^trace has no end event \(truncated\?\)$")
    # The line after the last event (blank lines after it do not move it).
    refused(decode_lines, encode(base()[:-1]) + [b"\n", b"\n"], 9, "^trace has no end event")
    refused(check, [], 1, "^empty trace: no header line$")
    refused(check, changed(base(), 9, output=[3, 6, 10]), 9,
            r"^output\[2\] must be an integer in 0\.\.9, not 10$")


def test_output_is_the_emitted_tokens():
    # The verifies emit 3 (accepted) and 6 (residual), then 7 (accepted) and 8 (bonus): the
    # first three are the output.
    for output in ([3, 6, 8], [6, 3, 7], [3, 4, 7]):
        refused(check, changed(base(), 9, output=output), 9,
                r"^output is not the tokens the verify events emitted \(each batch's accepted "
                r"prefix and next_token, in order\)$")
    # The verifies must emit at least `tokens` tokens.
    records = changed(lookahead(), 1, tokens=5)
    refused(check, changed(records, 6, output=[3, 4, 5, 6, 0]), 6,
            "^the verify events emit 4 tokens, fewer than the 5 of the output$")


def test_end_when_the_output_is_complete():
    refused(check, changed(base(), 9, t=12.5), 9,
            r"^end at t = 12.5, not at t = 12 when the verify at line 8 emitted the last needed "
            r"token$")
    # tokens = 2: the verify of batch 0 (line 4) completes the output; the end follows.
    short = changed(lookahead(), 1, tokens=2)
    check(short[:4] + [{"event": "end", "t": 7.0, "output": [3, 4]}])
    refused(check, changed(short, 6, output=[3, 4]), 5,
            r"^verify event after the output was complete \(the verify at line 4 emitted the "
            r"last of the 2 tokens; the end event follows it\)$")
    records = short[:4] + [{"event": "draft", "batch": 2, "t": 7.0, "tokens": [1],
                            "entropy": [0.0], "q": [0.5], "edc": None}]
    refused(check, records, 5, "^draft event after the output was complete")


# -- EDC events -----------------------------------------------------------------------------


def test_edc_events():
    assert edc_lines([]) == [] and edc_lines([b"\n", b"  \n"]) == []
    assert edc_lines([b'{"op":"verify","full":true}', b'{"op":"draft","entropy":0}',
                      b'{"entropy":2.5,"op":"draft"}', b'{"op":"verify","full":false}']) == \
        [("verify", True), ("draft", 0.0), ("draft", 2.5), ("verify", False)]
    for op in ('"Draft"', '"squash"', "null", "1"):
        refused(edc_lines, [f'{{"op":{op},"full":true}}'.encode()], 1,
                r'^"op" must be "draft" or "verify", not ')
    refused(edc_lines, [b'{"full":true}'], 1, '^"op" must be "draft" or "verify", not None$')
    refused(edc_lines, [b'{"op":"draft"}'], 1, "^draft event lacks entropy$")
    refused(edc_lines, [b'{"op":"verify"}'], 1, "^verify event lacks full$")
    refused(edc_lines, [b"[1]"], 1, "^expected a JSON object, got list$")
    refused(edc_lines, [b'{"op":"draft","entropy":-5e-324}'], 1, "^entropy must be a number >= 0")
    # A decoding trace is read as its EDC event sequence.
    assert edc_lines(encode(base())) == [("draft", 0.85), ("draft", 2.0), ("verify", False),
                                         ("draft", 0.0), ("verify", True)]
    refused(edc_lines, encode(changed(base(), 8, kv_len=0)), 8, "^kv_len must be 4")


# -- TVC transactions -----------------------------------------------------------------------

#: field -> (op, the other fields of a valid line, which TVCParams width it takes).
TVC_FIELDS = {
    "freq_ratio": ("config", {}, None),
    "ratio": ("preset", {"table": "pdct"}, "ratio_bits"),
    "cycles": ("record", {"table": "nvct", "length": 1}, "cycles_bits"),
    "length": ("record", {"table": "nvct", "cycles": 1}, "length_bits"),
    "kv_len": ("decide", {"now": 0, "pending": 0}, "length_bits"),
    "pending": ("decide", {"kv_len": 0, "now": 0}, "length_bits"),
    "now": ("decide", {"kv_len": 0, "pending": 0}, "cycles_bits"),
}


@pytest.mark.parametrize("field", TVC_FIELDS)
@pytest.mark.parametrize("params", [TVCParams(), TVCParams(ratio_bits=12, cycles_bits=5,
                                                            length_bits=3)],
                         ids=["defaults", "narrow"])
def test_tvc_field_ranges(field, params):
    op, others, width = TVC_FIELDS[field]
    # The documented widths: freq_ratio 16 (UQ2.14), else from the parameters; the defaults
    # are ratio 32 (UQ24.8), cycles 32, length 16.
    bits = 16 if width is None else getattr(params, width)
    if params == TVCParams():
        assert bits == {"freq_ratio": 16, "ratio": 32, "cycles": 32, "now": 32}.get(field, 16)

    def line(value):
        return [json.dumps({"op": op, **others, field: value}).encode()]
    top = (1 << bits) - 1
    assert tvc_lines(line(top), params)[0][field] == top
    assert tvc_lines(line(0), params)[0][field] == 0
    for bad in (top + 1, -1):
        refused(lambda lines: tvc_lines(lines, params), line(bad), 1,
                rf"^{field} must be an integer in 0\.\.{top}, not {bad}$")


def test_tvc_ops_tables_and_fields():
    assert tvc_lines([]) == [] and tvc_lines([b"\n"]) == []
    for table in ("nvct", "pdct", "pvct"):
        assert tvc_lines([json.dumps({"op": "preset", "table": table, "ratio": 1}).encode()])
    for table in ("NVCT", "tvct", None, 1):
        refused(tvc_lines, [json.dumps({"op": "preset", "table": table, "ratio": 1}).encode()],
                1, "^table must be one of nvct, pdct, pvct, not ")
    for text, message in TVC_REFUSED:
        refused(tvc_lines, [text], 1, message)


#: One bad TVC line each, and the start of its message.
TVC_REFUSED = [
    (b'{"op":"reset"}', "^op must be one of config, preset, record, decide, not 'reset'$"),
    (b'{"op":"record","table":"nvct","cycles":1}', "^record: missing length$"),
    (b'{"op":"decide","kv_len":0,"now":0,"pending":0,"x":1}', "^decide: unknown x$"),
    (b'{"op":"preset","ratio":1}', "^preset: missing table$"),
    (b'"config"', "^expected a JSON object, got str$"),
]


def test_json_lines_counts_physical_lines():
    assert list(json_lines([b"\n", b"1\n", b"\r\n", b"2"])) == [(2, 1), (4, 2)]
