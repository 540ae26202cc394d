"""Seeds and intervals: the t quantile against published tables, the t-interval, means over
per-seed trees, the grid's headlines per seed, ``ahasd simulate --seeds``."""

import json
import math
import statistics

import pytest

from ahasd.cli import main
from ahasd.sim.system import report
from ahasd.sim.system import seeds as S
from ahasd.sim.system.runner import simulate

#: two-sided 95 % t quantiles t(0.975, df) as printed in standard tables (e.g. NIST/SEMATECH
#: e-Handbook of Statistical Methods, 1.3.6.7.2), 3 decimals
PUBLISHED_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365,
                 8: 2.306, 9: 2.262, 10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042, 60: 2.000,
                 100: 1.984}


@pytest.mark.parametrize("df, t", sorted(PUBLISHED_975.items()))
def test_t_quantile_matches_the_published_table(df, t):
    assert round(S.t_quantile(df), 3) == t


def test_t_quantile_other_levels_and_limits():
    assert round(S.t_quantile(4, 0.95), 3) == 2.132        # one-sided 95 %, same table
    assert round(S.t_quantile(4, 0.995), 3) == 4.604
    assert round(S.t_quantile(1, 0.9), 3) == 3.078
    assert S.t_quantile(1) == pytest.approx(math.tan(math.pi * 0.475), rel=1e-10)  # Cauchy
    assert S.t_quantile(2) == pytest.approx(2 * 0.95 / math.sqrt(2 * (1 - 0.95 ** 2)), rel=1e-10)
    assert abs(S.t_quantile(10000) - 1.959964) < 1e-3      # the normal's 1.96
    with pytest.raises(ValueError, match="degrees of freedom must be a positive integer"):
        S.t_quantile(0)
    with pytest.raises(ValueError, match="0.4"):
        S.t_quantile(3, 0.4)


def test_interval_is_the_t_interval():
    iv = S.interval([1.0, 2.0, 3.0, 4.0, 5.0])
    half = 2.776445105 * math.sqrt(2.5) / math.sqrt(5)  # t(0.975, 4) x s / sqrt(n)
    assert iv["n_seeds"] == 5 and iv["mean"] == 3.0
    assert iv["ci95_low"] == pytest.approx(3 - half, rel=1e-9)
    assert iv["ci95_high"] == pytest.approx(3 + half, rel=1e-9)
    assert S.interval([2.5]) == {"mean": 2.5, "ci95_low": None, "ci95_high": None, "n_seeds": 1}
    assert S.interval([None, 4.0, None, 6.0])["n_seeds"] == 2
    assert S.interval([None])["mean"] is None and S.interval([])["n_seeds"] == 0
    same = S.interval([7, 7, 7])
    assert same["mean"] == 7 and isinstance(same["mean"], int)
    assert same["ci95_low"] == same["ci95_high"] == 7


def test_excludes_one():
    assert S.excludes_one({"ci95_low": 1.01, "ci95_high": 2.0})
    assert S.excludes_one({"ci95_low": 0.5, "ci95_high": 0.99})
    assert not S.excludes_one({"ci95_low": 0.9, "ci95_high": 1.1})
    assert not S.excludes_one({"ci95_low": None, "ci95_high": None})


def test_combine_means_and_intervals_keep_the_shape():
    trees = [{"a": 1.0, "n": 3, "s": "x", "l": [1.0, None], "w": ["p", "q"], "b": True,
              "d": {"e": 2.0}},
             {"a": 3.0, "n": 3, "s": "x", "l": [2.0, None], "w": ["q", "r"], "b": True,
              "d": {"e": 4.0}}]
    means, ivs = S.combine(trees)
    assert means == {"a": 2.0, "n": 3, "s": "x", "l": [1.5, None], "w": ["p", "q", "r"],
                     "b": True, "d": {"e": 3.0}}
    assert set(ivs) == {"a", "n", "l", "d"}
    assert ivs["a"]["ci95_high"] == pytest.approx(
        2.0 + 12.706205 * statistics.stdev([1.0, 3.0]) / math.sqrt(2), rel=1e-6)
    assert ivs["l"][1] == {"mean": None, "ci95_low": None, "ci95_high": None, "n_seeds": 0}
    assert ivs["d"]["e"]["n_seeds"] == 2
    with pytest.raises(ValueError, match="at least one"):
        S.combine([])


def test_aggregate_and_paired_ratio():
    runs = [{"throughput_tok_s": 10.0, "config": {"k": 1}, "cell": {"seed": 0}},
            {"throughput_tok_s": 14.0, "config": {"k": 1}, "cell": {"seed": 1}}]
    d = S.aggregate_runs(runs, [0, 1])
    assert d["throughput_tok_s"] == 12.0 and d["n_seeds"] == 2 and d["seeds"] == [0, 1]
    assert d["cell"] == {"seed": 0} and "config" not in d["intervals"]
    with pytest.raises(ValueError, match="2 runs for 1 seeds"):
        S.aggregate_runs(runs, [0])
    # paired: the ratio of each seed's runs, not the ratio of the means
    r = S.paired_ratio([{"x": 2.0}, {"x": 6.0}], [{"x": 1.0}, {"x": 2.0}], "x")
    assert r["mean"] == 2.5
    assert S.paired_ratio([{"x": 2.0}, {"error": "e"}], [{"x": 1.0}, {"x": 2.0}], "x")[
        "n_seeds"] == 1
    a = {"seeds": [0, 1], "per_seed": {"x": [2.0, 6.0]}}
    b = {"seeds": [0, 1], "per_seed": {"x": [1.0, 2.0]}}
    assert S.row_ratio(a, b, "x") == r
    assert S.row_ratio({"error": "e"}, b, "x")["n_seeds"] == 0
    with pytest.raises(ValueError, match="different seeds"):
        S.row_ratio(a, {**b, "seeds": [0, 2]}, "x")
    assert S.seed_list(3, 2) == [3, 4]
    with pytest.raises(ValueError, match="seeds must be a positive integer, not 0"):
        S.seed_list(0, 0)


def _row(seed, system, ablation, thr, eff):
    return {"cell": {"seed": seed, "system": system, "ablation": ablation, "pair": "opt",
                     "policy": "adaedl", "acceptance_pair": report.ACCEPTANCE_PAIRS[0]},
            "throughput_tok_s": thr, "tokens_per_mj": eff, "acceptance_rate": 0.5}


def test_headlines_are_per_seed_then_combined():
    # AHASD over NPU + LPDDR5: seed 0 gives 2.0x, seed 1 3.0x, seed 2 2.5x (paired by seed)
    rows = []
    for s, (a, n) in enumerate([(20.0, 10.0), (30.0, 10.0), (25.0, 10.0)]):
        rows += [_row(s, "ahasd", "tvc", a, 1.0), _row(s, "npu-lpddr5", "tvc", n, 2.0)]
    h = report.headlines(rows, pairs=("opt",), policies=("adaedl",))
    assert h["n_seeds"] == 3 and h["seeds"] == [0, 1, 2]
    assert h["vs_npu-lpddr5"]["throughput"]["mean"] == pytest.approx(2.5)
    iv = h["intervals"]["vs_npu-lpddr5"]["throughput"]["mean"]
    half = 4.302652730 * statistics.stdev([2.0, 3.0, 2.5]) / math.sqrt(3)
    assert (iv["ci95_low"], iv["ci95_high"]) == pytest.approx((2.5 - half, 2.5 + half))
    assert h["energy_per_token_vs_npu-lpddr5"] == 2.0
    assert h["grid_vs_npu-lpddr5"]["opt"]["throughput"] == [pytest.approx(2.5)]
    assert h["vs_gpu"]["throughput"]["mean"] is None         # no GPU rows
    md = report.summary_markdown(h, policies=("adaedl",))
    lo, hi = 2.5 - half, 2.5 + half
    assert f"| throughput vs NPU+LPDDR5 (mean) | 2.50 [{lo:.2f}, {hi:.2f}] | 3.1 | 0.81 | yes |" \
        in md
    assert "| energy per token vs NPU+LPDDR5 (mean) | 2.00 [2.00, 2.00] | 0.48 |" in md
    assert "3 decoding seeds (0, 1, 2)" in md and "t quantile 4.303" in md


def test_an_interval_that_holds_one_is_not_significant():
    rows = []
    for s, a in enumerate([8.0, 12.0, 9.0]):
        rows += [_row(s, "ahasd", "tvc", a, 1.0), _row(s, "npu-lpddr5", "tvc", 10.0, 1.0)]
    h = report.headlines(rows, pairs=("opt",), policies=("adaedl",))
    md = report.summary_markdown(h, policies=("adaedl",))
    line = next(x for x in md.splitlines() if x.startswith("| throughput vs NPU+LPDDR5"))
    assert line.endswith("| no |")


def sim_json(capsys, *argv):
    assert main(["simulate", "--tokens", "24", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_simulate_one_seed_is_todays_json_plus_n_seeds(capsys):
    d = sim_json(capsys, "--seed", "3")
    direct = simulate("ahasd", "opt", "adaedl", tokens=24, seed=3).as_dict()
    assert {k: d[k] for k in direct} == json.loads(json.dumps(direct))
    assert set(d) - set(direct) == {"n_seeds", "seeds", "intervals"}
    assert d["n_seeds"] == 1 and d["seeds"] == [3]
    assert d["intervals"]["throughput_tok_s"] == {"mean": direct["throughput_tok_s"],
                                                  "ci95_low": None, "ci95_high": None,
                                                  "n_seeds": 1}


def test_simulate_seeds_are_means_with_intervals(capsys):
    d = sim_json(capsys, "--seeds", "3", "--seed", "1", "--system", "npu-lpddr5")
    direct = [simulate("npu-lpddr5", "opt", "adaedl", tokens=24, seed=s).as_dict()
              for s in (1, 2, 3)]
    thr = [r["throughput_tok_s"] for r in direct]
    assert len(set(thr)) > 1                        # the seeds do decode differently
    assert d["n_seeds"] == 3 and d["seeds"] == [1, 2, 3]
    assert d["throughput_tok_s"] == pytest.approx(statistics.fmean(thr), rel=1e-12)
    half = 4.302652730 * statistics.stdev(thr) / math.sqrt(3)
    iv = d["intervals"]["throughput_tok_s"]
    assert (iv["ci95_low"], iv["ci95_high"]) == pytest.approx(
        (statistics.fmean(thr) - half, statistics.fmean(thr) + half), rel=1e-9)
    busy = [r["devices"]["npu"]["busy_s"] for r in direct]
    assert d["devices"]["npu"]["busy_s"] == pytest.approx(statistics.fmean(busy))
    assert d["tokens"] == 24 and d["config"] == direct[0]["config"]
    assert "derived" not in d["intervals"]


def test_simulate_seeds_text_and_errors(capsys):
    assert main(["simulate", "--tokens", "24", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "mean over 2 seeds (0, 1)" in out and "tok/s" in out and "[" in out
    assert main(["simulate", "--seeds", "0"]) == 2
    assert "--seeds" in capsys.readouterr().err
