"""``ahasd claims --quick`` end to end: the files, claims.json's schema and keys, one sentence
per claim in summary.md, one heatmap per claim; and bad input as one-line errors."""

import json

import pytest

from ahasd.cli import main
from ahasd.sim.system import claims

ENTRY_KEYS = {"label", "paper", "higher_is_better", "ours_shipped", "holds_at_shipped",
              "least_change", "heatmap_holds", "best", "sentence", "heatmap"}
INTERVAL_KEYS = {"mean", "ci95_low", "ci95_high", "n_seeds"}
CHANGE_KEYS = {"value", "shipped", "direction", "steps", "up", "down", "ours"}


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("claims") / "out"
    status = main(["claims", "--quick", "--jobs", "1", "--out", str(out)])
    assert status == 0
    return out


def test_quick_writes_every_file(quick):
    names = {p.name for p in quick.iterdir()}
    assert {"claims.json", "summary.md"} <= names
    assert {f"heatmap_{n}.png" for n in claims.CLAIMS} <= names
    for n in claims.CLAIMS:
        assert (quick / f"heatmap_{n}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_claims_json_schema(quick):
    doc = json.loads((quick / "claims.json").read_text())
    assert set(doc) == {"rule", "grid", "claims"}
    assert "ci95_high >= paper" in doc["rule"] and "ci95_low <= paper" in doc["rule"]
    g = doc["grid"]
    assert g["axes"] == {k: list(v) for k, v in claims.QUICK["axes"].items()}
    assert set(g["shipped"]) == set(claims.AXES) and g["heatmap_axes"] == ["acceptance",
                                                                           "pim.units"]
    assert g["pairs"] == ["opt"] and g["tokens"] == 64 and g["seeds"] == [0, 1]
    assert 0 < g["shipped"]["acceptance"] <= 1 and g["shipped"]["pim.units"] == 16
    # the shipped point; acceptance 0.5 and 0.9 (both synthetic), one other value on each of
    # the 4 other lines; the 2-D grid adds (0.5, 64) and (0.9, 64)
    assert g["points"] == len(g["results"]) == 9
    assert set(doc["claims"]) == set(claims.CLAIMS)
    for name, e in doc["claims"].items():
        assert set(e) == ENTRY_KEYS, name
        assert e["paper"] == claims.paper_figure(claims.CLAIMS[name])
        assert set(e["ours_shipped"]) == INTERVAL_KEYS and e["ours_shipped"]["n_seeds"] == 2
        assert e["holds_at_shipped"] == claims.holds(e["ours_shipped"], e["paper"],
                                                     e["higher_is_better"])
        assert set(e["least_change"]) == set(claims.AXES)
        for lc in e["least_change"].values():
            assert lc is None or set(lc) == CHANGE_KEYS
        assert e["heatmap"] == f"heatmap_{name}.png"


def test_summary_has_one_sentence_per_claim(quick):
    text = (quick / "summary.md").read_text()
    doc = json.loads((quick / "claims.json").read_text())
    bullets = [ln for ln in text.splitlines() if ln.startswith("* ")]
    assert len(bullets) == len(claims.CLAIMS)
    assert sorted(bullets) == sorted("* " + e["sentence"] for e in doc["claims"].values())
    for b in bullets:
        assert "holds" in b or "cannot hold here because" in b


def run(capsys, argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("extra,word", [
    (["--claim", "nope"], "unknown claim 'nope'"),
    (["--axis", "pim.rate=1"], "unknown axis 'pim.rate'"),
    (["--axis", "acceptance=2"], "values must be in [0, 1], not 2"),
    (["--heatmap", "acceptance,acceptance"], "--heatmap needs two different axes"),
    (["--jobs", "0"], "--jobs must be a positive integer, not 0"),
])
def test_bad_options_are_one_line(tmp_path, capsys, extra, word):
    status, out, err = run(capsys, ["claims", "--quick", "--out", tmp_path / "o", *extra])
    assert status == 2 and out == "" and err.count("\n") == 1 and word in err, err
    assert not (tmp_path / "o").exists()


def test_bad_out_is_one_line(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    status, out, err = run(capsys, ["claims", "--quick", "--out", f])
    assert status == 2 and err.count("\n") == 1 and "is not a folder" in err, err
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    status, out, err = run(capsys, ["claims", "--quick", "--out", full])
    assert status == 2 and err.count("\n") == 1
    assert "exists and is not empty (--force writes into it)" in err


def test_reproduce_ends_summary_with_the_sentences(quick, tmp_path):
    doc = json.loads((quick / "claims.json").read_text())
    out = tmp_path / "rep"
    assert main(["reproduce", "--quick", "--no-plots", "--jobs", "1", "--seeds", "2",
                 "--claims", str(quick / "claims.json"), "--out", str(out)]) == 0
    text = (out / "summary.md").read_text()
    section = text[text.index("## Where each claim can hold"):]
    bullets = [ln[2:] for ln in section.splitlines() if ln.startswith("* ")]
    assert bullets == [doc["claims"][n]["sentence"] for n in claims.CLAIMS]
    assert "ci95_high >= paper" in section


def test_reproduce_claims_bad_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    for text, word in (("{", "is not JSON"), ('{"claims": {}}', "is not the claims.json")):
        bad.write_text(text)
        status, out, err = run(capsys, ["reproduce", "--quick", "--claims", bad, "--out",
                                        tmp_path / "o"])
        assert status == 2 and err.count("\n") == 1 and word in err and str(bad) in err, err
    status, out, err = run(capsys, ["reproduce", "--quick", "--claims", tmp_path / "none.json",
                                    "--out", tmp_path / "o"])
    assert status == 2 and err.count("\n") == 1 and "cannot read" in err, err
    assert not (tmp_path / "o").exists()
