"""State-commit unit throughput against the LPDDR5 timing bound, on Verilated RTL.

Each case builds :class:`ahasd.tb.state_commit_system.StateCommitSystem` (state-commit RTL +
timing-checking bank model holding a random int16 state), Verilates it, loads the factors of a
rank-A commit, starts it and counts the cycles from ``start`` to the last burst of the new state
(the RTL's ``cycles`` counter). Every state is checked bit for bit against
:func:`ahasd.sim.specla.fixed.commit_fixed` and the bank model's timing flag must be clear.

``efficiency`` = (bursts / cycles) / :meth:`ahasd.spec.dram.DRAMConfig.read_bound` (the
all-bank refresh bound: above 1 is possible with the default per-bank refresh);
``efficiency_raw`` = (bursts / cycles) / :meth:`ahasd.spec.dram.DRAMConfig.raw_read_bound`
(one burst per tCCD); ``efficiency_with_load`` counts every cycle from the first job's first
factor word to the last job's last burst (``total_cycles``), against ``read_bound``: the factors
of each later job are loaded while the job before it streams (the unit's second factor bank), so
only the first job's loads (``exposed_load_cycles``) and each job's start (its first row's
activation and read latency, the pipeline) are not overlapped.

**Simulated at fewer lanes, the same schedule.** Each case names the full unit (``E = B / 2``
lanes for ``B``-byte bursts); it is simulated with :data:`SIM_LANES` lanes (:func:`sim_shape`):
bursts, ``d_v`` and the row size divided by ``k = E / SIM_LANES``. The cycle count is then the
full unit's, exactly: the read scheduler (:class:`ahasd.hw.dram_port.ReadScheduler`) and the bank
model see bursts only (``bursts_per_row = row_bytes / B`` and the number of bursts
``d_k d_v / E`` are unchanged, the timing is in cycles), the factor load takes ``2 + d_k +
A d_v / E`` words (unchanged), and the unit's own cycles (the key scaling, the lane pipeline
:func:`ahasd.hw.state_commit.lane_latency`, the output FIFO's depth) depend on ``max_rank``
and the DRAM timing, not on ``E``. So load and stream time, and their ratio, do not depend on
the lane count. The check: ``--quick`` runs its case at two lane counts and requires the same
cycles (``tests/hw/test_state_commit.py`` checks the same in Amaranth's simulator). The
datapath simulated is the real one (``max_rank`` + 1 products per lane, the default's trees):
only the number of lanes is smaller, which is what takes Verilator tens of minutes to build.
"""

import numpy as np

from ahasd.sim.specla.fixed import commit_fixed, load_sequence, state_from_bursts, state_layout
from ahasd.spec.dram import DRAMConfig
from ahasd.tables import print_table, print_text

__all__ = ["bench", "run_verilated", "sim_shape", "CASES", "QUICK_CASES", "SIM_LANES",
           "print_figures"]

#: (head, d_k, d_v, rank, burst_bytes, t_ccd): GDN head shapes (1.3B: 200 x 400; 0.4B:
#: 128 x 256), the default 128 x 128, a slower tCCD and 64-byte bursts (32 lanes).
CASES = [
    ("128x128", 128, 128, 16, 32, 4),
    ("GDN-0.4B", 128, 256, 16, 32, 4),
    ("GDN-1.3B", 200, 400, 16, 32, 4),
    ("128x128", 128, 128, 16, 32, 6),
    ("256x256", 256, 256, 8, 64, 4),
]
QUICK_CASES = [("64x64", 64, 64, 4, 32, 4)]
#: Lanes of the unit simulated for every case (see the module docstring); ``--quick`` also
#: runs its case at ``2 * SIM_LANES``.
SIM_LANES = 1
#: Commits per case, each with new factors, at different refresh phases.
REPEATS = 4


def run_verilated(config, S, jobs, *, max_rank):
    """Commits ``jobs`` = [(P, k, w, u)] of the state ``S`` back to back on the Verilated system:
    the first job's factors loaded, then each job started as soon as the unit is idle while the
    next job's factors are loaded during its streaming (into the unit's other factor bank).

    Returns ``(results, total)``: one ``(new_state, cycles, load_words)`` per job and the cycles
    from the first factor word to the last job's last burst; raises ``RuntimeError`` if the DRAM
    model flagged a timing violation, a commit did not finish or lost bursts.
    """
    from ahasd.cosim.model import VerilatedModel
    from ahasd.hw.blocks import port_list, to_verilog
    from ahasd.tb.state_commit_system import StateCommitSystem

    d_k, d_v = S.shape
    dut = StateCommitSystem(config=config, init=state_layout(S, config.burst_bytes), d_k=d_k,
                            d_v=d_v, max_rank=max_rank)
    inputs, outputs = port_list(dut)
    model = VerilatedModel(to_verilog(dut, "state_commit_system"), "state_commit_system",
                           inputs, outputs)
    names_in = [name for name, _ in inputs]
    col = {name: i for i, (name, _) in enumerate(outputs)}

    def vec(load=None, **values):
        if load is not None:
            values["f__valid"] = 1
            values.update(zip((f"f__payload{n}" for n in range(dut.f_words)),
                              dut.factor_words(*load)))
        return tuple([values.pop("rst", 0)] + [values.get(name, 0) for name in names_in])

    bursts = d_k * d_v * 2 // config.burst_bytes
    budget = int(bursts / config.read_bound()) * 2 + 4 * config.t_refi + 1000
    loads = [load_sequence(P, k, w, u, lanes=dut.unit.lanes) for P, k, w, u in jobs]
    results, total = [], 0
    with model:
        model.step(vec(rst=1))
        pending = list(loads[0])
        for n, (_, _, w, _) in enumerate(jobs):
            while pending:                   # only the first job's loads are not overlapped
                model.step(vec(pending.pop(0)))
                total += 1
            model.step(vec(rank=len(w), start=1, o_stream__ready=1))
            total += 1
            pending = list(loads[n + 1]) if n + 1 < len(jobs) else []
            words = []
            for _ in range(budget):
                r = model.step(vec(pending.pop(0) if pending else None, o_stream__ready=1))
                total += 1
                if r[col["o_stream__valid"]]:
                    words.append(dut.join(r[col[f"o_stream__payload{n}"]]
                                          for n in range(dut.words)))
                if not r[col["busy"]]:
                    break
            else:
                raise RuntimeError(f"commit did not finish in {budget} cycles")
            if r[col["dram_error"]]:
                raise RuntimeError(f"DRAM timing violation, code {r[col['dram_error_code']]}")
            if len(words) != bursts:
                raise RuntimeError(f"{len(words)} of {bursts} bursts came out")
            results.append((state_from_bursts(words, d_k, d_v, config.burst_bytes),
                            r[col["cycles"]], len(loads[n])))
    return results, total


def sim_shape(d_v, burst_bytes, lanes, row_bytes=DRAMConfig().row_bytes):
    """``(d_v, burst_bytes, row_bytes)`` of the ``lanes``-lane unit whose schedule is that of
    the full unit (``burst_bytes / 2`` lanes) on a ``d_k x d_v`` state: all three divided by
    ``k = (burst_bytes / 2) / lanes`` (module docstring); ``ValueError`` if ``k`` does not divide
    them."""
    full = burst_bytes // 2
    if lanes < 1 or full % lanes:
        raise ValueError(f"lanes must divide the full unit's {full}, not {lanes!r}")
    k = full // lanes
    if d_v % k or row_bytes % k:
        raise ValueError(f"d_v {d_v} and row_bytes {row_bytes} must be multiples of {k} "
                         f"to simulate {lanes} lanes")
    return d_v // k, burst_bytes // k, row_bytes // k


def run_case(rng, d_k, d_v, rank, burst, t_ccd, lanes):
    """One case at ``lanes`` lanes (:func:`sim_shape`): :data:`REPEATS` commits of one random
    state; returns ``(cycles per commit, total cycles, load words of the first commit)``
    after checking every state bit for bit."""
    d_v_sim, burst_sim, row_sim = sim_shape(d_v, burst, lanes)
    base = DRAMConfig(burst_bytes=burst_sim, row_bytes=row_sim, t_ccd=t_ccd)
    bursts = d_k * d_v_sim * 2 // burst_sim
    rows = -(-bursts // (base.bursts_per_row * base.n_banks))
    config = DRAMConfig(burst_bytes=burst_sim, row_bytes=row_sim, t_ccd=t_ccd, rows=rows)
    S = rng.integers(-32768, 32768, (d_k, d_v_sim))
    jobs = [(int(rng.integers(0, 1 << 15)), rng.integers(-16384, 16385, (rank, d_k)),
             rng.integers(0, (1 << 15) + 1, rank), rng.integers(-32768, 32768, (rank, d_v_sim)))
            for _ in range(REPEATS)]
    results, total = run_verilated(config, S, jobs, max_rank=rank)
    for job, (got, _, _) in zip(jobs, results):
        if not np.array_equal(got, commit_fixed(S, *job)):
            raise RuntimeError(f"state mismatch for {d_k}x{d_v_sim} rank {rank} at {lanes} "
                               f"lanes")
    return [c for _, c, _ in results], total, results[0][2], config


def bench(json_output=False, quick=False):
    rng = np.random.default_rng(2025)
    figures = {"cases": []}
    for head, d_k, d_v, rank, burst, t_ccd in (QUICK_CASES if quick else CASES):
        per_commit, total, exposed, config = run_case(rng, d_k, d_v, rank, burst, t_ccd,
                                                      SIM_LANES)
        if quick:      # the same schedule at twice the lanes (module docstring)
            check = run_case(rng, d_k, d_v, rank, burst, t_ccd, 2 * SIM_LANES)
            if (check[0], check[1], check[2]) != (per_commit, total, exposed):
                raise RuntimeError(f"{head}: cycles differ between {SIM_LANES} and "
                                   f"{2 * SIM_LANES} lanes: {per_commit}, {total} vs "
                                   f"{check[0]}, {check[1]}")
        bursts = d_k * d_v * 2 // burst
        cycles = sum(per_commit)
        achieved = REPEATS * bursts / cycles
        bound = float(config.read_bound())
        load_words = 2 + d_k + rank * d_v // (burst // 2)
        figures["cases"].append({
            "head": head, "d_k": d_k, "d_v": d_v, "rank": rank, "burst_bytes": burst,
            "t_ccd": t_ccd, "lanes": burst // 2, "simulated_lanes": SIM_LANES,
            "bursts": bursts, "commits": REPEATS, "cycles": cycles,
            "commit_cycles": per_commit,
            "bursts_per_cycle": achieved, "bound": bound, "efficiency": achieved / bound,
            "raw_bound": float(config.raw_read_bound()),
            "efficiency_raw": achieved / float(config.raw_read_bound()),
            "load_cycles": REPEATS * load_words, "exposed_load_cycles": exposed,
            "total_cycles": total,
            "efficiency_with_load": REPEATS * bursts / total / bound,
            "bit_exact": True})
    figures["min_efficiency"] = min(c["efficiency"] for c in figures["cases"])
    figures["min_efficiency_with_load"] = min(c["efficiency_with_load"]
                                              for c in figures["cases"])
    checked = f" (checked at {2 * SIM_LANES} lanes too)" if quick else ""
    figures["simulated"] = (f"Verilated RTL of the state-commit unit + LPDDR5 bank model (timing "
                            f"checked, states bit-exact vs the fixed-point mirror) at "
                            f"{SIM_LANES} lane(s), bursts, d_v and row size scaled so that the "
                            f"schedule is the full unit's{checked}; "
                            f"{REPEATS} commits per case, cycles from each start to its last "
                            f"burst; w/ load: from the first factor word to the last burst, each "
                            f"commit's loads overlapped with the one before; bound = "
                            f"(1 - tRFC/tREFI) / tCCD bursts/cycle")
    if not json_output:
        print_figures(figures)
    return figures


def print_figures(figures, console=None):
    """The state-commit bench's table (``figures`` as :func:`bench` returns them)."""
    rows = [(c["head"], f"{c['d_k']:,}x{c['d_v']:,}", f"{c['rank']:,}", f"{c['burst_bytes']:,}", f"{c['t_ccd']:,}",
             f"{c['cycles']:,}", f"{c['efficiency']:.4f}", f"{c['exposed_load_cycles']:,}",
             f"{c['efficiency_with_load']:.4f}") for c in figures["cases"]]
    print_table("State-commit unit vs DRAM timing bound",
                ("head", "d_k x d_v", "A [tokens]", "B [bytes]", "tCCD [cycles]", "cycles", "efficiency [ratio]",
                 "exposed load [cycles]", "efficiency w/ load [ratio]"), rows, console=console, left=("head",))
    print_text(figures["simulated"], console=console)
