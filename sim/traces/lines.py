"""The reading rules every JSON-lines trace shares (``docs/trace-format.md``, "Rules for every
format").

* Lines are split at ``\\n`` only and counted physically: blank lines (spaces, tabs, ``\\r``) are
  skipped but counted, so ``line N`` is the line an editor shows.
* Each line is UTF-8 and at most :data:`MAX_LINE_BYTES` bytes (not counting its ``\\n``).
* Each non-blank line is one JSON value under strict rules: no ``NaN``/``Infinity`` (they are not
  JSON), no number that overflows a float, no integer of more than :data:`MAX_INT_DIGITS` digits
  (which also keeps Python's integer-string limit out of reach), no duplicate key, no lone
  surrogate in a string.
* ``-`` names standard input.

Anything else raises :class:`ahasd.sim.traces.errors.TraceError` with the line number. The field
rules of each format live with the format; the checks shared by all of them are here
(:func:`check_int`, :func:`check_real`, :func:`show`).
"""

import contextlib
import json
import math
import os
import shutil
import sys
import tempfile

from ahasd.sim.traces.errors import TraceError
from ahasd.spec.files import new_file_mode

__all__ = ["MAX_LINE_BYTES", "MAX_INT_DIGITS", "json_lines", "open_binary", "spooled",
           "check_int", "check_real", "check_bool", "show", "names", "dumps", "new_file_mode"]

#: Longest accepted line (a decoding trace's ``end`` line holds every output token: 16 MiB is
#: about three million tokens). A reader's memory is bounded by a few times this.
MAX_LINE_BYTES = 16 << 20
#: Most digits of a JSON integer (every field's range is far below 10**20).
MAX_INT_DIGITS = 20

_BLANK = " \t\r\n"


class _Reject(ValueError):
    pass


#: Integers already parsed, by their text: token ids and counts repeat, and a list of shared
#: int objects costs 8 bytes an item instead of 36 (the end line of a decoding trace holds every
#: output token).
_INTS: dict[str, int] = {}
_INTS_MAX = 1 << 15


def _parse_int(text):
    value = _INTS.get(text)
    if value is not None:
        return value
    digits = len(text) - text.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise _Reject(f"an integer of {digits} digits is out of range "
                      f"(at most {MAX_INT_DIGITS} digits)")
    value = int(text)
    if len(_INTS) < _INTS_MAX:
        _INTS[text] = value
    return value


def _parse_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise _Reject(f"the number {show(text)} is out of the range of a float")
    return value


def _parse_constant(name):
    raise _Reject(f"{name} is not a JSON number")


def _object(pairs):
    result = dict(pairs)
    if len(result) != len(pairs):
        seen = set()
        dup = None
        for k, _ in pairs:        # the first key seen twice
            if k in seen:
                dup = k
                break
            seen.add(k)
        raise _Reject(f"duplicate key {show(dup)}")
    return result


_DECODER = json.JSONDecoder(parse_int=_parse_int, parse_float=_parse_float,
                            parse_constant=_parse_constant, object_pairs_hook=_object)


def _has_surrogate(value):
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def parse_line(text, number):
    """One line's JSON value under the strict rules; raise :class:`TraceError` for ``number``."""
    try:
        value = _DECODER.decode(text)
    except _Reject as error:
        raise TraceError(number, str(error)) from None
    except json.JSONDecodeError as error:
        raise TraceError(number, f"not JSON ({error.msg}, column {error.colno})") from None
    except RecursionError:
        raise TraceError(number, "JSON nested too deeply") from None
    if "\\u" in text and _has_surrogate(value):
        raise TraceError(number, "a string holds a lone UTF-16 surrogate (not Unicode text)")
    return value


def _raw_lines(source):
    """Yield raw lines (str or bytes) of a file object or an iterable of lines."""
    readline = getattr(source, "readline", None)
    if readline is None:
        yield from source
        return
    while True:
        line = readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        yield line


def _line_bytes(raw):
    """The bytes of a raw line, not counting its terminating ``\\n`` (a text line is measured
    in UTF-8 bytes, not characters)."""
    size = len(raw)
    if isinstance(raw, str) and size > MAX_LINE_BYTES // 4:   # else it cannot be too long
        size = len(raw.encode("utf-8", "surrogatepass"))
    return size - (raw[-1:] in ("\n", b"\n"))


def json_lines(source):
    """Yield ``(line_number, value)`` for every non-blank line of ``source``.

    ``source`` is a binary or text file object or an iterable of lines (str or bytes).
    """
    number = 0
    lines = _raw_lines(source)
    while True:
        number += 1
        try:
            raw = next(lines)
        except StopIteration:
            return
        except UnicodeDecodeError as error:   # a text-mode source
            raise TraceError(number, f"not UTF-8 text ({error.reason})") from None
        if _line_bytes(raw) > MAX_LINE_BYTES:
            raise TraceError(number, f"line longer than {MAX_LINE_BYTES} bytes")
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise TraceError(number, f"not UTF-8 text (byte 0x{raw[error.start]:02x} at "
                                         f"column {error.start + 1})") from None
        if raw.strip(_BLANK):
            yield number, parse_line(raw, number)


def open_binary(path):
    """Open a trace for :func:`json_lines`: ``-`` is standard input, else the file (binary)."""
    if str(path) == "-":
        stdin = sys.stdin
        return contextlib.nullcontext(getattr(stdin, "buffer", stdin))
    return open(path, "rb")


@contextlib.contextmanager
def spooled(path):
    """A path that can be read more than once: ``path`` itself, or for ``-`` a temporary copy of
    standard input (removed on exit)."""
    if str(path) != "-":
        yield path
        return
    fd, name = tempfile.mkstemp(prefix="ahasd-stdin-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as out:
            stdin = sys.stdin
            buffer = getattr(stdin, "buffer", None)
            if buffer is not None:
                shutil.copyfileobj(buffer, out, 1 << 20)
            else:                                         # a text stream (tests)
                for chunk in iter(lambda: stdin.read(1 << 20), ""):
                    out.write(chunk.encode("utf-8", "surrogateescape"))
        yield name
    finally:
        os.unlink(name)


def show(value, limit=60):
    """``repr(value)``, cut to ``limit`` characters (a message never repeats a huge value)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def names(keys, limit=40):
    """Sorted key names for a message, each cut to ``limit`` characters."""
    return ", ".join(k if len(k) <= limit else k[:limit - 3] + "..." for k in sorted(keys))


def check_int(number, name, value, low, high):
    """``value`` if it is a JSON integer (not a bool) in ``low..high``; else TraceError."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TraceError(number, f"{name} must be an integer in {low}..{high}, not {show(value)}")
    return value


def check_real(number, name, value, low=-math.inf, high=math.inf):
    """``value`` as a float if it is a finite number (not a bool) in ``[low, high]``; else
    TraceError. (Parsed JSON is finite by the line rules; records built in Python may not be.)"""
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high
            or not math.isfinite(value)):
        bounds = (f">= {low:g}" if high == math.inf else f"in [{low:g}, {high:g}]")
        raise TraceError(number, f"{name} must be a number {bounds}, not {show(value)}")
    return float(value)


def check_bool(number, name, value):
    if not isinstance(value, bool):
        raise TraceError(number, f"{name} must be true or false, not {show(value)}")
    return value


def dumps(value):
    """Strict compact JSON (NaN or Infinity raise ValueError)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False)
