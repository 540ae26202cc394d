"""The project's one rule for writing output files: through a temporary file beside the target,
renamed into place at the end, with the mode ``open`` would have given it; a failure leaves no
truncated file. Used by the trace writer (``ahasd.sim.traces``), the Verilog export
(``ahasd.synth.export``) and the CLI's outputs (``ahasd.files``)."""

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["new_file_mode", "atomic_output", "atomic_write_text"]


def new_file_mode(fd):
    """Give a file from ``tempfile.mkstemp`` (mode 0600) the mode ``open`` would have given it
    (0666 less the umask), so that renaming it into place changes nothing but the content."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(fd, 0o666 & ~umask)


@contextlib.contextmanager
def atomic_output(path, *, binary=False):
    """A file (UTF-8 text, or bytes with ``binary``) to write ``path`` through: a temporary file
    beside it (its folder is created), renamed to ``path`` when the block ends, removed if it
    raises. Creating the temporary file raises OSError before the block runs."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        new_file_mode(fd)
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8") as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path, text):
    """Write ``text`` to ``path`` through :func:`atomic_output`; return the path."""
    with atomic_output(path) as f:
        f.write(text)
    return Path(path)
