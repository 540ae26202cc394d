"""The simulator's RTL cycle table (configs/rtl_timing.toml) against the RTL, re-measured.

The AAU model is compared with the Amaranth AAU at a size the table was not fitted on (within
5 %, the GEMV model's tolerance); the EDC, TVC and GTS figures must equal the RTL's exactly.
"""

import tomllib
from importlib import resources

import pytest

from ahasd.bench.rtl_timing import (
    AAU_OPS,
    AAU_SIZES,
    aau_cycles,
    commit_cycles,
    edc_latency,
    fit_line,
    gemv_efficiency_raw,
    gts_switch_cycles,
    toml_text,
    tvc_latency,
)
from ahasd.sim.system.config import ConfigError, load_config
from ahasd.sim.system.hardware import AauTiming, build_devices
from ahasd.sim.system.workload import Work

KIND = {"softmax": "softmax", "gelu": "act", "layernorm": "norm"}


def shipped(name):
    return resources.files("ahasd.sim.system").joinpath("configs", name).read_text()


@pytest.mark.slow
@pytest.mark.parametrize("op", list(AAU_OPS))
def test_aau_model_matches_the_rtl_within_5_percent(op):
    n = 48                                   # three requests: not one of the fitted sizes
    assert n not in AAU_SIZES
    one = AauTiming.from_config(load_config().aau, 1, 1.0)
    assert one.cycles(KIND[op], n) == pytest.approx(aau_cycles(op, n, seed=9), rel=0.05)


@pytest.mark.slow
def test_gemv_efficiency_is_the_rtl_s():
    """Re-measured on another slice than the table's (one 32-lane tile of a 4096-wide row):
    within 1 % (the efficiency is the refresh and pipeline loss, nearly shape-independent)."""
    eff, cycles = gemv_efficiency_raw(32, 4096, seed=5)
    assert cycles > 32 * 4096 / 8
    assert load_config().pim.efficiency_raw == pytest.approx(eff, rel=0.01)


@pytest.mark.slow
def test_state_commit_cycles_are_the_rtl_s():
    """Re-measured on a state the table was not fitted on (24 x 128, 192 bursts; other
    factors): the fitted line within 1 %, and the SpecLA cost model's PIM reads the table."""
    from ahasd.sim.specla.hardware import load_hardware
    table = tomllib.loads(shipped("rtl_timing.toml"))["state_commit"]
    cycles, bursts = commit_cycles(24, seed=7)
    assert bursts == 24 * 128 * 2 // 32 and cycles > bursts * 4
    assert table["base_cycles"] + table["cycles_per_burst"] * bursts == pytest.approx(
        cycles, rel=0.01)
    assert load_hardware()["pim"].commit_cycles_per_burst == table["cycles_per_burst"]


def test_decision_latencies_are_the_rtl_s():
    ctl = load_config().controller
    assert (ctl.edc_cycles, ctl.tvc_cycles, ctl.gts_switch_cycles) == (
        edc_latency(), tvc_latency(), gts_switch_cycles())


def test_the_platform_file_types_in_no_measured_figure():
    measured = tomllib.loads(shipped("rtl_timing.toml"))
    platform = tomllib.loads(shipped("platform.toml"))
    for section, values in measured.items():
        assert not set(values) & set(platform.get(section, {})), section
    assert "ahasd bench rtl-timing" in shipped("rtl_timing.toml")


def test_measured_keys_can_be_overridden():
    cfg = load_config(["controller.edc_cycles=4", "aau.gelu_cycles_per_elem=1.0"])
    assert cfg.controller.edc_cycles == 4 and cfg.aau.gelu_cycles_per_elem == 1.0
    with pytest.raises(ConfigError, match=r"aau\.lanes must be > 0, not 0"):
        load_config(["aau.lanes=0"])


def test_the_table_text_round_trips():
    figures = {"lanes": 16, "edc_cycles": 1, "tvc_cycles": 3, "gts_switch_cycles": 1,
               "gemv": {"m": 64, "n": 2048, "cycles": 16463, "raw_cycles": 16384,
                        "efficiency_raw": 16384 / 16463},
               "state_commit": {"burst_bytes": 32, "base_cycles": 54.0, "cycles_per_burst": 4.0,
                                "points": [(128, 566), (256, 1078)]},
               "aau": {op: {"points": [(16, 10), (32, 20)], "base_cycles": -1e-15,
                            "cycles_per_elem": 0.625} for op in AAU_OPS}}
    table = tomllib.loads(toml_text(figures))
    assert table["aau"]["softmax_base_cycles"] == 0.0
    assert table["aau"]["layernorm_cycles_per_elem"] == 0.625
    assert table["controller"] == {"edc_cycles": 1, "tvc_cycles": 3, "gts_switch_cycles": 1}
    assert table["pim"] == {"efficiency_raw": 0.9952}
    assert table["state_commit"] == {"burst_bytes": 32, "base_cycles": 54.0,
                                     "cycles_per_burst": 4.0}


def test_fit_and_padding():
    a, b, worst = fit_line([(16, 30), (32, 56), (64, 108)])
    assert (a, b) == (pytest.approx(4.0), pytest.approx(1.625)) and worst < 1e-12
    t = AauTiming(16, 4, 1e6, {"softmax": (2.0, 1.625), "act": (0.0, 0.5), "norm": (0.0, 4.375)})
    # 65 elements over 4 AAUs: 17 each, padded to two 16-lane requests
    assert t.cycles("softmax", 65) == 2.0 + 1.625 * 32
    assert t.cycles("act", 0) == 0.0
    w = Work(0.0, 0.0, softmax_elems=64, act_elems=64, norm_elems=64)
    assert t.seconds(w) == pytest.approx((2 + 26 + 8 + 70) / 1e6)
    with pytest.raises(ValueError, match=r"n must be a positive multiple of 16, not 20"):
        aau_cycles("gelu", 20)
    with pytest.raises(ValueError, match=r"AAU operator must be one of .*, not 'exp'"):
        aau_cycles("exp", 16)


def test_the_pim_charges_the_aau_cycles():
    cfg = load_config()
    pim = build_devices(cfg)["pim"]
    units = cfg.pim.ranks           # one AAU per rank
    w = Work(0.0, 0.0, softmax_elems=16 * units, act_elems=0, norm_elems=0)
    assert pim.nonlinear_s(w) == pytest.approx(
        (cfg.aau.softmax_base_cycles + 16 * cfg.aau.softmax_cycles_per_elem)
        / (cfg.pim.freq_mhz * 1e6))
