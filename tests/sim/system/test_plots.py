"""The grid's plots (issue 21 point 3) on a hand-made grid: every data function against values
worked out here, every figure read back (axes, units in the labels, series, tick text at least
8 pt, linear axes where asked), the files written, the timeline's window and marks."""

import math
import statistics

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.container import BarContainer, ErrorbarContainer  # noqa: E402

from ahasd.sim.system import plots  # noqa: E402
from ahasd.sim.system.config import load_config  # noqa: E402
from ahasd.sim.system.report import GRID_SYSTEMS, PAPER, key  # noqa: E402

ACC = "ngram5-5b"
PAIRS = ("opt", "llama2")
POLICIES = ("adaedl", "svip")
STEP_THR = {"async": 10.0, "aau": 11.0, "edc": 13.2, "tvc": 13.2}   # tok/s, opt adaedl


def row(system, ablation, pair, policy, acc=ACC, *, thr, eff, offloaded=(), **extra):
    npu_only = system in ("gpu", "phone-gpu", "npu-lpddr5")
    dev = {"gpu": "gpu", "phone-gpu": "phone-gpu", "npu-lpddr5": "npu"}.get(system)
    breakdown = ({dev: {"verify_s": 4.0, "draft_useful_s": 5.0, "draft_squashed_s": 0.0,
                        "stall_memory_s": 0.0, "idle_s": 1.0}} if npu_only else
                 {"npu": {"verify_s": 6.0, "wait_redraft_s": 2.0, "wait_edc_s": 1.0,
                          "stall_memory_s": 0.5, "other_s": 0.5},
                  "pim": {"draft_useful_s": 5.0, "draft_squashed_s": 3.0, "preverify_s": 1.0,
                          "idle_s": 1.0}})
    r = {"cell": {"system": system, "ablation": ablation or "tvc", "pair": pair,
                  "policy": policy, "acceptance_pair": acc},
         "throughput_tok_s": thr, "tokens_per_mj": eff, "tokens": 100, "time_s": 10.0,
         "verifications": 40, "offloaded": list(offloaded), "label": system,
         "acceptance_rate": 0.7, "breakdown_s": breakdown,
         "devices": {d: {"busy_s": 8.0, "idle_s": 2.0, "stall_memory_s": 0.0}
                     for d in breakdown},
         "energy_breakdown_mj": {"dynamic_npu": 600.0, "background_npu": 200.0,
                                 "controller": 1.0},
         "derived": {"pim_mac_per_s": 1.0e11, "pim_bytes_per_s": 1.0e11}}
    r.update(extra)
    return r


def grid_rows():
    rows = []
    for i, p in enumerate(PAIRS):
        for j, q in enumerate(POLICIES):
            scale = 1 + i + 2 * j             # every cell its own figures
            for system, abl in GRID_SYSTEMS:
                k = key(system, abl)
                thr = STEP_THR[abl] * scale if system == "ahasd" else 5.0 * scale
                # llama2 offloads GPU-only and the async step only (a mixed ratio each)
                off = ["x"] if p == "llama2" and k in ("gpu", "ahasd-async") else []
                rows.append(row(system, abl, p, q, thr=thr, eff=thr / 10, offloaded=off))
    for acc, ahasd_thr in (("ngram3-5", 6.0), ("ngram5-5x", 8.0)):
        for p in PAIRS:
            rows.append(row("ahasd", "tvc", p, "adaedl", acc, thr=ahasd_thr, eff=1.0,
                            acceptance_rate=0.4 if acc == "ngram3-5" else 0.8))
            rows.append(row("npu-lpddr5", None, p, "adaedl", acc, thr=4.0, eff=1.0))
    return rows


def grid():
    return plots._idx(grid_rows()), PAIRS, POLICIES, ACC


def read_back(fig):
    """Every axis of ``fig``: its labels, its tick labels' sizes and its scales."""
    fig.canvas.draw()
    out = []
    for ax in fig.axes:
        ticks = ax.get_xticklabels() + ax.get_yticklabels()
        out.append({"x": ax.get_xlabel(), "y": ax.get_ylabel(), "title": ax.get_title(),
                    "tick_pt": min((t.get_fontsize() for t in ticks if t.get_text()),
                                   default=99),
                    "scales": (ax.get_xscale(), ax.get_yscale()),
                    "legend": [t.get_text() for t in ax.get_legend().get_texts()]
                    if ax.get_legend() else []})
    return out


def check_legible(fig):
    """Tick text at least 8 pt, a y label with a unit in parentheses on every axis, and on a
    log axis a major tick at every decade of its view."""
    for a, ax in zip(read_back(fig), fig.axes):
        assert a["tick_pt"] >= 8, a
        assert "(" in a["y"] and a["y"].endswith(")"), a
        for axis, scale in zip((ax.xaxis, ax.yaxis), a["scales"]):
            if scale == "log":
                lo, hi = sorted(axis.get_view_interval())
                ticks = axis.get_majorticklocs()
                for e in range(math.ceil(math.log10(lo)), math.floor(math.log10(hi)) + 1):
                    assert any(math.isclose(t, 10 ** e) for t in ticks), (a, e)


@pytest.fixture(scope="module")
def figs():
    made = plots.figures(grid_rows(), pairs=PAIRS, policies=POLICIES, acceptance_pair=ACC)
    for fig in made.values():
        plots._style(fig)
    yield made
    for fig in made.values():
        plt.close(fig)


def bar_heights(ax):
    return [p.get_height() for c in ax.containers if isinstance(c, BarContainer) for p in c]


# -- ablation ------------------------------------------------------------------------------

def test_ablation_data_over_the_step_before_and_async():
    d = plots.ablation_data(grid())["throughput_tok_s"]
    got = {(r["step"], r["over"]): r for r in d}
    # every cell has the same step ratios (each cell's figures are STEP_THR times its scale)
    assert got[("aau", "prev")]["mean"] == pytest.approx(1.1)
    assert got[("edc", "prev")]["mean"] == pytest.approx(1.2)
    assert got[("tvc", "prev")]["mean"] == pytest.approx(1.0)
    assert got[("tvc", "async")]["mean"] == pytest.approx(1.32)
    assert len(got[("edc", "async")]["cells"]) == 4
    assert got[("aau", "prev")]["paper"] == pytest.approx(2.7 / 2.2)
    assert got[("tvc", "async")]["paper"] == pytest.approx(3.8 / 2.2)
    # llama2's async step offloads and its other steps do not: only ratios over async mix
    assert got[("aau", "prev")]["mixed"] and got[("tvc", "async")]["mixed"]
    assert not got[("edc", "prev")]["mixed"] and not got[("tvc", "prev")]["mixed"]
    e = {(r["step"], r["over"]): r["paper"] for r in plots.ablation_data(grid())["tokens_per_mj"]}
    assert e[("edc", "prev")] == pytest.approx(4.5 / 2.6)


def test_ablation_figure_is_linear_with_paper_markers(figs):
    fig = figs["ablation.png"]
    check_legible(fig)
    for a in read_back(fig):
        assert a["scales"] == ("linear", "linear")
        assert a["x"] == "AHASD step"
        assert {"over the step before", "over async", "paper"} <= set(a["legend"])
    ax = fig.axes[0]
    assert bar_heights(ax) == pytest.approx([1.1, 1.2, 1.0, 1.1, 1.32, 1.32])
    paper = [y for line in ax.get_lines() if line.get_marker() == "D" for y in line.get_ydata()]
    assert paper == pytest.approx([2.7 / 2.2, 3.4 / 2.7, 3.8 / 3.4, 2.7 / 2.2, 3.4 / 2.2,
                                   3.8 / 2.2])
    hatched = [p.get_hatch() for c in ax.containers if isinstance(c, BarContainer) for p in c]
    # over the step before: +AAU mixes (llama2's async offloads), +EDC and +TVC do not; every
    # bar over async mixes
    assert hatched == ["//", None, None, "//", "//", "//"]


# -- round breakdown -----------------------------------------------------------------------

def test_round_breakdown_is_per_verification_round_in_ms(figs):
    idx, pairs, _, acc = grid()
    steps = [key(s, a) for s, a in GRID_SYSTEMS]
    d = plots.round_breakdown_data(idx, pairs, "adaedl", acc, steps)
    bars = {(s, dev): parts for s, dev, parts in d["opt"]}
    assert bars[("ahasd-tvc", "npu")]["wait_redraft_s"] == pytest.approx(2.0 / 40 * 1e3)
    assert bars[("ahasd-tvc", "pim")]["draft_squashed_s"] == pytest.approx(3.0 / 40 * 1e3)
    assert ("npu-lpddr5", "npu") in bars and ("gpu", "gpu") in bars
    assert len(d["opt"]) == 3 + 2 * 5            # 3 systems with one device, 5 with two
    fig = figs["round_breakdown.png"]
    check_legible(fig)
    a = read_back(fig)
    assert a[0]["y"] == "time per verification round (ms)"
    assert {"verify", "wait: redraft after a rejection", "wait: after an EDC stop",
            "memory stall", "drafting, kept", "drafting, squashed", "pre-verification",
            "idle"} <= set(a[0]["legend"])
    # the stacks of AHASD's NPU add up to its time per round: 10 s / 40 rounds
    ax = fig.axes[0]
    x = [t.get_text() for t in ax.get_xticklabels()].index("AHASD\nnpu")
    total = sum(p.get_height() for c in ax.containers for p in c
                if abs(p.get_x() + p.get_width() / 2 - x) < 1e-9)
    assert total == pytest.approx(250.0)


# -- vs NPU + LPDDR5 and intervals ---------------------------------------------------------

def test_ratio_interval_from_seeds_and_from_bounds():
    a = {"t_seeds": [2.0, 4.0, 6.0]}
    b = {"t_seeds": [1.0, 2.0, 2.0]}
    ratios = [2.0, 2.0, 3.0]
    m, s = statistics.fmean(ratios), statistics.stdev(ratios)
    half = 4.303 * s / math.sqrt(3)                # t(0.975, 2 degrees of freedom)
    assert plots.ratio_interval(a, b, "t") == pytest.approx((m - half, m + half))
    a = {"t_ci95_low": 9.0, "t_ci95_high": 12.0}
    b = {"t_ci95_low": 3.0, "t_ci95_high": 4.0}
    assert plots.ratio_interval(a, b, "t") == pytest.approx((9 / 4, 12 / 3))
    assert plots.ratio_interval({"t": 1.0}, {"t": 2.0}, "t") is None


def test_ratio_interval_reads_the_seeded_rows_of_reproduce():
    # a row of the seeded grid: per_seed values with their seeds, intervals per metric
    a = {"seeds": [0, 1, 2], "per_seed": {"t": [2.0, 4.0, 6.0]},
         "intervals": {"t": {"mean": 4.0, "ci95_low": 1.0, "ci95_high": 7.0, "n_seeds": 3}}}
    b = {"seeds": [0, 1, 2], "per_seed": {"t": [1.0, 2.0, 2.0]},
         "intervals": {"t": {"mean": 5 / 3, "ci95_low": 0.5, "ci95_high": 2.5, "n_seeds": 3}}}
    ratios = [2.0, 2.0, 3.0]
    half = 4.303 * statistics.stdev(ratios) / math.sqrt(3)
    m = statistics.fmean(ratios)
    assert plots.ratio_interval(a, b, "t") == pytest.approx((m - half, m + half))
    # other seeds cannot be paired: the bounds, a over b's
    b["seeds"] = [3, 4, 5]
    assert plots.ratio_interval(a, b, "t") == pytest.approx((1.0 / 2.5, 7.0 / 0.5))
    # one seed: no interval
    one = {"seeds": [0], "per_seed": {"t": [2.0]},
           "intervals": {"t": {"mean": 2.0, "ci95_low": None, "ci95_high": None, "n_seeds": 1}}}
    assert plots.ratio_interval(one, one, "t") is None


def test_vs_npu_plain_bars_without_intervals(figs):
    d = plots.vs_npu_data(grid())
    assert [(x["pair"], x["policy"]) for x in d] == [(p, q) for p in PAIRS for q in POLICIES]
    # AHASD 13.2 x scale over NPU + LPDDR5's 5 x scale; energy per token the inverse
    assert d[0]["throughput"] == pytest.approx(13.2 / 5.0)
    assert d[0]["energy"] == pytest.approx(5.0 / 13.2)
    assert d[0]["throughput_ci"] is None
    fig = figs["vs_npu_lpddr5.png"]
    check_legible(fig)
    a = read_back(fig)
    assert "paper 3.1x" in a[0]["legend"] and "paper 0.48x" in a[1]["legend"]
    assert not any(isinstance(c, ErrorbarContainer) for ax in fig.axes for c in ax.containers)
    assert bar_heights(fig.axes[0]) == pytest.approx([x["throughput"] for x in d])


def test_vs_npu_draws_intervals_when_the_rows_carry_them():
    rows = grid_rows()
    for r in rows:
        v = r["throughput_tok_s"]
        r["throughput_tok_s_ci95_low"], r["throughput_tok_s_ci95_high"] = 0.9 * v, 1.1 * v
    idx = plots._idx(rows)
    d = plots.vs_npu_data((idx, PAIRS, POLICIES, ACC))
    assert d[0]["throughput_ci"] == pytest.approx((13.2 * 0.9 / 5.5, 13.2 * 1.1 / 4.5))
    assert d[0]["energy_ci"] is None
    fig = plots._vs_npu_plot(plt, d)
    try:
        assert any(isinstance(c, ErrorbarContainer) for c in fig.axes[0].containers)
        assert "95 % interval" in read_back(fig)[0]["legend"]
    finally:
        plt.close(fig)


# -- energy breakdown ----------------------------------------------------------------------

def test_energy_breakdown_per_token_with_the_papers_marker(figs):
    idx, pairs, _, acc = grid()
    steps = [key(s, a) for s, a in GRID_SYSTEMS]
    d = plots.energy_breakdown_data(idx, pairs, "adaedl", acc, steps)
    bars = dict(d["opt"]["bars"])
    assert bars["ahasd-tvc"] == pytest.approx({"dynamic_npu": 6.0, "background_npu": 2.0,
                                               "controller": 0.01})
    assert d["opt"]["paper_ahasd"] == pytest.approx(PAPER["energy_per_token_vs_npu_lpddr5"]
                                                    * 8.01)
    fig = figs["energy_breakdown.png"]
    check_legible(fig)
    a = read_back(fig)
    assert all(x["y"] == "energy per token (mJ)" for x in a)
    assert {"dynamic: NPU", "background: NPU", "controller",
            "paper: 0.48 x NPU+LPDDR5"} <= set(a[-1]["legend"])


# -- sensitivity ---------------------------------------------------------------------------

def test_sensitivity_cells_and_data():
    cells = plots.sensitivity_cells("opt", tokens=64, seed=3, overrides=("npu.int8_tops=20",))
    half = load_config().pim.efficiency_raw / 2
    assert [c["overrides"] for c in cells] == [
        ("npu.int8_tops=20", f"pim.efficiency_raw={half!r}"),
        ("npu.int8_tops=20", "pim.units=32"), ("npu.int8_tops=20", "pim.units=64")]
    assert all(c["system"] == "ahasd" and c["seed"] == 3 and c["tokens"] == 64 for c in cells)
    idx = plots._idx(grid_rows())
    fast = row("ahasd", "tvc", "opt", "adaedl", thr=20.0, eff=1.0,
               derived={"pim_mac_per_s": 4.0e11, "pim_bytes_per_s": 2.56e11})
    d = plots.sensitivity_data(idx, PAIRS, ACC, [fast])
    # shipped: 13.2 / 5 at 100 G MAC/s; the fast point capped at 256 G MAC/s
    assert [p[0] for p in d["pim"]] == pytest.approx([100.0, 256.0])
    assert [p[1] for p in d["pim"]] == pytest.approx([13.2 / 5, 4.0])
    assert [p[2] for p in d["pim"]] == [True, False]
    opt = d["acceptance"]["opt"]
    assert [p[0] for p in opt] == [0.4, 0.7, 0.8]
    assert [p[1] for p in opt] == pytest.approx([1.5, 13.2 / 5, 2.0])
    assert [p[2] for p in opt] == [False, True, False]
    fig = plots._sensitivity_plot(plt, d)
    try:
        plots._style(fig)
        check_legible(fig)
        a = read_back(fig)
        assert a[0]["x"] == "PIM rate under the internal bandwidth cap (G MAC/s)"
        assert a[1]["x"].startswith("acceptance rate")
        assert "shipped" in a[0]["legend"] and "paper 3.1x" in a[1]["legend"]
    finally:
        plt.close(fig)


# -- timeline ------------------------------------------------------------------------------

RUN = {"time_s": 10.0, "label": "AHASD", "pair": "opt", "policy": "adaedl",
       "timeline": [("pim", "draft", 0.0, 1.0), ("npu", "verify", 1.0, 3.5),
                    ("pim", "draft", 1.0, 3.5), ("pim", "draft", 3.5, 6.5),
                    ("npu", "verify", 6.5, 10.0)],
       "timeline_marks": [("npu", "reject", 3.5), ("pim", "squash", 3.5),
                          ("npu", "accept", 10.0)]}


def test_timeline_whole_and_window():
    d = plots.timeline_data(RUN)
    assert (d["start"], d["end"], d["whole"]) == (0.0, 10.0, True)
    assert len(d["spans"]) == 5 and len(d["marks"]) == 3
    w = plots.timeline_data(RUN, (2.0, 4.0))
    assert not w["whole"]
    assert w["spans"] == [("npu", "verify", 2.0, 3.5), ("pim", "draft", 2.0, 3.5),
                          ("pim", "draft", 3.5, 4.0)]
    assert w["marks"] == [("npu", "reject", 3.5), ("pim", "squash", 3.5)]
    assert plots.timeline_data(RUN, (8.0, 50.0))["end"] == 10.0
    with pytest.raises(ValueError, match="12:13"):
        plots.timeline_data(RUN, (12.0, 13.0))


def test_timeline_figure_names_its_window_and_marks():
    for window, title in ((None, "whole run"), ((2.0, 4.0), "window 2-4 s of 10.0 s")):
        fig = plots.timeline_figure(plt, RUN, window)
        try:
            plots._style(fig)
            a = read_back(fig)[0]
            assert title in a["title"] and a["x"] == "time (s)" and a["tick_pt"] >= 8
            assert {"draft", "verify", "accept", "reject", "squash"} <= set(a["legend"])
            assert fig.axes[0].get_xlim() == ((0.0, 10.0) if window is None else window)
        finally:
            plt.close(fig)


@pytest.mark.parametrize("text", ["3", "a:b", "5:2", "-1:2", "1:inf"])
def test_parse_window_rejects_bad_text(text):
    with pytest.raises(ValueError, match="--window"):
        plots.parse_window(text)
    assert plots.parse_window("1.5:3") == (1.5, 3.0)


# -- the files -----------------------------------------------------------------------------

def test_write_plots_writes_every_file(tmp_path):
    names = plots.write_plots(grid_rows(), tmp_path, pairs=PAIRS, policies=POLICIES,
                              acceptance_pair=ACC, timeline_run=RUN, window=(2.0, 4.0))
    assert set(names) == {"ablation.png", "ahasd_vs_specpim.png", "idle.png",
                          "round_breakdown.png", "vs_npu_lpddr5.png", "energy_breakdown.png",
                          "sensitivity.png", "timeline.png"}
    for n in names:
        img = matplotlib.image.imread(tmp_path / n)
        assert img.shape[0] >= 300 and img.shape[1] >= 600, n     # 100 dpi, >= 6 x 3 in


def test_every_grid_figure_is_legible(figs):
    for fig in figs.values():
        check_legible(fig)


def test_reproduce_rejects_a_bad_window_before_any_work(tmp_path, capsys):
    from ahasd.cli import main
    assert main(["reproduce", "--out", str(tmp_path / "g"), "--window", "4:2"]) == 2
    err = capsys.readouterr().err
    assert "--window 4:2" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "g").exists()
