"""Property tests of every trace reader: random and mutated lines either parse or raise the one
TraceError with a line number, never anything else; line numbers count blank lines."""

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ahasd.sim.blocks.tvc import TVCParams
from ahasd.sim.traces import decoding
from ahasd.sim.traces.edc import iter_events
from ahasd.sim.traces.errors import TraceError
from ahasd.sim.traces.tvc import dump, iter_trace, realistic_trace
from ahasd.tb.trace_examples import tiny_trace

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

EDC_GOOD = [b'{"op":"draft","entropy":2.5}', b'{"op":"verify","full":true}',
            b'{"op":"draft","entropy":0}', b'{"op":"verify","full":false}']
TVC_GOOD = [line.encode() for line in dump(realistic_trace(6, seed=4)).splitlines()]


DECODING_GOOD = [json.dumps(r).encode() for r in tiny_trace()]

READERS = {
    "edc": (lambda lines: list(iter_events(lines)), EDC_GOOD),
    "tvc": (lambda lines: list(iter_trace(lines, TVCParams())), TVC_GOOD),
    "decoding": (lambda lines: list(decoding.iter_records(lines)), DECODING_GOOD),
}

# Values that break the field rules: wrong types, non-finite spellings, huge numbers, bools.
HOSTILE = [b"NaN", b"-Infinity", b"Infinity", b"1e400", b"-1e400", b"1" + b"0" * 5000,
           b"-1", b"true", b"false", b"null", b'"1"', b"[]", b"{}", b"1.5", b"-0.0",
           b"18446744073709551616", b'"\\ud800"', b"[" * 5000, b"0x10", b"\xff", b"\x00"]


def check(reader, lines):
    """Parse or raise TraceError with a valid line number; anything else fails the test."""
    try:
        reader(lines)
    except TraceError as error:
        assert isinstance(error.line, int) and 1 <= error.line <= len(lines) + 1
        assert str(error).startswith(f"line {error.line}: ")
        assert len(str(error)) < 400                 # never echoes a huge value


def mutate(rng, line):
    """One random edit of a JSON line: replace a value, flip, cut or insert bytes."""
    kind = rng.randrange(6)
    if kind == 0 and b":" in line:                   # replace a value by a hostile one
        colons = [i for i, c in enumerate(line) if c == ord(":")]
        at = rng.choice(colons) + 1
        end = at
        while end < len(line) and line[end] not in b",}":
            end += 1
        return line[:at] + rng.choice(HOSTILE) + line[end:]
    if kind == 1 and line:                           # flip a byte
        i = rng.randrange(len(line))
        return line[:i] + bytes([rng.randrange(256)]) + line[i + 1:]
    if kind == 2:                                    # cut
        return line[:rng.randrange(len(line) + 1)]
    if kind == 3:                                    # duplicate a key
        return line.replace(b"{", b'{"op":"draft",', 1)
    if kind == 4:                                    # add an unknown field
        return line.replace(b"{", b'{"extra":1,', 1)
    return line + b" " + rng.choice(HOSTILE)


@pytest.mark.parametrize("name", READERS)
@SETTINGS
@given(data=st.data())
def test_mutated_lines(name, data):
    reader, good = READERS[name]
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    lines = list(good)
    for _ in range(data.draw(st.integers(1, 3))):
        i = rng.randrange(len(lines))
        lines[i] = mutate(rng, lines[i])
    if data.draw(st.booleans()):
        lines.insert(rng.randrange(len(lines) + 1), b"   ")
    check(reader, [line + b"\n" for line in lines])


@pytest.mark.parametrize("name", READERS)
@SETTINGS
@given(lines=st.lists(st.one_of(st.binary(max_size=60), st.text(max_size=60).map(str.encode),
                                st.sampled_from(HOSTILE)), max_size=6))
def test_random_lines(name, lines):
    reader, _ = READERS[name]
    check(reader, [line.replace(b"\n", b"") + b"\n" for line in lines])


@pytest.mark.parametrize("name", READERS)
@SETTINGS
@given(blanks=st.lists(st.integers(0, 3), min_size=1, max_size=6), where=st.integers(0, 100))
def test_line_numbers_count_blank_lines(name, blanks, where):
    """Break one line of a valid trace after blank lines: the error names its physical line."""
    reader, good = READERS[name]
    lines, physical = [], []
    for i, line in enumerate(good):
        lines += [b"\t \r"] * blanks[i % len(blanks)]
        lines.append(line)
        physical.append(len(lines))
    bad = where % len(good)
    lines[physical[bad] - 1] = b"[1, 2"
    with pytest.raises(TraceError) as info:
        reader([line + b"\n" for line in lines])
    assert info.value.line == physical[bad]


def test_the_valid_traces_parse():
    for name, (reader, good) in READERS.items():
        assert reader([line + b"\n" for line in good]), name
