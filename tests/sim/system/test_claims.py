"""``ahasd claims`` (issue 21 point 2): the holding rule at its boundary, the least-change search
and the claim entries on hand-made grids, the reuse of runs across points (each system reads only
its axes: checked by running it), and a heatmap read back from the figure."""

import math

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ahasd.sim.system import claims  # noqa: E402
from ahasd.sim.system.report import PAPER  # noqa: E402
from ahasd.sim.system.runner import simulate  # noqa: E402


def iv(mean, low=None, high=None, n=3):
    return {"mean": mean, "ci95_low": low, "ci95_high": high, "n_seeds": n}


# -- the holding rule ---------------------------------------------------------------------

def test_holding_rule_at_its_boundary():
    # higher is better: the upper bound reaches the paper's figure
    assert claims.holds(iv(3.0, 2.0, 4.2), 4.2, True)
    assert not claims.holds(iv(3.0, 2.0, 4.2 - 1e-12), 4.2, True)
    assert claims.holds(iv(5.0, 4.3, 5.7), 4.2, True)
    # lower is better (energy per token): the lower bound reaches it
    assert claims.holds(iv(0.6, 0.48, 0.7), 0.48, False)
    assert not claims.holds(iv(0.6, 0.48 + 1e-12, 0.7), 0.48, False)
    assert claims.holds(iv(0.3, 0.2, 0.4), 0.48, False)
    # one seed: the mean stands for both bounds; no value never holds
    assert claims.holds(iv(4.2, n=1), 4.2, True) and not claims.holds(iv(4.1, n=1), 4.2, True)
    assert not claims.holds(iv(None, n=0), 0.48, False)


def test_paper_figures_are_reports():
    fig = {c.name: claims.paper_figure(c) for c in claims.CLAIMS.values()}
    assert fig == {"throughput_vs_gpu": PAPER["throughput_vs_gpu_max"],
                   "energy_vs_gpu": PAPER["energy_vs_gpu_max"],
                   "throughput_vs_specpim": PAPER["throughput_vs_specpim_max"],
                   "energy_vs_specpim": PAPER["energy_vs_specpim_mean"],
                   "throughput_vs_npu_lpddr5": PAPER["throughput_vs_npu_lpddr5"],
                   "energy_per_token_vs_npu_lpddr5": PAPER["energy_per_token_vs_npu_lpddr5"],
                   **{f"ablation_{a}": PAPER["ablation_throughput"][a]
                      for a in ("async", "aau", "edc", "tvc")}}
    assert fig["throughput_vs_gpu"] == 4.2 and fig["ablation_edc"] == 3.4
    assert [c.name for c in claims.CLAIMS.values() if not c.higher] == [
        "energy_per_token_vs_npu_lpddr5"]


# -- least change ---------------------------------------------------------------------------

UNITS = (16, 32, 64, 128, 256)
ACC = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def test_least_change_up_from_a_grid_value():
    lc = claims.least_change(UNITS, 16, {64: True, 256: True, 32: False})
    assert lc == {"value": 64, "shipped": 16, "direction": "up", "steps": 2, "up": 64,
                  "down": None}


def test_least_change_from_between_grid_values():
    # shipped 0.73: up 0.8 (1), 0.9 (2); down 0.7 (1), 0.6 (2), 0.5 (3), 0.4 (4)
    lc = claims.least_change(ACC, 0.73, {0.9: True, 0.4: True})
    assert (lc["value"], lc["direction"], lc["steps"], lc["up"], lc["down"]) == (
        0.9, "up", 2, 0.9, 0.4)
    # a tie in steps: the smaller relative change (0.7 is 0.03 away, 0.8 0.07)
    lc = claims.least_change(ACC, 0.73, {0.8: True, 0.7: True})
    assert (lc["value"], lc["direction"], lc["steps"]) == (0.7, "down", 1)
    # fewer steps beat a smaller change: down 2 steps (0.6) against up 1 (0.8)
    lc = claims.least_change(ACC, 0.73, {0.8: True, 0.6: True})
    assert lc["value"] == 0.8


def test_least_change_none_and_nearest_first():
    assert claims.least_change(UNITS, 64, {64: True}) is None   # the shipped value is no move
    assert claims.least_change(UNITS, 64, {}) is None
    lc = claims.least_change(UNITS, 64, {256: True, 128: True, 16: True})
    assert (lc["value"], lc["steps"], lc["up"], lc["down"]) == (128, 1, 128, 16)


# -- claim entries on a hand-made grid -----------------------------------------------------

AXES = {"acceptance": (0.5, 0.9), "pim.units": (16, 64), "gpu.mem_bw_gbps": (256.0, 896.0)}
SHIPPED = {"pim.units": 16, "gpu.mem_bw_gbps": 896.0, "acceptance": 0.74}
HEAT = ("acceptance", "pim.units")


def fake_results(value):
    """Every point of the plan with ``value(point)`` as every claim's interval."""
    pts = claims.plan_points(AXES, HEAT, SHIPPED)
    out = {}
    for p in pts:
        v = value(p)
        out[claims.run_key(p)] = {"point": p, "acceptance_rate": 0.74, "errors": [],
                                  "claims": {n: v for n in claims.CLAIMS}}
    return out


def test_plan_lists_each_point_once():
    pts = claims.plan_points(AXES, HEAT, SHIPPED)
    assert pts[0] == {}
    # lines: acceptance 0.5, 0.9; units 64; gpu 256; the 2-D grid adds the two (a, 64) points
    assert len(pts) == 7 and {"pim.units": 64, "acceptance": 0.9} in pts
    assert {"pim.units": 16} not in pts and {"gpu.mem_bw_gbps": 896.0} not in pts


def test_claim_entry_least_changes_and_sentences():
    def value(p):              # throughput vs GPU: up with units and acceptance
        m = 1.0 + (2.0 if p.get("pim.units") == 64 else 0) + (1.5 if p.get("acceptance") == 0.9
                                                              else 0)
        return iv(m, m - 0.4, m + 0.4)
    res = fake_results(value)
    c = claims.CLAIMS["throughput_vs_gpu"]           # paper 4.2: no single change reaches it
    e = claims.claim_entry(c, res, AXES, HEAT, SHIPPED)
    assert e["paper"] == 4.2 and e["ours_shipped"]["mean"] == 1.0
    assert not e["holds_at_shipped"]
    assert e["least_change"] == {"acceptance": None, "pim.units": None, "gpu.mem_bw_gbps": None}
    # both together: 4.5 [4.1, 4.9]
    assert e["heatmap_holds"]["point"] == {"acceptance": 0.9, "pim.units": 64}
    e2 = claims.claim_entry(claims.CLAIMS["throughput_vs_specpim"], res, AXES, HEAT, SHIPPED)
    # paper 1.5: units 64 gives 3.0 [2.6, 3.4], acceptance 0.9 2.5 [2.1, 2.9]; 0.5 down fails
    assert e2["least_change"]["pim.units"] == {
        "value": 64, "shipped": 16, "direction": "up", "steps": 1, "up": 64, "down": None,
        "ours": iv(3.0, 2.6, 3.4)}
    assert e2["least_change"]["acceptance"]["value"] == 0.9
    assert e2["least_change"]["acceptance"]["down"] is None
    assert e2["least_change"]["gpu.mem_bw_gbps"] is None
    assert e2["sentence"].startswith("throughput vs SpecPIM (max) (paper 1.5; ours 1.00 "
                                     "[0.60, 1.40] shipped): holds if ")
    assert "pim.units is 64 instead of 16" in e2["sentence"]


def test_claim_entry_only_together_and_never():
    def value(p):
        both = p.get("pim.units") == 64 and p.get("acceptance") == 0.9
        return iv(5.0, 4.0, 6.0) if both else iv(1.0, 0.5, 1.5)
    res = fake_results(value)
    e = claims.claim_entry(claims.CLAIMS["ablation_edc"], res, AXES, HEAT, SHIPPED)  # 3.4
    assert all(v is None for v in e["least_change"].values())
    assert e["heatmap_holds"]["point"] == {"acceptance": 0.9, "pim.units": 64}
    assert "holds only if acceptance = 0.9, pim.units = 64 together" in e["sentence"]
    res = fake_results(lambda p: iv(1.0, 0.5, 1.5))
    e = claims.claim_entry(claims.CLAIMS["ablation_edc"], res, AXES, HEAT, SHIPPED)
    assert e["heatmap_holds"] is None
    assert "cannot hold here because no point of the grid reaches it" in e["sentence"]
    assert "ci95_high 1.50 is below 3.4" in e["sentence"]


def test_claim_entry_lower_is_better_and_holding_at_shipped():
    res = fake_results(lambda p: iv(0.6, 0.45, 0.75))
    e = claims.claim_entry(claims.CLAIMS["energy_per_token_vs_npu_lpddr5"], res, AXES, HEAT,
                           SHIPPED)
    assert e["holds_at_shipped"] and not e["higher_is_better"]
    assert all(lc["steps"] == 0 and lc["value"] == SHIPPED[a]
               for a, lc in e["least_change"].items())
    assert "holds at the shipped configuration" in e["sentence"]
    res = fake_results(lambda p: iv(0.6, 0.5, 0.7))
    e = claims.claim_entry(claims.CLAIMS["energy_per_token_vs_npu_lpddr5"], res, AXES, HEAT,
                           SHIPPED)
    assert not e["holds_at_shipped"] and "ci95_low 0.50 is above 0.48" in e["sentence"]


# -- the heatmap ----------------------------------------------------------------------------

def test_heatmap_axes_cells_and_shipped_marker():
    def value(p):
        return iv(2.0 if p.get("pim.units") == 64 else 1.0, 0.5, 1.2
                  if p.get("pim.units") != 64 else 2.5)
    res = fake_results(value)
    doc = claims._document([claims.CLAIMS["throughput_vs_npu_lpddr5"]], res, AXES, HEAT,
                           SHIPPED, None, {})
    d = claims.heatmap_data(doc, "throughput_vs_npu_lpddr5")
    assert (d["x"], d["y"]) == HEAT and d["x_values"] == [0.5, 0.9]
    assert d["means"] == [[1.0, 1.0], [2.0, 2.0]] and d["holds"] == [[False, False], [False,
                                                                                      False]]
    # shipped acceptance 0.74: 0.6 of the way from 0.5 to 0.9; 16 units: row 0
    assert d["shipped"] == pytest.approx((0.6, 0.0))
    fig = claims.heatmap_figure(plt, d)
    try:
        fig.canvas.draw()
        ax = fig.axes[0]
        assert ax.get_xlabel().startswith("per-token acceptance (fraction; synthetic")
        assert ax.get_ylabel() == "PIM GEMV units (count)"
        assert [t.get_text() for t in ax.get_xticklabels()] == ["0.5", "0.9"]
        assert [t.get_text() for t in ax.get_yticklabels()] == ["16", "64"]
        star = [ln for ln in ax.get_lines() if ln.get_marker() == "*"]
        assert len(star) == 1 and star[0].get_label() == "shipped"
        assert (star[0].get_xdata()[0], star[0].get_ydata()[0]) == pytest.approx((0.6, 0.0))
        assert sorted(t.get_text() for t in ax.texts) == ["1.00", "1.00", "2.00", "2.00"]
        assert "paper 3.1x" in ax.get_title() and "star: shipped" in ax.get_title()
        assert min(t.get_fontsize() for t in ax.get_xticklabels()) >= 8
    finally:
        plt.close(fig)


# -- reuse: each system reads only its axes ------------------------------------------------

CHANGES = {"pim.units": 64, "pim.offchip_bw_gbps": 204.8, "gpu.mem_bw_gbps": 256.0,
           "gpu.mem_gb": 80.0}


def _run(system, pair, axis=None):
    over = () if axis is None else ((*axis.split(".", 1), CHANGES[axis]),)
    r = simulate(system, pair, "adaedl", tokens=24, offload=True, seed=1, overrides=over,
                 acceptance=0.7)
    return (r.time_s, r.energy_mj, r.verifications)


@pytest.mark.parametrize("system", sorted(claims.READS))
def test_a_system_reads_only_its_axes(system):
    pair = "palm"             # does not fit the GPU's 16 GB (nor its target): gpu.mem_gb matters
    base = _run(system, pair)
    for axis in CHANGES:
        changed = _run(system, pair, axis)
        if axis in claims.READS[system]:
            assert changed != base, (system, axis)      # the control: the axis does matter
        else:
            assert changed == base, (system, axis)


def test_points_share_runs_of_systems_that_do_not_read_them():
    kw = {"pairs": ("opt",), "policies": ("adaedl",), "seeds": [0], "tokens": 16}
    systems = (("ahasd", "tvc"), ("gpu", None))
    a = dict((r["system"], claims.run_key(c)) for r, c in
             claims.point_cells({"gpu.mem_bw_gbps": 256.0}, systems, **kw))
    b = dict((r["system"], claims.run_key(c)) for r, c in
             claims.point_cells({"pim.units": 64}, systems, **kw))
    s = dict((r["system"], claims.run_key(c)) for r, c in claims.point_cells({}, systems, **kw))
    assert a["ahasd"] == s["ahasd"] != b["ahasd"]
    assert b["gpu"] == s["gpu"] != a["gpu"]


def test_parse_axis():
    assert claims.parse_axis("pim.units=64, 16") == ("pim.units", (16, 64))
    assert claims.parse_axis("acceptance=0.9,0.45") == ("acceptance", (0.45, 0.9))
    for bad, word in (("nope=1", "unknown axis 'nope'"), ("acceptance=1.5", "[0, 1]"),
                      ("pim.units=17", "not 17"), ("gpu.mem_gb=x", "'x' is not a number"),
                      ("pim.units", "NAME=V1,V2")):
        with pytest.raises(ValueError, match=None) as e:
            claims.parse_axis(bad)
        assert word in str(e.value) and "\n" not in str(e.value)
    assert math.isclose(claims.parse_axis("gpu.mem_gb=8")[1][0], 8.0)
