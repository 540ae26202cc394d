"""``ahasd bench gemv``: GEMV bank efficiency against the LPDDR5 timing bound, on Verilated RTL.

Each case builds :class:`ahasd.tb.gemv_system.GEMVSystem` (GEMV RTL + timing-checking bank model
holding a random int8 weight slice), Verilates it, streams the activations in, starts the GEMV and
counts the cycles from ``start`` to the last result (the RTL's own ``cycles`` counter, cross-checked
against the cycle index of the last result). Results are checked bit for bit against
:func:`ahasd.sim.blocks.gemv.gemv` and the bank model's timing-violation flag must be clear.

``efficiency`` = (M*N / cycles) / :meth:`ahasd.spec.dram.DRAMConfig.mac_bound`, the MACs per cycle
the DRAM could feed at one burst per tCCD minus all-bank refresh time (the bound of an all-bank
refresh scheduler: with per-bank refresh it can exceed 1). ``efficiency_raw`` = (M*N / cycles) /
:meth:`ahasd.spec.dram.DRAMConfig.raw_mac_bound`, against the raw DRAM rate ``B / tCCD``.
The DRAM is the platform's 16-bank rank with the scheduler's per-bank refresh (``refresh``
``"all_bank"`` for comparison).
"""

import numpy as np

from ahasd.sim.blocks.gemv import gemv
from ahasd.spec.dram import DRAMConfig, weight_layout
from ahasd.tables import print_table, print_text

__all__ = ["markdown_figures", "README_SECTION", "bench", "run_verilated", "CASES", "print_figures"]

#: (layer, M slice, N, burst_bytes, t_ccd): slices of the draft model's 2048x2048 and 4096x4096
#: layers (a slice = the output rows of one GEMV bank).
CASES = [
    ("2048x2048", 64, 2048, 16, 4),
    ("2048x2048", 64, 2048, 32, 4),
    ("2048x2048", 128, 2048, 64, 4),
    ("4096x4096", 64, 4096, 32, 4),
    ("4096x4096", 64, 4096, 32, 6),
    ("4096x4096", 128, 4096, 64, 4),
]
#: One case (each case is a Verilator build of ~30 s): a smoke test of the benchmark.
QUICK_CASES = [
    ("2048x2048", 32, 1024, 16, 4),
]


def run_verilated(config, weights, x, *, max_n=4096, max_m=4096):
    """Run one GEMV on the Verilated :class:`GEMVSystem`; return ``(y, cycles, info)``.

    Raises ``RuntimeError`` if the DRAM model flagged a timing violation, the GEMV did not finish,
    or an activation was not accepted.
    """
    from ahasd.cosim.model import VerilatedModel
    from ahasd.hw.blocks import port_list, to_verilog
    from ahasd.tb.gemv_system import GEMVSystem

    weights = np.asarray(weights)
    m_out, n_in = weights.shape
    words = weight_layout(weights, config.burst_bytes)
    dut = GEMVSystem(config=config, init=words, max_n=max_n, max_m=max_m)
    inputs, outputs = port_list(dut)
    model = VerilatedModel(to_verilog(dut, "gemv_system"), "gemv_system", inputs, outputs)
    names_in = [name for name, _ in inputs]
    names_out = [name for name, _ in outputs]

    def vec(**values):
        return tuple([values.pop("rst", 0)] + [values.get(name, 0) for name in names_in])

    cycles = [vec(rst=1)]
    for v in x:
        cycles.append(vec(x_valid=1, x_data=int(v) & 0xFF))
    start_index = len(cycles)
    cycles.append(vec(m=m_out, n=n_in, start=1, o_ready=1))
    bursts = -(-m_out // config.burst_bytes) * n_in
    budget = int(bursts / config.read_bound()) * 2 + 4 * config.t_refi + 1000
    cycles += [vec(o_ready=1)] * budget
    rows = model.run(cycles)
    col = {name: i for i, name in enumerate(names_out)}
    accepted = sum(r[col["x_ready"]] for r in rows[1:start_index])
    if accepted != len(x):
        raise RuntimeError(f"{accepted} of {len(x)} activations accepted")
    results, last = [], None
    for i, r in enumerate(rows[start_index:], start_index):
        if r[col["o_valid"]]:
            results.append(r[col["o_data"]])
            last = i
        if i > start_index and not r[col["busy"]]:
            end = r
            break
    else:
        raise RuntimeError(f"GEMV did not finish in {budget} cycles")
    if end[col["dram_error"]]:
        raise RuntimeError(f"DRAM timing violation, code {end[col['dram_error_code']]}")
    y = np.array([v - (1 << 32) if v >> 31 else v for v in results], dtype=np.int64)
    info = {"reads": end[col["reads"]], "cycles_counter": end[col["cycles"]],
            "last_result_cycle": last - start_index + 1, "refpb": end[col["refpb"]],
            "refab": end[col["refab"]]}
    return y, info["cycles_counter"], info


def bench(json_output=False, quick=False, refresh="per_bank"):
    rng = np.random.default_rng(2024)
    figures = {"cases": []}
    for layer, m_out, n_in, burst, t_ccd in (QUICK_CASES if quick else CASES):
        bursts = -(-m_out // burst) * n_in
        base = DRAMConfig(burst_bytes=burst, t_ccd=t_ccd)
        # Store only the rows the slice occupies (the Verilog holds the array contents).
        rows = -(-bursts // (base.bursts_per_row * base.n_banks))
        config = DRAMConfig(burst_bytes=burst, t_ccd=t_ccd, rows=rows, refresh=refresh)
        weights = rng.integers(-128, 128, size=(m_out, n_in))
        x = rng.integers(-128, 128, size=n_in)
        y, cycles, info = run_verilated(config, weights, x, max_n=n_in, max_m=m_out)
        exact = bool(np.array_equal(y, gemv(weights, x)))
        if not exact:
            raise RuntimeError(f"GEMV result mismatch for {layer} slice {m_out}x{n_in}")
        achieved = m_out * n_in / cycles
        bound = float(config.mac_bound())
        raw = float(config.raw_mac_bound())
        figures["cases"].append({
            "layer": layer, "m": m_out, "n": n_in, "burst_bytes": burst, "t_ccd": t_ccd,
            "cycles": cycles, "reads": info["reads"], "macs_per_cycle": achieved,
            "bound_macs_per_cycle": bound, "efficiency": achieved / bound, "bit_exact": exact,
            "raw_bound_macs_per_cycle": raw, "efficiency_raw": achieved / raw,
            "refpb": info["refpb"], "refab": info["refab"], "refresh": refresh,
            "n_banks": config.n_banks,
        })
    figures["min_efficiency"] = min(c["efficiency"] for c in figures["cases"])
    figures["min_efficiency_raw"] = min(c["efficiency_raw"] for c in figures["cases"])
    figures["simulated"] = ("Verilated RTL of GEMV + 16-bank LPDDR5 rank model (timing checked, "
                            f"results bit-exact vs numpy), {refresh.replace('_', '-')} refresh, "
                            "cycles from start to last result; bound = B * (1 - tRFC/tREFI) / "
                            "tCCD MAC/cycle (all-bank refresh), raw = B / tCCD")
    if not json_output:
        print_figures(figures)
    return figures


def print_figures(figures, console=None):
    """The GEMV bench's table (``figures`` as :func:`bench` returns them). B = burst bytes = lanes;
    every result was checked bit for bit (a mismatch aborts the bench)."""
    rows = [(c["layer"], f"{c['m']:,}x{c['n']:,}", f"{c['burst_bytes']:,}", f"{c['t_ccd']:,}", f"{c['cycles']:,}",
             f"{c['macs_per_cycle']:.3f}", f"{c['bound_macs_per_cycle']:.3f}", f"{c['efficiency']:.4f}",
             f"{c['raw_bound_macs_per_cycle']:.3f}", f"{c['efficiency_raw']:.4f}", f"{c['refpb'] + c['refab']:,}")
            for c in figures["cases"]]
    print_table("GEMV bank vs DRAM timing bound",
                ("layer", "slice [m x n]", "B [bytes]", "tCCD [cycles]", "cycles", "rate [MAC/cycle]",
                 "bound [MAC/cycle]", "efficiency [ratio]", "raw bound [MAC/cycle]", "efficiency_raw [ratio]",
                 "refreshes [REF]"), rows, console=console, left=("layer",))
    print_text(figures["simulated"], console=console)


#: The README section :func:`markdown_figures` fills (``ahasd bench gemv --readme FILE``).
README_SECTION = "gemv"


def markdown_figures(figures):
    """The README's GEMV table: every case of ``figures`` (as :func:`bench` returns them)."""
    from ahasd.synth.markdown import markdown_table
    rows = [(c["layer"], f"{c['m']}x{c['n']}", c["burst_bytes"], c["t_ccd"], f"{c['cycles']:,}",
             f"{c['reads']:,}", f"{c['refpb'] + c['refab']:,}", f"{c['efficiency']:.4f}", f"{c['efficiency_raw']:.4f}")
            for c in figures["cases"]]
    return markdown_table(("layer", "slice", "B [bytes]", "tCCD [cycles]", "cycles", "reads", "refreshes",
                           "efficiency (refresh-adjusted bound)", "efficiency_raw (B / tCCD)"), rows)
