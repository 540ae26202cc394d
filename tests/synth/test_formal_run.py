"""ahasd.synth.formal's machinery without a real proof: a timed-out sby leaves no process
behind, a broken copy that no longer locates is an error, the README section is written after
the checks of --readme pass (and those run before any proof), a property that does not hold
fails the run."""

import os
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ahasd import formal as formal_app
from ahasd.synth import formal, formal_uart
from ahasd.synth.formal import FormalError, FormalResult, harness, kill_tree, run_sby


def _gone(pid):
    """Whether ``pid`` has ended (no longer there, or a zombie waiting for its parent)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return True
    return fields[0] in ("Z", "X")


def _fake_sby(tmp_path, monkeypatch):
    """A stand-in for sby that starts a "solver" in a process group of its own (as sby does for
    each engine), records its pid and then waits for ever."""
    script = tmp_path / "fake-sby"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import subprocess, sys, time
        solver = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                  start_new_session=True)
        with open("solver.pid", "w") as f:
            f.write(str(solver.pid))
        time.sleep(600)
        """))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(formal, "tools", lambda: (str(script), "yosys", "smtbmc"))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_timeout_kills_sby_and_the_solvers_it_started(tmp_path, monkeypatch):
    _fake_sby(tmp_path, monkeypatch)
    folder = tmp_path / "run"
    with pytest.raises(FormalError, match=r"sby timed out after 3 s .*processes killed"):
        run_sby(harness("gts", ["legal_state"]), folder, mode="bmc", depth=2, timeout=3)
    pid = int((folder / "solver.pid").read_text())
    # SIGKILL was sent before run_sby returned; wait (bounded) for the kernel to finish it.
    for _ in range(200):
        if _gone(pid):
            break
        time.sleep(0.05)
    assert _gone(pid)


def test_kill_tree_spares_the_caller():
    kill_tree(os.getpid() + 10**7)                # no such process: nothing happens
    assert not _gone(os.getpid())


def test_a_broken_copy_that_no_longer_locates_is_an_error():
    from ahasd.hw.uart_axil import UARTAXILiteBridge
    with pytest.raises(FormalError, match=r"mutant of UARTAXILiteBridge._rx does not locate: "
                                          r"'no such line' found 0 times"):
        formal_uart.source_mutant(UARTAXILiteBridge, UARTAXILiteBridge, "_rx", "no such line",
                                  "x")
    # Every fixture of the UART block locates in the bridge as it is now (and elaborates).
    from amaranth.back import rtlil
    for p in formal_uart.PROPERTIES:
        assert "cell $check" in rtlil.convert(harness("uart", [p.name], mutant=p.name), name="top")


def _result(status, mode="bmc", seconds=1.0):
    return FormalResult(status, mode, 8, seconds, (), Path("unused"))


README = "intro\n<!-- formal: begin (generated) -->\nold table\n<!-- formal: end -->\ntail\n"


def test_readme_section_is_the_table_of_the_run(tmp_path, monkeypatch):
    readme = tmp_path / "R.txt"
    readme.write_text(README)
    rows = [("legal_state", _result("pass", "prove"), _result("fail")),
            ("uart.rx_stop_bit", _result("pass", seconds=12.25), _result("fail", seconds=3.5))]
    monkeypatch.setattr(formal, "check", lambda keys, build_dir: iter(rows))
    formal_app.main(["all", "--readme", str(readme)])
    text = readme.read_text()
    assert text.startswith("intro\n<!-- formal: begin (generated) -->\n")
    assert text.endswith("<!-- formal: end -->\ntail\n")
    assert "old table" not in text
    assert "| GTS | legal_state | state is never the unused encoding 3 | k-induction 2 | 1.0 |" in text
    assert "| UART bridge | rx_stop_bit |" in text and "| BMC 48 | 12.2 |" in text
    assert "the stop bit not checked (a frame with a low stop bit accepted) | BMC 8 | 3.5 |" in text
    assert text.count("\n| ") == 3                 # the header and two rows


def test_readme_is_checked_before_any_proof(tmp_path, monkeypatch):
    def no_work(*args, **kwargs):
        raise AssertionError("a proof started before --readme was checked")
    monkeypatch.setattr(formal, "check", no_work)
    bad = tmp_path / "nomarkers.txt"
    bad.write_text("no markers here\n")
    with pytest.raises(SystemExit, match=r"formal: --readme: .*nomarkers.txt needs exactly one "
                                         r"'<!-- formal: begin"):
        formal_app.main(["gts", "--readme", str(bad)])
    with pytest.raises(SystemExit, match=r"formal: --readme: cannot read"):
        formal_app.main(["gts", "--readme", str(tmp_path / "missing.txt")])


@pytest.mark.parametrize("real, broken", [("unknown", "fail"), ("pass", "pass")])
def test_a_property_that_does_not_hold_fails_the_run(tmp_path, monkeypatch, real, broken):
    readme = tmp_path / "R.txt"
    readme.write_text(README)
    rows = [("legal_state", _result("pass"), _result("fail")),
            ("csr.w1c", _result(real), _result(broken))]
    monkeypatch.setattr(formal, "check", lambda keys, build_dir: iter(rows))
    with pytest.raises(SystemExit, match=r"formal: 1 of 2 properties did not hold or did not "
                                         r"fail on their broken copy: csr.w1c"):
        formal_app.main(["all", "--readme", str(readme)])
    assert ("UNKNOWN" if real == "unknown" else "PASS (not caught)") in readme.read_text()
