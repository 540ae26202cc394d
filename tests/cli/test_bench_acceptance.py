"""``ahasd bench acceptance --quick --json``: every grid policy measured on the default pair, beside
the authors' per-policy figures, and the sensitivity points below and above it."""

import json

from ahasd.cli import main


def test_bench_acceptance_quick_json(capsys):
    assert main(["bench", "acceptance", "--quick", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["benches"]["acceptance"]
    assert d["band"] == [0.65, 0.80] and d["tokens"] == 256
    row = d["pairs"]["opt"]
    assert row["golden"] == "ngram5-5b"
    assert set(row["policies"]) == set(d["authors_llama2"]) == {"specdecpp", "svip", "adaedl",
                                                                "banditspec"}
    assert d["authors_llama2"]["adaedl"] == {"acceptance_rate": 0.749, "mean_draft_len": 5.2}
    for f in row["policies"].values():
        assert 0 < f["acceptance_rate"] < 1 and f["mean_draft_len"] > 0
    assert row["adaedl_seeds"] == [row["policies"]["adaedl"]["acceptance_rate"]]
    low, high = d["sensitivity"]["low"]["opt"], d["sensitivity"]["high"]["opt"]
    assert low < 0.5 < row["policies"]["adaedl"]["acceptance_rate"] and low < high
    assert "table" not in d            # --quick writes no table
