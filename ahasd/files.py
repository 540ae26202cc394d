"""Input and output files of the commands: checked up front, written atomically.

* :func:`input_trace` opens nothing yet but guarantees a path that can be read more than once
  (``-``, standard input, is spooled to a temporary file), and checks that it can be opened.
* :func:`checked_trace` is the two streaming passes of every command that reads a trace
  (``edc replay``, ``tvc replay``, ``trace stats``): the first checks every line and keeps nothing,
  so a malformed trace fails before anything is printed; the second (and any later one) yields
  the checked items again. Memory does not grow with the trace.
* :func:`output_file` creates a temporary file beside the destination *before* the work starts
  (so an unwritable destination fails at once) and renames it over the destination at the end;
  on any failure the temporary file is removed and the destination is untouched. ``-`` is
  standard output.
* :func:`output_dir` creates a folder and proves it writable; :func:`fresh_output_dir` also
  refuses a folder that already holds files (``DIR: exists and is not empty``) unless forced.

OS errors become :class:`ahasd.errors.CliError` naming the path, with the reason in the
project's words (:func:`os_reason`: ``FILE: is a directory``, ``... is not a folder``).
"""

import contextlib
import os
import sys
import tempfile
from pathlib import Path

from ahasd.errors import CliError
from ahasd.sim.traces.errors import TraceError
from ahasd.sim.traces.lines import spooled
from ahasd.spec.files import atomic_output

__all__ = ["input_trace", "open_input", "checked_trace", "CheckedTrace", "output_file",
           "output_dir", "fresh_output_dir", "atomic_write_text", "display_name", "os_reason"]

def os_reason(error):
    """The reason of OSError ``error`` in the error lines' words (``is a directory``, ...)."""
    if isinstance(error, FileExistsError):          # mkdir of a parent that is a regular file
        return f"{error.filename} is not a folder"
    if isinstance(error, NotADirectoryError):       # a path below a regular file
        return "a parent is a regular file, not a folder"
    what = error.strerror or str(error)
    return what[:1].lower() + what[1:]


def _reason(error):
    return os_reason(error)


def _error(verb, path, error):
    return CliError(f"cannot {verb} {path}: {_reason(error)}")


def display_name(path):
    return "stdin" if str(path) == "-" else str(path)


@contextlib.contextmanager
def input_trace(path):
    """A readable path for ``path`` (``-``: a spooled copy of standard input)."""
    try:
        with spooled(path) as real:
            with open(real, "rb"):
                pass
            yield real
    except OSError as error:
        if error.filename is None or str(error.filename) != str(path):
            raise
        raise _error("read", path, error) from None


def open_input(path):
    """Open an (already checked) input path in binary mode."""
    try:
        return open(path, "rb")
    except OSError as error:
        raise _error("read", path, error) from None


@contextlib.contextmanager
def _reading(name):
    """Trace and OS errors while reading input ``name`` as CliErrors naming it."""
    try:
        yield
    except TraceError as error:
        raise CliError(f"{name}: {error}") from None
    except OSError as error:
        raise CliError(f"cannot read {name}: {os_reason(error)}") from None


class CheckedTrace:
    """An input trace that has passed the checking pass of :func:`checked_trace`.

    Attributes
    ----------
    name : str
        The name messages use (``stdin`` for ``-``).
    path : str
        A readable path (a spooled copy for standard input).
    count : int
        The number of items the checking pass read.
    """

    def __init__(self, path, name, read):
        self.path, self.name, self._read = path, name, read
        count = 0
        for _ in self.items():
            count += 1
        self.count = count

    def items(self):
        """Read the file again (a generator): the items of ``read(file)``, one at a time."""
        with _reading(self.name), open_input(self.path) as f:
            yield from self._read(f)


@contextlib.contextmanager
def checked_trace(path, read):
    """Yield a :class:`CheckedTrace` of input ``path`` (``-``: standard input, spooled to a
    temporary file) once ``read(binary_file)`` (an iterator that raises
    :class:`ahasd.sim.traces.errors.TraceError` at the first fault) has run through the whole
    file; a fault becomes a :class:`ahasd.errors.CliError` naming the file and the line."""
    name = display_name(path)
    with input_trace(path) as real:
        yield CheckedTrace(real, name, read)


@contextlib.contextmanager
def output_file(path, *, binary=False):
    """Yield a file to write that becomes ``path`` only if the block succeeds."""
    if str(path) == "-":
        yield sys.stdout.buffer if binary else sys.stdout
        sys.stdout.flush()
        return
    path = Path(path)
    stack = contextlib.ExitStack()
    try:
        if path.is_dir():
            raise IsADirectoryError(21, "Is a directory", str(path))
        f = stack.enter_context(atomic_output(path, binary=binary))
    except OSError as error:        # creating the file; errors of the block are the caller's
        raise _error("write", path, error) from None
    with stack:
        yield f


def atomic_write_text(path, text):
    """Write ``text`` to ``path`` through a temporary file (see :func:`output_file`)."""
    with output_file(path) as f:
        f.write(text)
    return Path(path)


def output_dir(path, option):
    """Create folder ``path`` (given by ``option``) and check that files can be created in it."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".ahasd-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as error:
        raise CliError(f"{option} {path}: cannot write there: {_reason(error)}") from None
    return path


def fresh_output_dir(path, option, *, force=False):
    """:func:`output_dir` for a folder a command fills with a whole result set (``reproduce``,
    ``sweep``): a folder that exists and holds files is refused (``DIR: exists and is not
    empty``, naming ``--force``) unless ``force``, so results of two runs never mix unasked."""
    path = Path(path)
    if not force and path.is_dir():
        try:
            with os.scandir(path) as entries:
                busy = next(entries, None) is not None
        except OSError as error:
            raise CliError(f"{option} {path}: cannot read: {_reason(error)}") from None
        if busy:
            raise CliError(f"{option} {path}: exists and is not empty (--force writes into it)")
    return output_dir(path, option)
