"""``ahasd specla verify``: the JSON case format, the three modes, and strict reading."""

import json
import re

import numpy as np
import pytest

from ahasd.cli import main
from ahasd.sim.specla.recurrence import gdn_step


def random_case(seed, n=7, d_k=5, d_v=3):
    rng = np.random.default_rng(seed)
    parents = [-1] + [int(rng.integers(-1, i)) for i in range(1, n)]
    nodes = [{"parent": p, "k": rng.normal(size=d_k).tolist(), "v": rng.normal(size=d_v).tolist(),
              "q": rng.normal(size=d_k).tolist(), "beta": float(rng.uniform()),
              "g": float(-rng.exponential())} for p in parents]
    end = n - 1
    accept = []
    while end >= 0:
        accept.append(end)
        end = parents[end]
    return {"S": rng.normal(size=(d_k, d_v)).tolist(), "nodes": nodes, "accept": accept[::-1]}


def run(tmp_path, capsys, case, *args):
    path = tmp_path / "case.json"
    path.write_text(case if isinstance(case, str) else json.dumps(case))
    status = main(["specla", "verify", str(path), *args])
    out = capsys.readouterr()
    return status, out.out, out.err


def reference(case):
    """Independent: per node, the recurrence along its root path from S (q as given)."""
    S0 = np.array(case["S"])
    nodes = case["nodes"]

    def state_after(n):
        S = S0 if n < 0 else state_after(nodes[n]["parent"])
        if n >= 0:
            d = nodes[n]
            S, _, _ = gdn_step(S, np.array(d["q"]), np.array(d["k"]), np.array(d["v"]),
                               d["beta"], d["g"])
        return S
    outs = [state_after(n).T @ np.array(nodes[n]["q"]) for n in range(len(nodes))]
    return np.array(outs), state_after(case["accept"][-1]) if case["accept"] else S0


@pytest.mark.parametrize("seed", range(4))
def test_modes_agree_with_the_recurrence(tmp_path, capsys, seed):
    case = random_case(seed, n=3 + 4 * seed)
    want_out, want_state = reference(case)
    for mode in ("replay", "factor", "deferred"):
        status, out, err = run(tmp_path, capsys, case, "--mode", mode)
        assert status == 0 and err == ""
        got = json.loads(out)
        assert set(got) == {"outputs", "state"}
        o, s = np.array(got["outputs"]), np.array(got["state"])
        assert o.shape == want_out.shape and s.shape == want_state.shape
        assert np.linalg.norm(o - want_out) <= 1e-12 * np.linalg.norm(want_out)
        assert np.linalg.norm(s - want_state) <= 1e-12 * np.linalg.norm(want_state)


def test_empty_accept_and_no_nodes(tmp_path, capsys):
    case = {"S": [[1.5, -2]], "nodes": [], "accept": []}
    status, out, _ = run(tmp_path, capsys, case)
    assert status == 0 and json.loads(out) == {"outputs": [], "state": [[1.5, -2.0]]}


def bad(case, path, value):
    """``case`` with the item at ``path`` (keys/indices) replaced by ``value``."""
    case = json.loads(json.dumps(case))
    obj = case
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value
    return case


GOOD = random_case(9, n=4, d_k=3, d_v=2)
GOOD_TEXT = json.dumps(GOOD)


@pytest.mark.parametrize("case, message", [
    (bad(GOOD, ["nodes", 1, "k"], [1, 2]), r"nodes\[1\]\.k has 2 numbers; d_k \(from S\) is 3"),
    (bad(GOOD, ["nodes", 2, "v"], [1, 2, 3]),
     r"nodes\[2\]\.v has 3 numbers; d_v \(from S\) is 2"),
    (bad(GOOD, ["S", 1], [1.0]), r"S\[1\] has 1 numbers; d_v \(the length of S\[0\]\) is 2"),
    (bad(GOOD, ["nodes", 1, "parent"], 3),
     r"nodes: node 1: parent must be -1 or an earlier node \(0..0\), not 3 \(parents come "
     r"before children\)"),
    (bad(GOOD, ["accept"], [7]), r"accept\[0\] = 7 is not a node \(0..3\)"),
    (bad(GOOD, ["accept"], [0.0]), r"accept\[0\] must be a node index, not 0.0"),
    (bad(GOOD, ["accept"], 0), r"accept must be a list of node indices, not 0"),
    (bad(bad(GOOD, ["nodes", 1, "parent"], 0), ["accept"], [1]),
     r"accept is not a root path: node 1 \(accept\[0\]\) has parent 0, not the committed "
     r"state \(-1\)"),
    (bad(GOOD, ["accept"], [0, 0]), r"accept is not a root path: node 0 \(accept\[1\]\) has "
                                    r"parent -1, not node 0"),
    (GOOD_TEXT.replace(str(GOOD["nodes"][0]["beta"]), "NaN", 1),
     r"NaN is not a number this format accepts"),
    (GOOD_TEXT.replace(str(GOOD["S"][0][0]), "-Infinity", 1),
     r"-Infinity is not a number this format accepts"),
    (GOOD_TEXT.replace(str(GOOD["S"][0][0]), "1e999", 1), r"S\[0\]\[0\] must be finite, not inf"),
    (bad(GOOD, ["nodes", 0, "beta"], "0.5"), r'nodes\[0\]\.beta must be a number, not "0.5"'),
    (bad(GOOD, ["nodes", 0, "g"], True), r"nodes\[0\]\.g must be a number, not true"),
    (bad(GOOD, ["nodes", 0, "g"], 0.25), r"nodes\[0\]\.g is a log decay and must be <= 0, "
                                         r"not 0.25"),
    (bad(GOOD, ["nodes", 0, "parent"], 0.0), r"nodes\[0\]\.parent must be an integer, not 0.0"),
    (bad(GOOD, ["nodes", 0, "x"], 1), r"nodes\[0\] has unknown key 'x'"),
    (bad(GOOD, ["extra"], 1), r"the case has unknown key 'extra'"),
    ({"S": [[1]], "nodes": []}, r"the case lacks key 'accept'"),
    ('{"S": [[1]], "S": [[2]], "nodes": [], "accept": []}', r"duplicate key 'S'"),
    ({"S": [], "nodes": [], "accept": []}, r"S must be a non-empty list of non-empty rows"),
    ('{"S": [[1]], ', r"not valid JSON: "),
    ([1, 2], r"the case must be a JSON object, not \[1, 2\]"),
])
def test_malformed_cases_get_one_line_and_status_2(tmp_path, capsys, case, message):
    status, out, err = run(tmp_path, capsys, case)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("ahasd: error: ")
    assert re.search(message, err), err


def test_missing_file(capsys):
    assert main(["specla", "verify", "/nonexistent/case.json"]) == 2
    assert capsys.readouterr().err == "ahasd: error: no such case file: /nonexistent/case.json\n"


def test_bench_json_and_plot(tmp_path, capsys):
    assert main(["specla", "bench", "--json", "--out", str(tmp_path)]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert (tmp_path / "specla_speedup.png").stat().st_size > 10_000
    assert set(figures["ranges"]) == {"h100", "pim"}
    assert 0.3 < figures["crossing_alpha"]["deferred"] < 0.99
    # Acceptance of the golden traces spans the sweep and falls as the draft is perturbed more.
    acc = [t["acceptance"] for t in figures["traces"]]
    assert acc[0] > acc[-1] and min(acc) < 0.5 < max(acc)
