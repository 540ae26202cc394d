"""The error net: no verb lets a traceback escape for a missing, unreadable, directory, binary or
empty input or an unwritable output; every failure is one line ``ahasd: error: ...``, exit 2,
nothing on standard output; Ctrl-C is exit 130 with one line."""

import argparse
import os
import signal
import subprocess
import sys
import time

import pytest

from ahasd.cli import build_parser, main

#: Every verb (its words) -> how it takes files: ("input", argv with {} for the input path),
#: ("output", argv with {} for the output path), or None (no file argument).
VERBS = {
    ("verilog",): ("output", ["verilog", "edc", "-o", "{}", "--no-lint"]),
    ("area",): ("output", ["area", "edc", "--build-dir", "{}"]),
    ("timing",): ("output", ["timing", "edc", "--build-dir", "{}"]),
    ("edc", "replay"): ("input", ["edc", "replay", "{}"]),
    ("tvc", "replay"): ("input", ["tvc", "replay", "{}"]),
    ("bench",): None,
    ("demo",): ("output", ["demo", "--build-dir", "{}", "--tokens", "20"]),
    ("decode",): ("output", ["decode", "--tokens", "20", "--out", "{}"]),
    ("trace", "stats"): ("input", ["trace", "stats", "{}"]),
    ("regs", "generate"): ("output", ["regs", "generate", "-o", "{}"]),
    ("regs", "check"): ("input", ["regs", "check", "{}"]),
    ("regs", "list"): None,
    ("simulate",): ("input", ["simulate", "--tokens", "16", "--trace", "{}"]),
    ("reproduce",): ("output", ["reproduce", "--quick", "--out", "{}"]),
    ("sweep",): ("output", ["sweep", "--axis", "pim.internal_bw_gbps=100", "--tokens", "16",
                            "--out", "{}"]),
    ("claims",): ("output", ["claims", "--quick", "--out", "{}"]),
    ("specla", "verify"): ("input", ["specla", "verify", "{}"]),
    ("specla", "bench"): ("output", ["specla", "bench", "--out", "{}"]),
    ("fpga",): ("output", ["fpga", "ecp5", "gts", "--build-dir", "{}"]),
}


def leaf_verbs(parser, prefix=()):
    """The word sequences of every leaf command of ``parser``."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix
        return
    for name, child in subs[0].choices.items():
        yield from leaf_verbs(child, prefix + (name,))


def test_every_verb_is_covered():
    assert set(leaf_verbs(build_parser())) == set(VERBS)


def bad_inputs(tmp_path):
    regular = tmp_path / "regular"
    regular.write_text("x")
    binary = tmp_path / "binary.bin"
    binary.write_bytes(bytes(range(255, -1, -1)) * 8)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    return {
        "missing": tmp_path / "missing.jsonl",
        # Tests run as root, for whom chmod 000 changes nothing: these fail for every user.
        "unreadable (under a regular file)": regular / "t.jsonl",
        "unreadable (read error)": "/proc/self/mem",
        "directory": tmp_path,
        "binary": binary,
        "empty": empty,
    }


def run(capsys, argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def assert_one_line_error(status, out, err):
    assert status == 2, err
    assert out == ""
    assert err.startswith("ahasd: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


INPUT_VERBS = [v for v, how in VERBS.items() if how and how[0] == "input"]
OUTPUT_VERBS = [v for v, how in VERBS.items() if how and how[0] == "output"]


@pytest.mark.parametrize("verb", INPUT_VERBS, ids=" ".join)
def test_bad_inputs(tmp_path, capsys, verb):
    for kind, path in bad_inputs(tmp_path).items():
        argv = [str(path) if a == "{}" else a for a in VERBS[verb][1]]
        status, out, err = run(capsys, argv)
        if kind == "empty" and verb in (("edc", "replay"), ("tvc", "replay")):
            assert (status, out, err) == (0, "", ""), kind    # no events: nothing to print
            continue
        if verb == ("regs", "check") and kind == "directory":   # a folder is its input
            assert_one_line_error(status, out, err)
            assert f"regs check: {path} is not a checkout" in err
            continue
        if verb == ("regs", "check") and kind in ("binary", "empty"):
            kind = "not a folder"
        assert_one_line_error(status, out, err)
        if kind == "binary":
            assert "line 1: " in err, err
        elif kind == "empty":
            assert "line 1: empty" in err
        else:
            assert str(path) in err, (kind, err)


#: Output verb -> the first expensive step it runs (elaboration, synthesis, decoding, the
#: simulator's cells, file generation, the cost model), as a dotted name the test replaces.
WORK = {
    # (the Verilog export's own binding of make_block: every block reaches it through
    # ahasd.synth.export.block_verilog)
    ("verilog",): "ahasd.synth.export.make_block",
    ("area",): "ahasd.synth.export.make_block",
    ("timing",): "ahasd.synth.timing_report.make_block",
    ("demo",): "ahasd.synth.export.make_block",
    ("decode",): "ahasd.sim.decoding.golden.load_models",
    ("regs", "generate"): "ahasd.firmware.regmap_export.generate",
    ("reproduce",): "ahasd.sim.system.reproduce.run_cells",
    ("sweep",): "ahasd.sim.system.sweep.run_sweep",
    ("claims",): "ahasd.sim.system.claims.run_claims",
    ("specla", "bench"): "ahasd.bench.specla.figures",
    ("fpga",): "ahasd.synth.export.make_block",
}


def test_every_output_verb_has_its_work():
    assert set(WORK) == set(OUTPUT_VERBS)


@pytest.mark.parametrize("verb", OUTPUT_VERBS, ids=" ".join)
def test_unwritable_output_fails_before_the_work(tmp_path, capsys, forbid, verb):
    # The work is replaced by a step that raises forbid.error: reaching it fails the test, so
    # the output is shown to be checked before any elaboration, synthesis, lint, decoding or
    # simulation starts (not by how long the command took).
    forbid(*set(WORK.values()))
    regular = tmp_path / "regular"
    regular.write_text("x")
    for target in (regular / "out", tmp_path / "regular" / "deeper" / "out"):
        argv = [str(target) if a == "{}" else a for a in VERBS[verb][1]]
        status, out, err = run(capsys, argv)
        assert_one_line_error(status, out, err)
        assert "regular" in err and "not a folder" in err, err
    assert regular.read_text() == "x"


@pytest.mark.parametrize("verb", OUTPUT_VERBS, ids=" ".join)
def test_writable_output_reaches_the_work(tmp_path, capsys, forbid, verb):
    """The control of the test above: with a writable output the same argv reaches the
    replaced step, so the step is on the command's real path."""
    forbid(WORK[verb])
    argv = [str(tmp_path / "out") if a == "{}" else a for a in VERBS[verb][1]]
    with pytest.raises(forbid.error, match=WORK[verb].replace(".", r"\.")):
        main(argv)


def test_decode_to_an_existing_folder(tmp_path, capsys):
    status, out, err = run(capsys, ["decode", "--tokens", "5", "--out", tmp_path])
    assert_one_line_error(status, out, err)
    assert f"cannot write {tmp_path}: is a directory" in err


def test_argparse_errors_are_one_line(capsys):
    for argv in (["edc", "replay"], ["decode", "--out", "x", "--seed", "-1"],
                 ["trace", "stats", "--bins", "0", "t"], ["bogus"]):
        status, out, err = run(capsys, argv)
        assert status == 2 and out == "" and err.count("\n") == 1, err
        assert err.startswith("ahasd: error: ")


def test_keyboard_interrupt_in_any_command(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setattr("ahasd.commands.regs.run_list", interrupted)
    assert main(["regs", "list"]) == 130
    out, err = capsys.readouterr()
    assert out == "" and err == "ahasd: interrupted\n"


def _default_sigint():
    # A terminal's Ctrl-C reaches a process whose SIGINT disposition is the default; a test
    # runner's worker may have SIGINT ignored, which a child would inherit (and Python then
    # installs no KeyboardInterrupt handler).
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_decode_leaves_no_file(tmp_path):
    """A real SIGINT to a long decode: exit 130, one line, no output file or temporary left."""
    out = tmp_path / "big.jsonl"
    with subprocess.Popen([sys.executable, "-m", "ahasd", "decode", "--tokens", "100000",
                           "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, preexec_fn=_default_sigint) as proc:
        # Wait until the temporary output exists: decoding has started.
        deadline = time.monotonic() + 60
        while not any(tmp_path.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        try:
            stdout, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            pytest.fail(f"decode did not stop within 60 s of SIGINT: {stderr[-2000:]}")
    assert proc.returncode == 130, stderr
    assert stdout == "" and stderr == "ahasd: interrupted\n"
    assert list(tmp_path.iterdir()) == []


def test_traceback_on_request(tmp_path):
    env = dict(os.environ, AHASD_TRACEBACK="1")
    argv = ["decode", "--min-len", "4", "--max-len", "2", "--out", str(tmp_path / "t")]
    proc = subprocess.run([sys.executable, "-m", "ahasd", *argv], capture_output=True,
                          text=True)
    assert proc.stderr == "ahasd: error: min_len must be <= max_len, not 4 > 2\n"
    proc = subprocess.run([sys.executable, "-m", "ahasd", *argv], capture_output=True,
                          text=True, env=env)
    assert "Traceback" in proc.stderr and "ValueError: min_len" in proc.stderr
