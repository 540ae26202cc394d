"""Point 8 of issue 23: one JSON shape per command whatever the arguments. ``area``, ``timing``
and ``fpga`` always print ``{"blocks": [...], "anchors": ...}`` (one block or ``all``), ``fpga``
also its ``--board`` keys (null without a board); ``specla bench`` always has ``rtl``; ``bench``
always ``{"benches": {...}, "cases": ...}``. The
synthesis is replaced by a stub: the test is about the shape, not the figures."""

import json

import pytest

from ahasd.cli import main
from ahasd.hw.blocks import block_names


class FakeReport:
    def __init__(self, name):
        self.name = name

    def as_dict(self):
        return {"block": self.name, "figure": len(self.name)}


@pytest.fixture
def stubs(monkeypatch):
    monkeypatch.setattr("ahasd.synth.area_report.area_report", lambda name, *a, **k: FakeReport(name))
    monkeypatch.setattr("ahasd.synth.fpga_report.fpga_report", lambda name, *a, **k: FakeReport(name))
    monkeypatch.setattr("ahasd.commands.timing.timing_report",
                        lambda name, *a, **k: (FakeReport(name), None))


def _json(capsys, argv):
    assert main(argv) in (0, None)
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("verb", [["area"], ["timing"], ["fpga", "ecp5"], ["fpga", "ice40"]],
                         ids=" ".join)
def test_one_shape_for_one_block_and_all(tmp_path, capsys, stubs, verb):
    build = ["--build-dir", str(tmp_path)]
    one = _json(capsys, verb + ["gts", "--json"] + build)
    every = _json(capsys, verb + ["all", "--json"] + build)
    assert set(one) == set(every) and {"blocks", "anchors"} <= set(one)
    assert [b["block"] for b in one["blocks"]] == ["gts"]
    assert [b["block"] for b in every["blocks"]] == block_names()
    assert one["anchors"] is None and every["anchors"] is None
    if verb[0] == "fpga":
        assert set(one) == {"blocks", "anchors", "board", "bitstream", "bytes"}
        assert (one["board"], one["bitstream"], one["bytes"]) == (None, None, None)
    else:
        assert set(one) == {"blocks", "anchors"}
    if verb == ["area"]:
        assert "technology" in one["blocks"][0]       # the per-block keys are kept


def test_fpga_board_json_has_the_same_keys(tmp_path, capsys, monkeypatch):
    bitstream = tmp_path / "top.bit"
    bitstream.write_bytes(b"\0" * 7)
    monkeypatch.setattr("ahasd.synth.boards.build_board", lambda board, folder: bitstream)
    data = _json(capsys, ["fpga", "ecp5", "--board", "ulx3s", "--json", "--build-dir", str(tmp_path)])
    assert data == {"blocks": [], "anchors": None, "board": "ulx3s", "bitstream": str(bitstream),
                    "bytes": 7}


def test_specla_bench_has_rtl_without_rtl(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("ahasd.bench.specla.bench", lambda **k: {"figure": 1})
    data = _json(capsys, ["specla", "bench", "--json", "--out", str(tmp_path)])
    assert data == {"figure": 1, "rtl": None}


@pytest.fixture
def fake_benches(monkeypatch):
    from types import SimpleNamespace

    import ahasd.commands.bench as bench_command

    def fake(name):
        figures = {"cases": [{"m": 1}]} if name == "gemv" else {"figure": name, "rate": float("inf")}
        return SimpleNamespace(), lambda json_output, quick: figures
    monkeypatch.setattr(bench_command, "_module", fake)
    return list(bench_command.BENCHES)


def test_bench_has_one_shape_for_one_bench_and_all(capsys, fake_benches):
    one = _json(capsys, ["bench", "edc", "--json"])
    assert one == {"benches": {"edc": {"figure": "edc", "rate": None}}, "cases": None}
    gemv = _json(capsys, ["bench", "gemv", "--json"])
    assert gemv == {"benches": {"gemv": {"cases": [{"m": 1}]}}, "cases": [{"m": 1}]}
    every = _json(capsys, ["bench", "all", "--json"])
    assert set(every) == {"benches", "cases"} and list(every["benches"]) == fake_benches
    assert every["cases"] == [{"m": 1}] and every["benches"]["tvc"]["rate"] is None
