"""Suite-wide hooks: the summary of the regressions (``make regress``).

Every test marked ``regress`` gets one line at the end of the run: its outcome, its duration and,
if it recorded one (``record_property("regress_summary", text)``), what it ran with its counts.
The reports carry the markers and properties across xdist workers, so the lines appear however
the suite is distributed.
"""

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
