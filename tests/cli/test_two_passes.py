"""Every command that reads a trace checks the whole file in one streaming pass before the pass
that computes (ahasd.files.checked_trace): a fault on the last line stops it before any model or
figure is computed, and standard input is spooled so that it can be read twice."""

import io

import pytest

import ahasd.commands.edc as edc_command
import ahasd.commands.tvc as tvc_command
import ahasd.files as files
import ahasd.sim.traces.decoding as decoding
from ahasd.cli import main
from ahasd.sim.traces.large import decoding_lines, edc_event_lines, tvc_lines

#: verb -> (argv, good lines, the module and name of the computing stage, a bad last line and
#: the message it must give)
VERBS = {
    "edc replay": (["edc", "replay"], lambda: list(edc_event_lines(300, seed=1)),
                   (edc_command, "_golden"), '{"op": "draft", "entropy": -1}\n',
                   "entropy must be a number >= 0, not -1"),
    "tvc replay": (["tvc", "replay"], lambda: list(tvc_lines(150, seed=1)),
                   (tvc_command, "_golden"), '{"op": "decide", "kv_len": true, "now": 0, "pending": 0}\n',
                   "kv_len must be an integer"),
    "trace stats": (["trace", "stats", "--json"], lambda: list(decoding_lines(60, seed=1))[:-1],
                    (decoding, "stats"), "", "trace has no end event"),       # truncated
}


def _spy(monkeypatch, module, attr):
    calls = []
    real = getattr(module, attr)

    def spy(*args, **kwargs):
        calls.append(len(opened))
        return real(*args, **kwargs)
    monkeypatch.setattr(module, attr, spy)
    opened = []
    real_open = files.open_input

    def counting_open(path):
        opened.append(path)
        return real_open(path)
    monkeypatch.setattr(files, "open_input", counting_open)
    return calls, opened


@pytest.mark.parametrize("verb", VERBS)
def test_a_fault_on_the_last_line_stops_before_the_computing_pass(tmp_path, capsys,
                                                                   monkeypatch, verb):
    argv, good, (module, attr), bad_line, message = VERBS[verb]
    calls, opened = _spy(monkeypatch, module, attr)
    lines = good()
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(lines) + bad_line)
    assert main(argv + [str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"ahasd: error: {path}: line "), err
    assert message in err
    assert f"line {len(lines) + 1}:" in err
    assert calls == [] and len(opened) == 1   # the checking pass only


@pytest.mark.parametrize("verb", VERBS)
def test_stdin_is_checked_then_read_again(tmp_path, capsys, monkeypatch, verb):
    argv, good, (module, attr), _, _ = VERBS[verb]
    data = "".join(good()).encode()
    if verb == "trace stats":
        data = "".join(decoding_lines(60, seed=1)).encode()
    path = tmp_path / "good.jsonl"
    path.write_bytes(data)
    assert main(argv + [str(path)]) == 0
    from_file = capsys.readouterr().out
    calls, opened = _spy(monkeypatch, module, attr)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    assert main(argv + ["-"]) == 0
    assert capsys.readouterr().out == from_file and from_file
    # Opened by the checking pass, then again by the computing one, which starts after it.
    assert len(opened) >= 2 and len(set(opened)) == 1 and calls == [1]
