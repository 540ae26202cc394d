"""cocotb + Verilator tier: the state-commit system over random accepted paths, against the
fixed-point mirror: in ``make test`` a 4-lane unit (8-byte bursts, head 32 x 32, A up to 4: the
configuration that places on ECP5-25k; a Verilator build of minutes), under ``make regress`` the
default (32-byte bursts, head 128 x 128, A up to 16; its gate-level carry-save lanes take Verilator
tens of minutes to compile)."""

import numpy as np
import pytest

from ahasd.sim.specla.fixed import state_layout
from ahasd.spec.dram import DRAMConfig
from ahasd.tb.cocotb_run import run_cocotb
from ahasd.tb.state_commit_system import StateCommitSystem


def run(tmp_path, ranks, seed, *, d=128, max_rank=16, burst_bytes=32):
    d_k = d_v = d
    config = DRAMConfig(rows=8, burst_bytes=burst_bytes)   # two states of at most 32 KiB: global rows 0..15, 16..31
    rng = np.random.default_rng(21)
    states = [rng.integers(-4096, 4096, (d_k, d_v)), rng.integers(-32768, 32768, (d_k, d_v))]
    per_row = config.bursts_per_row
    bases = [0, 16]
    init = [0] * (config.rows * config.n_banks * per_row)
    for S, base in zip(states, bases):
        words = state_layout(S, config.burst_bytes)
        init[base * per_row:base * per_row + len(words)] = words
    dut = StateCommitSystem(config=config, init=init, d_k=d_k, d_v=d_v, max_rank=max_rank)
    # The states go by file: too large for the environment variable that carries the params.
    np.save(tmp_path / "states.npy", np.array(states))
    run_cocotb(dut, "state_commit_system", "cocotb_state_commit",
               params={"seed": seed, "d_k": d_k, "d_v": d_v, "burst_bytes": config.burst_bytes,
                       "words": dut.words, "f_words": dut.f_words, "lanes": dut.unit.lanes,
                       "max_rank": max_rank,
                       "states": str(tmp_path / "states.npy"), "bases": bases,
                       "ranks": ranks, "ready_rate": 0.8})


@pytest.mark.cocotb
def test_state_commit_rtl_matches_mirror_small(tmp_path):
    run(tmp_path, [4, 1, 4, 3, 0, 2, 4, 1, 4, 3], seed=3, d=32, max_rank=4, burst_bytes=8)


@pytest.mark.cocotb
@pytest.mark.regress
def test_state_commit_rtl_matches_mirror(tmp_path):
    run(tmp_path, [16, 1, 16, 7, 0, 12, 16, 3, 16, 9], seed=3)


@pytest.mark.cocotb
@pytest.mark.regress
def test_state_commit_rtl_matches_mirror_long(tmp_path):
    ranks = np.random.default_rng(8).integers(0, 17, 200).tolist()
    run(tmp_path, ranks, seed=8)
