"""Every configuration figure the system simulator's document quotes equals the configuration's
(issue 20 point 5): the PIM's rate arithmetic, the measured GEMV efficiency, the energy per bit
by path, the NPU's share of a shared rank, the most loaded unit, the RTL cycle figures, the caps."""

import math
import re
from pathlib import Path

import pytest

from ahasd.sim.system.config import load_config
from ahasd.sim.system.memory import layout

DOC = (Path(__file__).resolve().parents[3] / "docs" / "system-simulator.md").read_text()


def quoted(pattern):
    """The numbers of the first match of ``pattern`` in the document (a failing test if none)."""
    m = re.search(pattern.replace(" ", r"\s+"), DOC)
    assert m, f"the document no longer says {pattern!r}"
    return [float(g.replace(",", "")) for g in m.groups()]


def test_pim_rate_arithmetic():
    p = load_config().pim
    b, t, f, unit, units, total = quoted(r"(\d+) B / (\d+) cycles x (\d+) MHz = ([\d.]+) G MAC/s "
                                         r"per unit raw, and (\d+) x [\d.]+ = ([\d.]+) G MAC/s")
    assert (b, t, f, units) == (p.unit_burst_bytes, p.t_ccd_s, p.freq_mhz, p.units)
    assert unit == p.unit_mac_per_s / p.efficiency_raw / 1e9
    assert total == pytest.approx(p.pim_mac_per_s / p.efficiency_raw / 1e9)
    assert quoted(r"`efficiency_raw` = ([\d.]+)") == [p.efficiency_raw]
    cycles, raw = quoted(r"([\d,]+)\s+cycles against the raw bound's ([\d,]+)")
    assert raw == 64 * 2048 * p.t_ccd_s / p.unit_burst_bytes
    assert raw / cycles == pytest.approx(p.efficiency_raw, abs=5e-5)
    assert quoted(r"\(([\d.]+) GB/s, the authors' on-chip figure: it binds from (\d+) units") == [
        p.internal_bw_gbps, math.ceil(p.internal_bw_gbps * 1e9 / p.unit_mac_per_s)]


def test_energy_per_bit_by_path():
    p = load_config().pim
    cell, read, col, bank = quoted(r"activation ([\d.]+) \+ cell read ([\d.]+) \+ column "
                                   r"([\d.]+) = ([\d.]+) pJ/b")
    assert (cell, read, col) == (p.cell_pj_per_bit, p.read_pj_per_bit, p.column_pj_per_bit)
    assert bank == pytest.approx(p.bank_pj_per_bit)
    gio, phy, off = quoted(r"global I/O ([\d.]+) and the interface ([\d.]+), ([\d.]+) pJ/b")
    assert (gio, phy) == (p.global_io_pj_per_bit, p.offchip_io_pj_per_bit)
    assert off == pytest.approx(p.offchip_pj_per_bit)


def test_shared_rank_and_most_loaded_unit():
    cfg = load_config()
    draft, target = cfg.pair("opt")
    lay = layout(cfg, draft, target)
    bw, util, ranks, raw, demand = quoted(r"asks for ([\d.]+) GB/s x ([\d.]+) over (\d+) ranks "
                                          r"of a rank's ([\d.]+) GB/s raw rate, ([\d.]+) of it")
    assert (bw, util, ranks) == (cfg.pim.offchip_bw_gbps, cfg.npu.bw_util, cfg.pim.ranks)
    assert raw == cfg.pim.unit_burst_bytes / cfg.pim.t_ccd_s * cfg.pim.freq_mhz / 1e3
    assert demand == pytest.approx(lay.host_demand)
    assert quoted(r"the units get the remaining (\d+\.\d+)") == [pytest.approx(lay.pim_factor)]
    rows, tiles, busiest = quoted(r"LM head of ([\d,]+) rows is ([\d,]+) tiles, (\d+) on the "
                                  r"busiest of 16 units")
    assert rows == draft.vocab and tiles == math.ceil(rows / cfg.pim.unit_burst_bytes)
    assert busiest == math.ceil(tiles / cfg.pim.units)


def test_rtl_cycles_and_caps():
    cfg = load_config()
    a = cfg.aau
    assert quoted(r"softmax (\d+),\s+GELU (\d+), LayerNorm (\d+) cycles per 16-element vector") == [
        16 * a.softmax_cycles_per_elem, 16 * a.gelu_cycles_per_elem,
        16 * a.layernorm_cycles_per_elem]
    c = cfg.controller
    assert quoted(r"EDC decision (\d+) PIM cycle") == [c.edc_cycles]
    assert quoted(r"TVC decision (\d+) cycles") == [c.tvc_cycles]
    assert quoted(r"GTS switch (\d+) cycle") == [c.gts_switch_cycles]
    assert quoted(r"caps ([\d.]+) / ([\d.]+) from AttAcc") == [cfg.npu.compute_util,
                                                              cfg.npu.bw_util]


def test_task_times_quoted_in_the_headline_section():
    from ahasd.sim.system.systems import Timing, make_spec
    cfg = load_config()
    draft, target = cfg.pair("opt")
    zero = {"draft": 0.0, "target": 0.0}
    ahasd = Timing(cfg, make_spec("ahasd"), draft, target, zero)
    gpu = Timing(cfg, make_spec("gpu"), draft, target, zero)
    npu = Timing(cfg, make_spec("npu-lpddr5"), draft, target, zero)
    g, n = quoted(r"at KV 600 takes ([\d.]+) ms on the GPU and ([\d.]+) ms on the NPU")
    assert (g, n) == (round(gpu.verify(4, 600)[0] * 1e3, 1), round(ahasd.verify(4, 600)[0] * 1e3))
    alone, lpddr5 = quoted(r"OPT-1.3B token in ([\d.]+) ms alone \(([\d.]+) ms on the NPU")
    assert alone == round(ahasd.draft_token(600)[0] * 1e3, 1)
    assert lpddr5 == round(npu.draft_token(600)[0] * 1e3, 1)
    keep, shared = quoted(r"units keep (\d+\.\d+) of the ranks' read slots, and the token takes "
                          r"([\d.]+) ms")
    assert keep == round(ahasd.layout.pim_factor, 3)
    assert shared == round(ahasd.draft_token(600)[0] / ahasd.layout.pim_factor * 1e3, 1)
    assert quoted(r"16 x 6.4 G MAC/s x ([\d.]+) = ([\d.]+) G MAC/s") == [
        cfg.pim.efficiency_raw, round(cfg.pim.pim_mac_per_s / 1e9, 1)]


def test_headlines_quoted_are_the_reference_grids():
    import json
    from importlib import resources
    h = json.loads(resources.files("ahasd.sim.system").joinpath(
        "reference", "summary.json").read_text())["headlines"]
    thr, lo, hi, energy, elo, ehi = quoted(
        r"vs NPU \+ LPDDR5 \(ours ([\d.]+)x throughput \[([\d.]+), ([\d.]+)\], ([\d.]+)x energy "
        r"per token \[([\d.]+), ([\d.]+)\]")
    n, iv = h["vs_npu-lpddr5"], h["intervals"]["vs_npu-lpddr5"]["throughput"]["mean"]
    assert [thr, lo, hi] == [round(n["throughput"]["mean"], 2), round(iv["ci95_low"], 2),
                             round(iv["ci95_high"], 2)]
    ept = h["intervals"]["energy_per_token_vs_npu-lpddr5"]
    assert [energy, elo, ehi] == [round(ept[k], 2) for k in ("mean", "ci95_low", "ci95_high")]
    mean, top = quoted(r"AHASD is ([\d.]+)x faster on average \(up to ([\d.]+)x\)")
    p = h["vs_phone-gpu"]["throughput"]
    assert (mean, top) == (round(p["mean"], 2), round(p["max"], 2))
    lo, hi = quoted(r"Throughput vs GPU-only \(ours ([\d.]+)-([\d.]+)x")
    grid = h["grid_vs_gpu"]
    assert lo == round(min(min(v["throughput"]) for v in grid.values()), 2)
    assert hi == round(max(max(v["throughput"]) for v in grid.values()), 2)
    steps = quoted(r"async ([\d.]+)x, \+AAU ([\d.]+)x, \+EDC ([\d.]+)x,\s+\+TVC ([\d.]+)x")
    assert steps == [round(h["ablation_vs_gpu"][s]["throughput"], 3)
                     for s in ("async", "aau", "edc", "tvc")]
    acc = quoted(r"The golden pairs reach ([\d.]+) \(default `ngram5-5b`\), ([\d.]+) \(`low`\) "
                 r"and ([\d.]+) \(`high`\)")
    assert acc == [round(h["per_acceptance"][p]["acceptance_rate"], 2)
                   for p in ("ngram5-5b", "ngram3-5", "ngram5-5x")]
    ratios = quoted(r"is ([\d.]+)x \[[\d., ]+\] at ([\d.]+), ([\d.]+)x \[[\d., ]+\] at ([\d.]+) "
                    r"and ([\d.]+)x \[[\d., ]+\] at ([\d.]+):")
    pa = h["per_acceptance"]
    assert ratios == [round(x, 2) for p in ("ngram3-5", "ngram5-5b", "ngram5-5x")
                      for x in (pa[p]["vs_npu-lpddr5"]["throughput"], pa[p]["acceptance_rate"])]
