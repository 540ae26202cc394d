"""``ahasd bench tvc``: TVC decision and record latency in cycles, measured on the Verilated RTL,
and replay speed of the golden model and of the RTL path.

The workload is :func:`ahasd.sim.traces.tvc.realistic_trace` (speculative decoding rounds), run as
``ahasd tvc replay --rtl`` does: in batches on the Verilator harness, each transaction held on its
stream until ``ready`` on the C++ side. Latencies are counted in the
simulation (accept cycle to result cycle; record accept to ``ready`` again); rates are wall-clock
figures of this machine. Everything is printed, never asserted.
"""

import time
from collections import Counter
from statistics import mean

from ahasd.bench.memory import replay_memory
from ahasd.tables import print_table, print_text

__all__ = ["bench", "print_figures"]


def _rate(n, seconds):
    return n / seconds if seconds > 0 else float("inf")


def _spread(values):
    return {"min": min(values), "mean": mean(values), "max": max(values),
            "most_common": Counter(values).most_common(1)[0][0]} if values else {}


def bench(json_output=False, quick=False):
    from ahasd.cosim.tvc import replay_rtl
    from ahasd.sim.blocks.tvc import TVC
    from ahasd.sim.traces.tvc import apply, realistic_trace

    decisions = 500 if quick else 5_000
    ops = realistic_trace(decisions, seed=2024)
    figures = {"transactions": len(ops), "decisions": decisions,
               "records": sum(item["op"] == "record" for item in ops)}

    start, cpu = time.perf_counter(), time.process_time()
    model = TVC()
    golden = [d for d in (apply(model, item) for item in ops) if d is not None]
    figures["golden_events_per_s"] = _rate(len(ops), time.perf_counter() - start)
    figures["golden_events_per_cpu_s"] = _rate(len(ops), time.process_time() - cpu)

    start = time.perf_counter()
    replay_rtl(ops[:10])                       # compiles the model once (then cached)
    figures["rtl_build_s"] = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    rtl = replay_rtl(ops)
    figures["rtl_events_per_s"] = _rate(len(ops), time.perf_counter() - start)
    # CPU time of this process and of the harness process: the rate on an otherwise idle core.
    figures["rtl_events_per_cpu_s"] = _rate(len(ops), time.process_time() - cpu
                                            + rtl.simulator_cpu_s)
    figures["rtl_cycles"] = rtl.cycles
    figures["rtl_matches_golden"] = rtl.decisions == golden
    figures["rtl_cycles"] = rtl.cycles
    figures["decision_latency_cycles"] = _spread(rtl.decision_latency)
    figures["record_latency_cycles"] = _spread(rtl.record_latency)
    figures["decide_wait_cycles"] = _spread(rtl.decide_wait)
    figures["decides_delayed_by_records"] = sum(w > 0 for w in rtl.decide_wait)
    from ahasd.sim.traces.tvc import dump
    figures.update(replay_memory("tvc", [dump(ops)]))    # `ahasd tvc replay` of the same trace

    if not json_output:
        print_figures(figures)
    return figures


def print_figures(figures, console=None):
    """The TVC bench's tables and notes (``figures`` as :func:`bench` returns them)."""
    rows = []
    for label, key in (("decision latency (accept -> result)", "decision_latency_cycles"),
                       ("record divider latency (accept -> ready)", "record_latency_cycles"),
                       ("decide wait behind a record", "decide_wait_cycles")):
        s = figures[key]
        rows.append((label, f"{s['min']:,}", f"{s['mean']:.2f}", f"{s['max']:,}", f"{s['most_common']:,}"))
    print_table(f"TVC on the Verilated RTL ({figures['transactions']:,} transactions, "
                f"{figures['decisions']:,} decisions, {figures['rtl_cycles']:,} cycles)",
                ("measure", "min [cycles]", "mean [cycles]", "max [cycles]", "most common [cycles]"), rows,
                console=console, left=("measure",))
    rows = [(label, f"{figures[key + '_events_per_s']:,.0f}", f"{figures[key + '_events_per_cpu_s']:,.0f}")
            for label, key in (("golden model", "golden"),
                               ("RTL (Verilator harness, batched, closed loop)", "rtl"))]
    print_table("TVC replay speed", ("path", "rate [events/s]", "rate [events/CPU s]"), rows,
                console=console, left=("path",))
    print_text(f"RTL build (or cache hit): {figures['rtl_build_s']:.1f} s; RTL decisions "
               f"{'match' if figures['rtl_matches_golden'] else 'DO NOT match'} the golden model; "
               f"{figures['decides_delayed_by_records']:,} of {figures['decisions']:,} decides waited for a record",
               console=console)
    print_text(f"`ahasd tvc replay` peak memory (child processes included): golden "
               f"{figures['golden_replay_peak_mb']:.0f} MB, --rtl {figures['rtl_replay_peak_mb']:.0f} MB",
               console=console)
