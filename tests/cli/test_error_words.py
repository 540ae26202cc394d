"""Point 10 of issue 23: the error lines say what is wrong in the project's words
(``FILE: is a directory``, ``DIR: exists and is not empty`` unless ``--force``, ``regs check``
outside a checkout), and ``decode --out`` treats a missing folder as the other verbs do."""

from pathlib import Path

import pytest

from ahasd.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, argv):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def one_line(status, out, err):
    assert (status, out) == (2, ""), (status, out, err)
    assert err.startswith("ahasd: error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("argv", [["trace", "stats"], ["edc", "replay"], ["tvc", "replay"],
                                  ["specla", "verify"], ["simulate", "--tokens", "8", "--trace"]],
                         ids=lambda a: " ".join(a))
def test_directory_input_is_a_directory(tmp_path, capsys, argv):
    err = one_line(*run(capsys, argv + [tmp_path]))
    assert f"{tmp_path}: is a directory" in err and "Errno" not in err


def test_directory_output_is_a_directory(tmp_path, capsys):
    err = one_line(*run(capsys, ["decode", "--tokens", "5", "--out", tmp_path]))
    assert err == f"ahasd: error: cannot write {tmp_path}: is a directory\n"


#: verb argv with {} for --out, the first step of its work (replaced by the test)
FILLS = {
    "reproduce": (["reproduce", "--quick", "--out", "{}"], "ahasd.sim.system.reproduce.run_cells"),
    "sweep": (["sweep", "--axis", "pim.internal_bw_gbps=100", "--tokens", "16", "--out", "{}"],
              "ahasd.sim.system.sweep.run_sweep"),
}


class WorkStarted(Exception):
    pass


@pytest.mark.parametrize("verb", sorted(FILLS))
def test_non_empty_out_needs_force(tmp_path, capsys, monkeypatch, verb):
    argv, work = FILLS[verb]

    def started(*args, **kwargs):
        raise WorkStarted(work)

    monkeypatch.setattr(work, started)
    full = tmp_path / "full"
    full.mkdir()
    (full / "old.csv").write_text("x")
    err = one_line(*run(capsys, [str(full) if a == "{}" else a for a in argv]))
    assert err == f"ahasd: error: --out {full}: exists and is not empty (--force writes into it)\n"
    assert sorted(p.name for p in full.iterdir()) == ["old.csv"]
    with pytest.raises(WorkStarted):             # --force: the same argv reaches the work
        main([str(full) if a == "{}" else a for a in argv] + ["--force"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(WorkStarted):             # an empty or missing folder needs no --force
        main([str(empty) if a == "{}" else a for a in argv])
    with pytest.raises(WorkStarted):
        main([str(tmp_path / "new" / "dir") if a == "{}" else a for a in argv])


def test_make_reproduce_passes_force():
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if "ahasd reproduce" in line]
    assert lines, "no `ahasd reproduce` line in the Makefile"
    assert all("--force" in line for line in lines), lines


def test_regs_check_outside_a_checkout(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = one_line(*run(capsys, ["regs", "check"]))
    assert err.startswith("ahasd: error: regs check: not inside a checkout (no hw/regs.rdl in ")
    err = one_line(*run(capsys, ["regs", "check", tmp_path]))
    assert f"regs check: {tmp_path} is not a checkout" in err


def test_regs_check_from_a_subfolder_of_the_checkout(capsys, monkeypatch):
    monkeypatch.chdir(ROOT / "hw")
    status, out, err = run(capsys, ["regs", "check"])
    assert (status, err) == (0, "") and out.startswith("up to date: ")


def test_decode_out_creates_a_missing_folder_like_verilog(tmp_path, capsys):
    """Missing folders on an output path are created by every verb: ``verilog -o`` and
    ``decode --out`` alike."""
    trace = tmp_path / "a" / "b" / "t.jsonl"
    status, out, err = run(capsys, ["decode", "--tokens", "5", "--out", trace])
    assert status == 0 and err == "" and trace.is_file()
    folder = tmp_path / "c" / "d"
    status, out, err = run(capsys, ["verilog", "gts", "--no-lint", "-o", folder])
    assert status == 0 and (folder / "gts.v").is_file()


@pytest.mark.parametrize("verb", [["timing", "edc"], ["area", "edc"]], ids=["timing", "area"])
def test_readme_that_cannot_be_read(tmp_path, capsys, verb):
    binary = tmp_path / "readme.bin"
    binary.write_bytes(b"\x00\xff")
    status, out, err = run(capsys, [*verb, "--readme", str(binary)])
    one_line(status, out, err)
    assert err == f"ahasd: error: --readme: {binary}: not UTF-8 text\n"
    status, out, err = run(capsys, [*verb, "--readme", str(tmp_path)])
    one_line(status, out, err)
    assert err == f"ahasd: error: --readme: cannot read {tmp_path}: is a directory\n"
