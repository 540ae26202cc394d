"""``ahasd bench rtl-timing``: the cycle figures the system simulator takes from the RTL, measured.

Every figure runs the Amaranth RTL in Amaranth's simulator and counts cycles:

* AAU (:class:`ahasd.hw.aau.AAU`), per operator (softmax, GELU, LayerNorm): ``n`` elements as
  ``n / 16`` back-to-back 16-lane requests of random Q8.8 inputs (the source always valid, the
  sink always ready); cycles = last result cycle - first accept cycle + 1 (the unit's
  occupancy). A least-squares fit ``cycles = a + b * n`` over :data:`AAU_SIZES` gives each
  operator's ``base_cycles`` (a) and ``cycles_per_elem`` (b); the largest relative residual is
  printed.
* EDC (:class:`ahasd.hw.edc.EDC`) decision latency: cycles from the cycle a ``draft`` is taken
  to the cycle its ``decision`` is valid.
* TVC (:class:`ahasd.hw.tvc.TVC`) decision latency: cycles from the cycle a ``decide`` is
  accepted to the cycle its ``result`` is valid.
* GTS (:class:`ahasd.hw.gts.GTS`) switch cost: the extra cycles before the next task can be
  accepted after a task that changes the working mode, over one that does not.
* GEMV (:class:`ahasd.hw.gemv.GEMV` on the timing-checking 16-bank rank model,
  :class:`ahasd.tb.gemv_system.GEMVSystem`) raw-bound efficiency ``efficiency_raw``: MACs per
  cycle of one :data:`GEMV_SLICE` slice (results bit-exact against the golden GEMV, no timing
  violation) over the raw rate ``B / tCCD``, on the platform's LPDDR5 timing (the authors' set:
  tREFI 6240, tRFC 560, per-bank refresh; ``ahasd bench gemv`` measures the same on Verilated
  RTL over more shapes). The system simulator's PIM rate is
  ``pim.units x B / tCCD x f x efficiency_raw``.
* State-commit unit (:class:`ahasd.hw.state_commit.StateCommit`, default ``max_rank`` 16 and
  32-byte bursts, on the timing-checking rank model with the authors' timing): cycles of one
  commit (from ``start`` to its last burst; its factor loads overlap the commit before, the
  unit's second factor bank) of a ``d_k x 128`` state for ``d_k`` in :data:`COMMIT_ROWS`, states
  bit-exact against :func:`ahasd.sim.specla.fixed.commit_fixed`, fitted as ``cycles =
  base_cycles + cycles_per_burst * bursts``. Simulated at one lane with bursts, ``d_v`` and row
  size divided by 16, which keeps the full unit's schedule cycle for cycle
  (:mod:`ahasd.bench.state_commit`). The SpecLA cost model (:mod:`ahasd.sim.specla.costs`) times
  a factor commit on the PIM with these figures.

The benchmark writes the table the simulator reads as ``build/rtl_timing.toml``; the shipped
copy is ``sim/system/configs/rtl_timing.toml`` (copy it there to adopt a change in the RTL;
``tests/sim/system/test_rtl_timing.py`` re-measures and fails when the two disagree by more
than 5 %).
"""

import numpy as np

from ahasd.tables import print_table, print_text

__all__ = ["bench", "aau_cycles", "fit_line", "edc_latency", "tvc_latency",
           "gts_switch_cycles", "gemv_efficiency_raw", "commit_cycles", "measure", "toml_text", "AAU_SIZES",
           "AAU_OPS", "GEMV_SLICE", "COMMIT_ROWS", "print_figures"]

#: Elements per measurement (multiples of the 16 lanes).
AAU_SIZES = (16, 32, 64, 128)
#: Config key prefix -> hw.aau.AAUOp name.
AAU_OPS = {"softmax": "SOFTMAX", "gelu": "GELU", "layernorm": "LAYERNORM"}
#: (M, N) of the GEMV slice measured: two 32-lane tiles of the draft model's 2048-wide layer,
#: 16384 raw-bound cycles (more than two tREFI of the authors' timing).
GEMV_SLICE = (64, 2048)
#: Key rows ``d_k`` of the ``d_k x 128`` states whose commits are timed (128 and 256 bursts).
COMMIT_ROWS = (16, 32)


def aau_cycles(op, n, *, seed=0):
    """Cycles the RTL AAU is occupied by ``n`` elements (``n / 16`` requests) of operator ``op``
    (``"softmax"``, ``"gelu"`` or ``"layernorm"``)."""
    from ahasd.hw.aau import AAU, AAUOp, request_layout
    from ahasd.sim.blocks.aau import LANES
    from ahasd.tb.amaranth_sim import simulate, to_payload
    if op not in AAU_OPS:
        raise ValueError(f"AAU operator must be one of {', '.join(AAU_OPS)}, not {op!r}")
    if not isinstance(n, int) or n < LANES or n % LANES:
        raise ValueError(f"n must be a positive multiple of {LANES}, not {n!r}")
    rng = np.random.default_rng(seed)
    code = AAUOp[AAU_OPS[op]]
    payloads = [to_payload(request_layout, {"op": code, "x": [int(v) for v in
                                                              rng.integers(-2048, 2048, LANES)]})
                for _ in range(n // LANES)]
    dut = AAU()
    seen = {}

    async def testbench(ctx):
        ctx.set(dut.o_stream.ready, 1)
        sent = got = cycle = 0
        while got < len(payloads):
            if sent < len(payloads):
                ctx.set(dut.i_stream.valid, 1)
                ctx.set(dut.i_stream.payload, payloads[sent])
            else:
                ctx.set(dut.i_stream.valid, 0)
            *_, iv, ir, ov = await ctx.tick().sample(dut.i_stream.valid, dut.i_stream.ready,
                                                      dut.o_stream.valid)
            if iv and ir:
                seen.setdefault("first", cycle)
                sent += 1
            if ov:
                got += 1
                seen["last"] = cycle
            cycle += 1
            if cycle > 1000 * len(payloads):
                raise RuntimeError(f"AAU {op}: no result after {cycle} cycles")

    simulate(dut, testbench)
    return seen["last"] - seen["first"] + 1


def fit_line(points):
    """Least-squares ``(a, b, worst relative residual)`` of ``cycles = a + b * n``."""
    n = np.array([p[0] for p in points], dtype=float)
    c = np.array([p[1] for p in points], dtype=float)
    b, a = np.polyfit(n, c, 1)
    worst = float(np.max(np.abs(a + b * n - c) / c))
    return float(a), float(b), worst


async def _latency(ctx, offer, take, done, limit=100):
    """Cycles from the cycle ``take`` (a sampled accept) is true to the one ``done`` is."""
    start = None
    for cycle in range(limit):
        offer(ctx, start is None)
        sampled = await ctx.tick().sample(*take, *done)
        k = len(take)
        if start is None and all(sampled[-len(take) - len(done):][:k]):
            start = cycle
        elif start is not None and all(sampled[-len(done):]):
            return cycle - start
    raise RuntimeError("no output within the cycle limit")


def edc_latency():
    """EDC: cycles from a taken ``draft`` to its valid ``decision``."""
    from ahasd.hw.edc import EDC
    from ahasd.tb.amaranth_sim import simulate
    dut = EDC()
    out = {}

    def offer(ctx, on):
        ctx.set(dut.draft.valid, on)
        ctx.set(dut.draft.payload, 1 << 12)      # 1 nat, UQ4.12

    async def testbench(ctx):
        await ctx.tick()
        out["cycles"] = await _latency(ctx, offer, (dut.draft.valid,), (dut.decision.valid,))

    simulate(dut, testbench)
    return out["cycles"]


def tvc_latency():
    """TVC: cycles from an accepted ``decide`` to its valid ``result``."""
    from ahasd.hw.tvc import TVC
    from ahasd.tb.amaranth_sim import simulate, to_payload
    dut = TVC()
    shape = dut.decide.signature.members["payload"].shape
    out = {}

    def offer(ctx, on):
        ctx.set(dut.decide.valid, on)
        ctx.set(dut.decide.payload, to_payload(shape, {"kv_len": 512, "now": 1000,
                                                       "pending": 4}))

    async def testbench(ctx):
        ctx.set(dut.freq_ratio, 1 << 14)
        await ctx.tick().repeat(2)          # the tables take their presets after reset
        out["cycles"] = await _latency(ctx, offer, (dut.decide.valid, dut.decide.ready),
                                       (dut.result.valid,))

    simulate(dut, testbench)
    return out["cycles"]


def gts_switch_cycles():
    """GTS: cycles a task that changes the working mode holds off the next task, beyond one
    that does not (tasks offered back to back, each finishing at once)."""
    from ahasd.hw.gts import GTS, TaskKind
    from ahasd.tb.amaranth_sim import simulate
    gaps = {}
    for second in (TaskKind.DRAFT, TaskKind.PREVERIFY):
        dut = GTS()

        # DRAFT, then two tasks of kind ``second``: the gap after the second task's accept is
        # the one that differs (the first task after reset always switches from IDLE).
        async def testbench(ctx, second=second, dut=dut):
            accepts, cycle = [], 0
            while len(accepts) < 3:
                ctx.set(dut.i_task.valid, 1)
                ctx.set(dut.i_task.payload.kind, TaskKind.DRAFT if not accepts else second)
                ctx.set(dut.i_task.payload.length, 1)
                ctx.set(dut.done, 1)
                *_, v, r = await ctx.tick().sample(dut.i_task.valid, dut.i_task.ready)
                if v and r:
                    accepts.append(cycle)
                cycle += 1
                if cycle > 100:
                    raise RuntimeError("GTS took no task within 100 cycles")
            gaps[second] = accepts[2] - accepts[1]

        simulate(dut, testbench)
    return gaps[TaskKind.PREVERIFY] - gaps[TaskKind.DRAFT]


def gemv_efficiency_raw(m=GEMV_SLICE[0], n=GEMV_SLICE[1], *, burst_bytes=32, t_ccd=4, seed=0):
    """``(efficiency_raw, cycles)`` of the RTL GEMV on an ``m x n`` int8 slice (Amaranth
    simulator; the authors' LPDDR5 timing set, per-bank refresh): ``m * n / cycles`` over
    ``burst_bytes / t_ccd``. Raises ``RuntimeError`` on a wrong result or a timing violation."""
    from ahasd.sim.blocks.gemv import gemv
    from ahasd.spec.dram import named_config, weight_layout
    from ahasd.tb.amaranth_sim import simulate
    from ahasd.tb.gemv_system import GEMVSystem, feed_and_start
    base = named_config("authors", burst_bytes=burst_bytes, t_ccd=t_ccd)
    rows = -(-(-(-m // burst_bytes) * n) // (base.bursts_per_row * base.n_banks))
    config = named_config("authors", burst_bytes=burst_bytes, t_ccd=t_ccd, rows=rows)
    rng = np.random.default_rng(seed)
    w, x = rng.integers(-128, 128, size=(m, n)), rng.integers(-128, 128, size=n)
    dut = GEMVSystem(config=config, init=weight_layout(w, burst_bytes), max_n=n, max_m=m)
    out: dict = {"y": []}

    async def testbench(ctx):
        await feed_and_start(ctx, dut, x, m, n)
        out["cycles"], out["error"] = await _drain(ctx, dut, dut.o_valid, dut.o_data, out["y"])

    simulate(dut, testbench)
    if out["error"] or not np.array_equal(np.array(out["y"]), gemv(w, x)):
        raise RuntimeError(f"GEMV {m}x{n}: wrong result or DRAM timing violation")
    return m * n / out["cycles"] / (burst_bytes / t_ccd), out["cycles"]


def commit_cycles(d_k, d_v=128, *, max_rank=16, burst_bytes=32, t_ccd=4, seed=0):
    """``(cycles, bursts)`` of one rank-``max_rank`` commit of a ``d_k x d_v`` state by the
    state-commit unit of ``burst_bytes / 2`` lanes, simulated at one lane (module docstring;
    Amaranth simulator, the authors' LPDDR5 timing, per-bank refresh): cycles from ``start``
    to the last burst. Raises ``RuntimeError`` on a wrong state or a timing violation."""
    from ahasd.bench.state_commit import sim_shape
    from ahasd.sim.specla.fixed import commit_fixed, load_sequence, state_from_bursts, state_layout
    from ahasd.spec.dram import named_config
    from ahasd.tb.amaranth_sim import simulate
    from ahasd.tb.state_commit_system import StateCommitSystem
    dv, bb, row = sim_shape(d_v, burst_bytes, 1)
    base = named_config("authors", burst_bytes=bb, row_bytes=row, t_ccd=t_ccd)
    bursts = d_k * dv * 2 // bb
    rows = -(-bursts // (base.bursts_per_row * base.n_banks))
    config = named_config("authors", burst_bytes=bb, row_bytes=row, t_ccd=t_ccd, rows=rows)
    rng = np.random.default_rng(seed)
    S = rng.integers(-32768, 32768, (d_k, dv))
    P, w = int(rng.integers(0, 1 << 16)), rng.integers(0, 1 << 16, max_rank)
    k = rng.integers(-32768, 32768, (max_rank, d_k))
    u = rng.integers(-32768, 32768, (max_rank, dv))
    dut = StateCommitSystem(config=config, init=state_layout(S, bb), d_k=d_k, d_v=dv,
                            max_rank=max_rank)
    out: dict = {"words": []}

    async def testbench(ctx):
        for word in load_sequence(P, k, w, u, lanes=1):
            ctx.set(dut.f__valid, 1)
            for n, value in enumerate(dut.factor_words(*word)):
                ctx.set(getattr(dut, f"f__payload{n}"), value)
            await ctx.tick()
        ctx.set(dut.f__valid, 0)
        ctx.set(dut.rank, max_rank)
        ctx.set(dut.start, 1)
        ctx.set(dut.o_stream__ready, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        out["cycles"], out["error"] = await _drain(ctx, dut, dut.o_stream__valid,
                                                   dut.o_stream__payload0, out["words"])

    simulate(dut, testbench)
    if out["error"] or len(out["words"]) != bursts or not np.array_equal(
            state_from_bursts(out["words"], d_k, dv, bb), commit_fixed(S, P, k, w, u)):
        raise RuntimeError(f"state commit {d_k}x{d_v}: wrong state or DRAM timing violation")
    return out["cycles"], bursts


def measure(sizes=AAU_SIZES):
    """Every figure: ``{"aau": {op: {"points", "base_cycles", "cycles_per_elem", "worst_residual"}},
    "lanes", "edc_cycles", "tvc_cycles", "gts_switch_cycles"}``."""
    from ahasd.sim.blocks.aau import LANES
    aau = {}
    for op in AAU_OPS:
        points = [(n, aau_cycles(op, n, seed=i)) for i, n in enumerate(sizes)]
        a, b, worst = fit_line(points)
        aau[op] = {"points": points, "base_cycles": a, "cycles_per_elem": b,
                   "worst_residual": worst}
    eff, cycles = gemv_efficiency_raw()
    points = [(b, c) for c, b in (commit_cycles(d_k, seed=i) for i, d_k in enumerate(COMMIT_ROWS))]
    a, b, worst = fit_line(points)
    commit = {"d_v": 128, "max_rank": 16, "burst_bytes": 32, "points": points,
              "base_cycles": a, "cycles_per_burst": b, "worst_residual": worst}
    return {"state_commit": commit, "aau": aau, "lanes": LANES, "edc_cycles": edc_latency(),
            "tvc_cycles": tvc_latency(), "gts_switch_cycles": gts_switch_cycles(),
            "gemv": {"m": GEMV_SLICE[0], "n": GEMV_SLICE[1], "cycles": cycles,
                     "raw_cycles": round(eff * cycles), "efficiency_raw": eff}}


def toml_text(figures):
    """The simulator's table (``sim/system/configs/rtl_timing.toml``) from :func:`measure`."""
    sizes = ", ".join(str(n) for n, _ in next(iter(figures["aau"].values()))["points"])
    lines = [
        "# Cycle figures of the RTL, measured: generated by `ahasd bench rtl-timing`, which runs",
        "# the Amaranth RTL in Amaranth's simulator and writes build/rtl_timing.toml; copy that",
        "# file here to adopt a change in the RTL (tests/sim/system/test_rtl_timing.py re-measures",
        "# and fails beyond 5 %). Do not edit by hand. A key given in platform.toml (or --set)",
        "# overrides the measured one.",
        "",
        "[aau]",
        f"lanes = {figures['lanes']}                     # hw/aau.py: one vector of lanes per "
        "request",
        "# Occupancy of one AAU by n elements (n / lanes back-to-back requests), fitted as",
        f"# cycles = base_cycles + cycles_per_elem * n over n = {sizes}.",
    ]
    for op, f in figures["aau"].items():
        pts = "; ".join(f"{n}: {c}" for n, c in f["points"])
        lines.append(f"{op}_base_cycles = {round(f['base_cycles'], 4) + 0.0!r}")
        lines.append(f"{op}_cycles_per_elem = {round(f['cycles_per_elem'], 4) + 0.0!r}"
                     f"   # measured {pts}")
    g, c = figures["gemv"], figures["state_commit"]
    lines += [
        "",
        "[pim]",
        f"efficiency_raw = {round(g['efficiency_raw'], 4)!r}   # hw/gemv.py, {g['m']}x{g['n']} "
        f"slice, authors' LPDDR5 timing: {g['cycles']} cycles (raw bound "
        f"{g['raw_cycles']})",
        "",
        "[state_commit]",
        "# hw/state_commit.py, max_rank 16, 32-byte bursts, authors' LPDDR5 timing: one commit,",
        "# start to last burst (its factor loads overlap the commit before: the second factor",
        "# bank), fitted as cycles = base_cycles + cycles_per_burst * bursts",
        f"burst_bytes = {c['burst_bytes']}",
        f"base_cycles = {round(c['base_cycles'], 4) + 0.0!r}",
        f"cycles_per_burst = {round(c['cycles_per_burst'], 4) + 0.0!r}   # measured "
        + "; ".join(f"{n} bursts: {v} cycles" for n, v in c["points"]),
        "",
        "[controller]",
        f"edc_cycles = {figures['edc_cycles']}                 # hw/edc.py: draft taken -> "
        "decision valid",
        f"tvc_cycles = {figures['tvc_cycles']}                 # hw/tvc.py: decide accepted -> "
        "result valid",
        f"gts_switch_cycles = {figures['gts_switch_cycles']}          # hw/gts.py: extra hold-off "
        "of a task that changes the mode",
        "",
    ]
    return "\n".join(lines)


def bench(json_output=False, quick=False):
    from ahasd.tb.paths import build_root
    figures = measure(AAU_SIZES[:2] if quick else AAU_SIZES)
    out = build_root() / "rtl_timing.toml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(toml_text(figures))
    figures["written"] = str(out)
    if not json_output:
        print_figures(figures)
    return figures


def print_figures(figures, console=None):
    """The RTL cycle figures (``figures`` as :func:`bench` returns them)."""
    rows = [(op, f"{round(f['base_cycles'], 4) + 0.0:.2f}", f"{f['cycles_per_elem']:.4f}",
             "; ".join(f"{n:,}: {c:,}" for n, c in f["points"]), f"{f['worst_residual']:.1%}")
            for op, f in figures["aau"].items()]
    print_table("AAU occupancy, cycles = base + per element * n (Amaranth simulator)",
                ("AAU op", "base [cycles]", "per element [cycles]", "measured [n: cycles]", "worst residual [%]"),
                rows, console=console, left=("AAU op",))
    print_text(f"EDC decision {figures['edc_cycles']:,} cycles, TVC decision {figures['tvc_cycles']:,} cycles, "
               f"GTS mode switch {figures['gts_switch_cycles']:,} cycles", console=console)
    print_text(f"written to {figures['written']} (the simulator's copy: sim/system/configs/rtl_timing.toml)",
               console=console)


async def _drain(ctx, dut, valid, data, sink):
    """Until ``dut.busy`` falls, append ``data`` to ``sink`` in every cycle ``valid`` is high;
    then return the unit's ``(cycles, dram_error)`` counters."""
    while ctx.get(dut.busy):
        if ctx.get(valid):
            sink.append(ctx.get(data))
        await ctx.tick()
    return ctx.get(dut.cycles), ctx.get(dut.dram_error)
