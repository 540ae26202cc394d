"""The application layer's error type.

A :class:`CliError` is a failure the user caused (a bad option, an unreadable input, a tool that
failed): :func:`ahasd.cli.main` prints it as one line ``ahasd: error: ...`` and exits with its
``status``. Commands and the helpers they use (:mod:`ahasd.files`, :mod:`ahasd.readme`) raise it;
it lives apart from :mod:`ahasd.cli` so that they need not import the command line.
"""

import contextlib

__all__ = ["CliError", "grid_errors"]


class CliError(Exception):
    """A user-facing error: printed as ``ahasd: error: ...`` with exit status ``status``."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


@contextlib.contextmanager
def grid_errors(scheduler, *, values=True):
    """Around a run of simulator cells: a ValueError (a bad parameter found while the cells are
    built, with ``values``) and an OSError from the dask ``scheduler`` (unreachable) become
    :class:`CliError`; an OSError without a scheduler is not the user's and propagates."""
    try:
        yield
    except ValueError as e:
        if not values:
            raise
        raise CliError(str(e)) from None
    except OSError as e:
        if scheduler is None:
            raise
        raise CliError(f"cannot reach scheduler {scheduler}: {e}") from None
