"""Suite-wide hooks: the summary of the regressions (``make regress``).

Every test marked ``regress`` gets one line at the end of the run: its outcome, its duration and,
if it recorded one (``record_property("regress_summary", text)``), what it ran with its counts.
The reports carry the markers and properties across xdist workers, so the lines appear however
the suite is distributed.

The ``forbid`` fixture replaces the expensive steps of a command by ones that fail, to show that
a check runs before the work (instead of timing the command).
"""

import pytest

_REGRESSIONS = []


def pytest_runtest_logreport(report):
    if "regress" not in report.keywords:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        summary = dict(report.user_properties).get("regress_summary", "")
        _REGRESSIONS.append((report.nodeid, report.outcome, report.duration, summary))


def pytest_terminal_summary(terminalreporter):
    if not _REGRESSIONS:
        return
    terminalreporter.section("regressions run")
    for nodeid, outcome, duration, summary in sorted(_REGRESSIONS):
        line = f"{outcome.upper():7s} {duration:8.1f} s  {nodeid}"
        terminalreporter.write_line(line + (f"\n{'':19s}{summary}" if summary else ""))
    counts = {}
    for _, outcome, _, _ in _REGRESSIONS:
        counts[outcome] = counts.get(outcome, 0) + 1
    terminalreporter.write_line("regressions: " + ", ".join(f"{n} {o}" for o, n in
                                                            sorted(counts.items())))


class WorkStarted(BaseException):
    """Raised by a step that :func:`forbid` replaced: the work started.

    A ``BaseException``, so that the command line's error net (which turns an ``Exception`` into
    a one-line error) lets it through to the test.
    """


class _Forbidden:
    error = WorkStarted

    def __init__(self, monkeypatch):
        self._monkeypatch = monkeypatch
        self.names = []

    def __call__(self, *names):
        """Replace each dotted ``module.attribute`` by a callable that raises WorkStarted."""
        for name in names:
            def step(*args, _name=name, **kwargs):
                raise WorkStarted(_name)
            self._monkeypatch.setattr(name, step)
            self.names.append(name)
        return self



@pytest.fixture
def forbid(monkeypatch):
    """Instrumentation instead of wall-clock bounds: ``forbid("pkg.mod.step", ...)`` replaces
    the expensive steps of a command by ones that raise ``forbid.error`` (WorkStarted) when
    called, so a test shows that a check ran *before* the work, and (with a valid input) that
    the replaced step is the one the command really reaches."""
    return _Forbidden(monkeypatch)
