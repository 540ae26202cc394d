"""The SpecLA cost model: shapes, counts, and the hardware loader's checks."""

import math

import pytest

from ahasd.sim.specla import costs
from ahasd.sim.specla.hardware import Hardware, load_hardware

HW = load_hardware()


def test_gdn_1_3b_shapes():
    m = costs.GDN_1_3B
    assert (m.n_layers, m.d_model, m.d_mlp, m.vocab) == (16, 2400, 5888, 32000)
    assert (m.n_heads, m.d_k, m.d_v) == (9, 200, 400)
    assert 1.25e9 < m.params < 1.35e9
    assert (costs.GDN_0_4B.d_k, costs.GDN_0_4B.d_v) == (128, 256)


def test_counts():
    m, b = costs.GDN_1_3B, 4
    s = m.d_k * m.d_v * m.n_heads
    assert costs.tree_verify(m, 8, b).bytes - costs.seq_verify(m, 8, b).bytes == -15 * s * b
    one, replay = costs.factor_commit(m, 1, b), costs.replay_commit(m, 1, b)
    # One token: same traffic and launches; replay recomputes u (S^T k), the factor commit not.
    assert (one.bytes, one.launches) == (replay.bytes, replay.launches)
    assert (one.vector_flops, replay.vector_flops) == (3 * s, 5 * s)
    fused = costs.fused_deferred(m, 4, 5, b)
    apart = costs.factor_commit(m, 4, b) + costs.tree_verify(m, 5, b)
    assert apart.bytes - fused.bytes == s * b and (apart.launches, fused.launches) == (2, 1)
    assert costs.expected_accepted(0.5, 3) == 0.5 + 0.25 + 0.125


@pytest.mark.parametrize("key", ["h100", "pim"])
def test_ratios_grow_with_path_and_tree(key):
    hw, m = HW[key], costs.GDN_1_3B
    b = hw.state_bytes
    factor = [costs.replay_commit(m, a, b).seconds(hw)
              / costs.factor_commit(m, a, b, hw).seconds(hw) for a in (1, 2, 4, 8, 16)]
    assert factor[0] >= 1 and factor == sorted(factor)
    tree = [costs.seq_verify(m, n, b).seconds(hw) / costs.tree_verify(m, n, b).seconds(hw)
            for n in (2, 4, 8)]
    assert all(r > 1 for r in tree)


def test_speedup_needs_acceptance():
    gpu = HW["h100"]
    low = costs.speedup(costs.GDN_1_3B, costs.GDN_0_4B, gpu, mode="deferred", alpha=0.3)
    high = costs.speedup(costs.GDN_1_3B, costs.GDN_0_4B, gpu, mode="deferred", alpha=0.99)
    assert low < 1 < high
    with pytest.raises(ValueError, match="mode must be one of replay, factor, deferred, not 'x'"):
        costs.speedup(costs.GDN_1_3B, costs.GDN_0_4B, gpu, mode="x", alpha=0.5)


def test_pim_factor_commit_takes_the_rtl_cycles():
    """On the PIM a factor commit is the state-commit units' measured cycles (the shipped
    rtl_timing.toml), not a roofline kernel; the H100 keeps the roofline."""
    import tomllib

    from ahasd.sim.specla.hardware import RTL_TIMING_TOML
    with open(RTL_TIMING_TOML, "rb") as f:
        table = tomllib.load(f)["state_commit"]
    pim, m = HW["pim"], costs.GDN_1_3B
    assert (pim.commit_units, pim.commit_cycles_per_burst) == (16, table["cycles_per_burst"])
    bursts = 200 * 400 * 2 // table["burst_bytes"]            # one head, int16
    per_head = table["base_cycles"] + table["cycles_per_burst"] * bursts
    vectors = 4 * (200 + 400) * 2 * 9                         # A = 4, 9 heads
    want = pim.launch_s + vectors / (pim.mem_bytes_per_s * pim.bw_util) + per_head / 800e6
    assert costs.factor_commit(m, 4, 2, pim).seconds(pim) == pytest.approx(want, rel=1e-12)
    # 9 heads on 16 units: one round; 4 units: three.
    four = Hardware(**{**pim.__dict__, "commit_units": 4})
    assert costs.factor_commit(m, 4, 2, four).unit_s == pytest.approx(3 * per_head / 800e6)
    gpu = HW["h100"]
    assert gpu.commit_units == 0
    assert costs.factor_commit(m, 4, 4, gpu) == costs.factor_commit(m, 4, 4)
    with pytest.raises(ValueError, match="commit_units must be an integer >= 0, not -1"):
        Hardware(**{**pim.__dict__, "commit_units": -1})
    with pytest.raises(ValueError, match="commit_cycles_per_burst must be a positive number"):
        Hardware(**{**pim.__dict__, "commit_cycles_per_burst": 0.0})


def test_hardware_checks(tmp_path):
    base = dict(HW["pim"].__dict__)
    with pytest.raises(ValueError, match=r"bw_util must be a finite number in \(0, 1\], not 1.5"):
        Hardware(**{**base, "bw_util": 1.5})
    with pytest.raises(ValueError, match="mem_bytes_per_s must be a positive number, not 0"):
        Hardware(**{**base, "mem_bytes_per_s": 0})
    with pytest.raises(ValueError, match="clock_hz must be a positive number, not nan"):
        Hardware(**{**base, "clock_hz": math.nan})
    bad = tmp_path / "hw.toml"
    bad.write_text('[gpu]\nname = "x"\n')
    with pytest.raises(ValueError, match=r"\[gpu\]: .*missing"):
        load_hardware(bad)
