"""cocotb scoreboard for the Verilated state-commit system: every committed state against the
fixed-point mirror, over random accepted paths.

Run by ``tests/hw/test_state_commit_cocotb.py``. Inputs change at the falling edge and outputs are
read there too (each loop iteration is one clock cycle).
"""

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

from ahasd.hw.state_commit import FactorKind, factor_layout
from ahasd.sim.specla import fixed
from ahasd.sim.specla.verify import factor_verify
from ahasd.tb.cocotb_run import params
from ahasd.tb.payloads import pack


def gdn_path(rng, S0, rank):
    """Fixed-point factors of a random accepted chain of ``rank`` GDN tokens from ``S0``."""
    d_k, d_v = S0.shape
    k = rng.normal(size=(rank, d_k))
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    q = rng.normal(size=(rank, d_k))
    v = rng.uniform(-1, 1, (rank, d_v))
    beta, g = rng.uniform(0, 1, rank), -rng.exponential(0.2, rank)
    _, f = factor_verify(S0 / 2 ** fixed.S_FRAC, list(range(-1, rank - 1)), q, k, v, beta, g)
    P = float(np.exp(f.G[-1])) if rank else 1.0
    w = np.exp(f.G[-1] - f.G) if rank else np.zeros(0)
    return (int(fixed.quantise(P, fixed.W_FRAC, signed=False)), fixed.quantise(f.k, fixed.K_FRAC),
            fixed.quantise(w, fixed.W_FRAC, signed=False), fixed.quantise(f.u, fixed.U_FRAC))


async def commit(dut, p, S, base, P, k, w, u):
    factors = factor_layout(max_rank=p["max_rank"], d_k=p["d_k"], d_v=p["d_v"], lanes=p["lanes"])
    for kind, t, index, data in fixed.load_sequence(P, k, w, u, lanes=p["lanes"]):
        dut.f__valid.value = 1
        bits = pack(factors, {"kind": FactorKind(kind), "t": t, "index": index, "data": data})
        for n in range(p["f_words"]):
            getattr(dut, f"f__payload{n}").value = (bits >> (64 * n)) & ((1 << 64) - 1)
        assert int(dut.f__ready.value)
        await FallingEdge(dut.clk)
    dut.f__valid.value = 0
    dut.rank.value = len(w)
    dut.base_row.value = base
    dut.start.value = 1
    await FallingEdge(dut.clk)
    dut.start.value = 0
    words_per = int(p["words"])
    bursts, cycles = [], 0
    rng = np.random.default_rng(len(w))
    while int(dut.busy.value):
        ready = int(rng.random() < p["ready_rate"])
        dut.o_stream__ready.value = ready
        if ready and int(dut.o_stream__valid.value):
            bursts.append(sum(int(getattr(dut, f"o_stream__payload{i}").value) << (64 * i)
                              for i in range(words_per)))
        await FallingEdge(dut.clk)
        cycles += 1
        assert cycles < 200_000, "commit did not finish"
    dut.o_stream__ready.value = 0
    assert int(dut.dram_error.value) == 0, f"DRAM timing violation {int(dut.dram_error_code.value)}"
    got = fixed.state_from_bursts(bursts, p["d_k"], p["d_v"], p["burst_bytes"])
    want = fixed.commit_fixed(S, P, k, w, u)
    bad = np.argwhere(got != want)
    assert not len(bad), f"rank {len(w)}: {len(bad)} elements differ, first at {bad[0]}"


@cocotb.test()
async def state_commit_matches_mirror(dut):
    p = params()
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    for name in ("f__valid", "start", "o_stream__ready"):
        getattr(dut, name).value = 0
    dut.rst.value = 1
    for _ in range(2):
        await FallingEdge(dut.clk)
    dut.rst.value = 0
    rng = np.random.default_rng(p["seed"])
    states = list(np.load(p["states"]))
    for n, rank in enumerate(p["ranks"]):
        which = n % len(states)
        S = states[which]
        if n % 3 == 2:   # extremes: random 16-bit factors, saturating results
            P = int(rng.integers(0, 1 << 16))
            k = rng.integers(-32768, 32768, (rank, p["d_k"]))
            w = rng.integers(0, 1 << 16, rank)
            u = rng.integers(-32768, 32768, (rank, p["d_v"]))
        else:
            P, k, w, u = gdn_path(rng, S, rank)
        await commit(dut, p, S, p["bases"][which], P, k, w, u)
