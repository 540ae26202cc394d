"""The application layer's error type.

A :class:`CliError` is a failure the user caused (a bad option, an unreadable input, a tool that
failed): :func:`ahasd.cli.main` prints it as one line ``ahasd: error: ...`` and exits with its
``status``. Commands and the helpers they use (:mod:`ahasd.files`, :mod:`ahasd.readme`) raise it;
it lives apart from :mod:`ahasd.cli` so that they need not import the command line.
"""

__all__ = ["CliError"]


class CliError(Exception):
    """A user-facing error: printed as ``ahasd: error: ...`` with exit status ``status``."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status
