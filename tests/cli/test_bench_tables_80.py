"""Issue 23, point 3, for ``ahasd bench``: every benchmark's tables read at 80 columns in a pipe.
Each bench's printer is fed the figures of a saved run (tests/cli/data/saved_benches.json: the
``benches`` of ``ahasd bench NAME --quick --json`` and ``ahasd specla bench --json``; nothing is
measured here) with COLUMNS=80 into captured (non-terminal) output: no line is over 80 characters, and every figure the
table shows appears whole (the formats below are written out independently of the printers)."""

import importlib
import json
import re
from pathlib import Path

import pytest

SAVED = json.loads((Path(__file__).parent / "data" / "saved_benches.json").read_text(encoding="utf-8"))


def whole(text, figure):
    """``figure`` appears in ``text`` not as part of a longer number."""
    return re.search(r"(?<![\d.,])" + re.escape(figure) + r"(?![\d,]|\.\d)", text) is not None


def _edc(f):
    keys = ("golden_committed", "golden_anchor", "rtl")
    return ([f"{f[k + '_events_per_s']:,.0f}" for k in keys] + [f"{f[k + '_events_per_cpu_s']:,.0f}" for k in keys]
            + [f"{f['events']:,}", f"{f['golden_replay_peak_mb']:.0f}", f"{f['rtl_replay_peak_mb']:.0f}"])


def _tvc(f):
    out = [f"{f['transactions']:,}", f"{f['decisions']:,}", f"{f['rtl_cycles']:,}",
           f"{f['decides_delayed_by_records']:,}"]
    for key in ("decision_latency_cycles", "record_latency_cycles", "decide_wait_cycles"):
        s = f[key]
        out += [str(s["min"]), "%.2f" % s["mean"], str(s["max"]), str(s["most_common"])]
    return out + [f"{round(f[k + '_events_per_s']):,}" for k in ("golden", "rtl")]


def _gemv(f):
    out = []
    for c in f["cases"]:
        out += [c["layer"], "%.3f" % c["macs_per_cycle"], "%.4f" % c["efficiency"], "%.4f" % c["efficiency_raw"],
                "%.3f" % c["raw_bound_macs_per_cycle"], f"{c['cycles']:,}", f"{c['refpb'] + c['refab']:,}"]
    return out


def _queues(f):
    out = []
    for data in f["clocks"].values():
        for q in data["queues"].values():
            out += ["%.3f" % q["per_write_cycle"], "%.3f" % q["per_read_cycle"], "%.2f" % q["first_latency_ns"]]
        out += [str(data["squash"]["pim_cycles_to_producer"]), str(data["squash"]["npu_cycles_to_next_squash"])]
    return out + [str(v) for v in f["gts"].values() if isinstance(v, int)]


def _decode(f):
    out = [f"{round(f[k + '_tokens_per_s']):,}" for k in ("autoregressive_target", "speculative_sampled",
                                                          "speculative_greedy")]
    for r in f["policies"]:
        out += [r["policy"], "%.3f" % r["acceptance_rate"], "%.2f" % r["tokens_per_verification"],
                "%.2fx" % r["speedup_vs_autoregressive"]]
    return out + ["%.3f" % f["agreement"]["mean_accept_prob"]]


def _rtl_timing(f):
    out = [str(f["edc_cycles"]), str(f["tvc_cycles"])]
    for op in f["aau"].values():
        out += ["%.4f" % op["cycles_per_elem"]] + [f"{n}: {c}" for n, c in op["points"]]
    return out


def _system(f):
    out = [f"{round(r['simulated_tok_per_wall_s']):,}" for r in f["runs"].values()]
    for p in f["pairs"].values():
        out += ["%.3f" % p["acceptance_rate"], "%.2f" % p["mean_draft_entropy_nats"]]
    return out


def _specla(f):
    out = []
    for device in ("h100", "pim"):
        for lo, hi in f["ranges"][device].values():
            out.append("%.2f-%.2fx" % (lo, hi))
    for op in f["operations"]["pim"].values():
        out.append(f"{round(op['cycles']):,}")
    return out + ["%.3fx" % v for v in f["max_speedup"].values()]


def _acceptance(f):
    out = []
    for r in list(f["pairs"].values()):
        out += [r["golden"]] + ["%.3f" % p["acceptance_rate"] for p in r["policies"].values()]
        out += ["%.2f" % p["mean_draft_len"] for p in r["policies"].values()]
        out += ["%.3f" % a for a in r["adaedl_seeds"]]
    out += ["%.3f" % a["acceptance_rate"] for a in f["authors_llama2"].values()]
    return out + ["%.3f" % a for s in f["sensitivity"].values() for a in s.values()]


def _state_commit(f):
    out = []
    for c in f["cases"]:
        out += [c["head"], f"{c['cycles']:,}", "%.4f" % c["efficiency"], "%.4f" % c["efficiency_with_load"],
                f"{c['exposed_load_cycles']:,}"]
    return out


#: bench -> (printer module, figures shown)
BENCHES = {"edc": ("ahasd.bench.edc", _edc), "tvc": ("ahasd.bench.tvc", _tvc),
           "gemv": ("ahasd.bench.gemv", _gemv), "queues": ("ahasd.bench.queues", _queues),
           "decode": ("ahasd.bench.decode", _decode), "rtl-timing": ("ahasd.bench.rtl_timing", _rtl_timing),
           "system": ("ahasd.bench.system", _system), "specla": ("ahasd.bench.specla", _specla),
           "acceptance": ("ahasd.bench.acceptance", _acceptance),
           "state-commit": ("ahasd.bench.state_commit", _state_commit)}


@pytest.mark.parametrize("name", sorted(BENCHES))
def test_bench_table_at_80_columns(capsys, monkeypatch, name):
    module, shown = BENCHES[name]
    monkeypatch.setenv("COLUMNS", "80")
    # The state-commit table is the "rtl" part of a saved `specla bench --rtl` run.
    figures = SAVED["specla"]["rtl"] if name == "state-commit" else SAVED[name]
    importlib.import_module(module).print_figures(figures)
    text = capsys.readouterr().out
    assert text.strip()
    too_long = [line for line in text.splitlines() if len(line) > 80]
    assert too_long == [], too_long
    missing = [figure for figure in shown(figures) if not whole(text, figure)]
    assert missing == [], (missing, text)


def test_every_bench_is_checked():
    from ahasd.commands.bench import BENCHES as REGISTERED
    assert set(REGISTERED) | {"specla"} <= set(BENCHES), sorted(set(REGISTERED) - set(BENCHES))
