"""Progress of long runs on standard error (rich), shown only when standard error is a terminal,
so that logs, pipes and tests see nothing of it."""

import contextlib
import sys
import time

__all__ = ["progress"]


class _Bar:
    def __init__(self, bar, task):
        self._bar, self._task, self._last = bar, task, 0.0

    def __call__(self, completed):
        now = time.monotonic()
        if now - self._last >= 0.1:          # rich redraws at 10 Hz anyway
            self._last = now
            self._bar.update(self._task, completed=completed)


def _quiet(completed):
    pass


@contextlib.contextmanager
def progress(description, total):
    """Yield ``update(completed)``; a progress bar of ``total`` steps when stderr is a terminal."""
    stderr = sys.stderr
    if not (hasattr(stderr, "isatty") and stderr.isatty()):
        yield _quiet
        return
    from rich.console import Console
    from rich.progress import Progress
    with Progress(console=Console(stderr=True), transient=True) as bar:
        yield _Bar(bar, bar.add_task(description, total=total))
