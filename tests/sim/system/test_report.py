"""ahasd.sim.system.report on a hand-made grid: every headline ratio, the offload marks, the
saturation count and the errors, against numbers worked out by hand."""

import pytest

from ahasd.sim.system.report import grid_cells, headlines, key, summary_markdown

PAIRS, POLICIES, ACCS = ("opt", "llama2"), ("specdecpp", "svip"), ("a0", "a1")
THROUGHPUT = {"gpu": 10.0, "phone-gpu": 8.0, "specpim": 20.0, "npu-lpddr5": 25.0,
              "ahasd-async": 30.0, "ahasd-aau": 35.0, "ahasd-edc": 38.0}
EFFICIENCY = {"gpu": 2.0, "phone-gpu": 3.0, "specpim": 5.0, "npu-lpddr5": 4.0}
CELLS = [(p, q) for p in PAIRS for q in POLICIES]


def rows():
    out = []
    for c in grid_cells(pairs=PAIRS, policies=POLICIES, acceptance_pairs=ACCS, tokens=16):
        k = c["system"] if c["system"] != "ahasd" else "ahasd-" + c["ablation"]
        at = (c["pair"], c["policy"])
        # Full AHASD gets faster cell by cell: 40, 44, 48, 52 (40 in the acceptance sweep).
        thr = 40.0 + 4 * CELLS.index(at) if k == "ahasd-tvc" and at in CELLS else \
            THROUGHPUT.get(k, 40.0)
        r = {"cell": c, "throughput_tok_s": thr,
             "tokens_per_mj": EFFICIENCY.get(k, 12.0 if k == "ahasd-tvc" else 10.0),
             "acceptance_rate": 0.5}
        if at == ("opt", "specdecpp") and k == "gpu" and c["acceptance_pair"] == "a0":
            r["offloaded"] = ["weights"]
        if at == ("llama2", "svip") and k == "specpim":
            r = {"cell": c, "error": "specpim llama2 svip: boom"}
        if k == "ahasd-tvc" and at == ("opt", "svip"):
            r.update(tvc_saturated_records=2, tvc_saturated_decisions=3)
        out.append(r)
    return out


def test_keys():
    assert key("ahasd", "tvc") == "ahasd-tvc" and key("gpu", None) == "gpu"


def test_headline_ratios():
    h = headlines(rows(), pairs=PAIRS, policies=POLICIES, acceptance_pairs=ACCS)
    assert h["acceptance_pair"] == "a0"
    assert h["vs_gpu"]["throughput"] == pytest.approx({"mean": 4.6, "max": 5.2, "min": 4.0})
    assert h["vs_gpu"]["energy_efficiency"] == pytest.approx({"mean": 6, "max": 6, "min": 6})
    # The failed SpecPIM cell drops out of the SpecPIM ratios only.
    assert h["vs_specpim"]["throughput"] == pytest.approx({"mean": 2.2, "max": 2.4, "min": 2.0})
    assert h["vs_npu-lpddr5"]["energy_efficiency"]["mean"] == pytest.approx(3.0)
    assert h["ablation_vs_gpu"]["edc"] == pytest.approx({"throughput": 3.8,
                                                         "energy_efficiency": 5.0})
    assert h["ablation_vs_phone-gpu"]["async"] == pytest.approx({"throughput": 3.75,
                                                                 "energy_efficiency": 10 / 3})
    assert h["grid_vs_gpu"]["opt"]["throughput"] == pytest.approx([4.0, 4.4])
    assert h["grid_vs_gpu"]["llama2"]["energy_efficiency"] == pytest.approx([6.0, 6.0])
    assert h["ablation_llama2_adaedl_vs_gpu"]["tvc"] == {"throughput": None,
                                                         "energy_efficiency": None}
    assert h["per_acceptance"]["a1"]["acceptance_rate"] == 0.5
    assert h["per_acceptance"]["a1"]["vs_gpu"] == pytest.approx({"throughput": 4.0,
                                                                "energy_efficiency": 6.0})
    assert h["per_acceptance"]["a0"]["vs_gpu"] == {"throughput": None,
                                                   "energy_efficiency": None}
    assert h["offloaded_cells"] == ["opt/gpu"]
    assert h["tvc_saturated"] == 5
    assert h["errors"] == ["specpim llama2 svip: boom"]


def test_summary_lines():
    h = headlines(rows(), pairs=PAIRS, policies=POLICIES, acceptance_pairs=ACCS)
    lines = summary_markdown(h).splitlines()
    # one seed: no interval, so no ratio is marked significant ("n/a")
    assert "| throughput vs GPU-only (max) | 5.20 | 4.2 | 1.24 | n/a |" in lines
    # Energy per token is the inverse of the efficiency ratio: 1 / 3.
    assert "| energy per token vs NPU+LPDDR5 (mean) | 0.33 | 0.48 | 0.69 | n/a |" in lines
    assert "| opt specdecpp: throughput vs GPU-only (offload) | 4.00 | 3.6 | 1.11 | n/a |" in lines
    assert "| llama2 svip: throughput vs GPU-only | 5.20 | 3.3 | 1.58 | n/a |" in lines
    assert "| a1 | 0.500 | 4.00 / 6.00 | 5.00 / 4.00 | 2.00 / 2.40 | 1.60 / 3.00 |" in lines
    assert lines[-3:] == ["Cells run with the offload model (weights streamed over the host "
                          "link): opt/gpu.",
                          "TVC saturated records and decisions over the grid: 5.",
                          "Cells that failed: specpim llama2 svip: boom"]
