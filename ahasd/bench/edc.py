"""``ahasd bench edc``: events per second of the golden EDC and of the Verilated RTL replay path.

The workload is a fixed random event stream (realistic entropies as in docs/architecture.md 5,
look-ahead runs); the RTL runs on the batched Verilator harness
(:class:`ahasd.cosim.edc.VerilatedEDC`, the model built before the clock starts). The figures
are measured wall-clock rates on this machine, printed, never asserted.
"""

import time

from ahasd.bench.memory import replay_memory
from ahasd.tables import print_table, print_text

__all__ = ["bench", "event_stream", "print_figures"]


def event_stream(n, seed=0):
    """``n`` EDC events (:func:`ahasd.sim.traces.edc_events.random_events`), as a list."""
    from ahasd.sim.traces.edc_events import random_events
    return list(random_events(n, seed))


def _rate(n, seconds):
    return n / seconds if seconds > 0 else float("inf")


def bench(json_output=False, quick=False):
    from ahasd.cosim.edc import VerilatedEDC
    from ahasd.sim.blocks.edc import EDC, VARIANTS, score_events

    n = 20_000 if quick else 400_000
    events = event_stream(n)
    figures = {"events": n}
    for variant in VARIANTS:
        start, cpu = time.perf_counter(), time.process_time()
        score_events(EDC(variant=variant), events)
        figures[f"golden_{variant}_events_per_s"] = _rate(n, time.perf_counter() - start)
        figures[f"golden_{variant}_events_per_cpu_s"] = _rate(n, time.process_time() - cpu)

    start = time.perf_counter()
    rtl = VerilatedEDC()                      # compiles once, then cached
    figures["rtl_build_s"] = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    decisions = rtl.run_events(events)
    figures["rtl_events_per_s"] = _rate(n, time.perf_counter() - start)
    # CPU time of this process and of the harness process: the rate on an otherwise idle core.
    figures["rtl_events_per_cpu_s"] = _rate(n, time.process_time() - cpu + rtl.simulator_cpu_s)
    golden, _ = score_events(EDC(), events)
    figures["rtl_matches_golden"] = decisions == golden
    # `ahasd edc replay` of the same events
    figures.update(replay_memory("edc", (
        f'{{"op":"draft","entropy":{v!r}}}\n' if op == "draft" else
        f'{{"op":"verify","full":{"true" if v else "false"}}}\n' for op, v in events)))

    if not json_output:
        print_figures(figures)
    return figures


def print_figures(figures, console=None):
    """The EDC bench's table and notes (``figures`` as :func:`bench` returns them)."""
    rows = [(label, f"{figures[key + '_events_per_s']:,.0f}", f"{figures[key + '_events_per_cpu_s']:,.0f}")
            for label, key in (("golden, committed", "golden_committed"), ("golden, anchor", "golden_anchor"),
                               ("RTL (Verilator harness, batched)", "rtl"))]
    print_table(f"EDC replay speed ({figures['events']:,} events)",
                ("path", "rate [events/s]", "rate [events/CPU s]"), rows, console=console, left=("path",))
    print_text(f"RTL build (or cache hit): {figures['rtl_build_s']:.1f} s; RTL decisions "
               f"{'match' if figures['rtl_matches_golden'] else 'DO NOT match'} the golden model", console=console)
    print_text(f"`ahasd edc replay` peak memory (child processes included): golden "
               f"{figures['golden_replay_peak_mb']:.0f} MB, --rtl {figures['rtl_replay_peak_mb']:.0f} MB",
               console=console)
