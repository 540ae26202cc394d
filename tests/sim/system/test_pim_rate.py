"""The PIM's MAC rate is derived from the RTL up (issue 20 point 1): units x burst bytes / tCCD x
f x the RTL's raw-bound efficiency; the old MAC-rate input is refused with a hint."""

import tomllib
from importlib import resources

import pytest

from ahasd.sim.system.config import ConfigError, load_config
from ahasd.sim.system.hardware import build_devices


def test_sixteen_units_of_6_4_g_are_the_authors_102_4_g():
    cfg = load_config()
    p = cfg.pim
    assert (p.units, p.unit_burst_bytes, p.t_ccd_s, p.freq_mhz) == (16, 32, 4, 800.0)
    # 32 B / 4 cycles x 800 MHz = 6.4 G MAC/s per unit, raw; 16 units = 102.4 G
    assert 32 / 4 * 800e6 == 6.4e9
    assert p.pim_mac_per_s == pytest.approx(16 * 6.4e9 * p.efficiency_raw)
    measured = tomllib.loads(resources.files("ahasd.sim.system").joinpath(
        "configs", "rtl_timing.toml").read_text())
    assert p.efficiency_raw == measured["pim"]["efficiency_raw"]
    assert 0.9 < p.efficiency_raw <= 1
    pim = build_devices(cfg)["pim"]
    # no AttAcc cap on the GEMV: the measured efficiency replaces it
    assert (pim.compute_util, pim.bw_util) == (1.0, 1.0)
    assert pim.macs_per_s == p.pim_mac_per_s
    assert pim.bytes_per_s == p.pim_mac_per_s        # 102 GB/s < the 256 GB/s cap


def test_units_scale_the_rate_until_the_internal_bandwidth_caps_it():
    four = load_config(["pim.units=64"]).pim               # one per bank group
    assert four.pim_mac_per_s == pytest.approx(64 * 6.4e9 * four.efficiency_raw)
    assert four.pim_bytes_per_s == 256e9
    assert load_config(["pim.units=256"]).pim.units_per_rank == 16     # one per bank


@pytest.mark.parametrize("units", [8, 24, 48, 512])
def test_units_must_be_whole_bank_groups_per_rank(units):
    with pytest.raises(ConfigError, match=rf"pim\.units must be pim\.ranks \(16\) x a divisor "
                                          rf"of pim\.banks_per_rank \(16\).*not {units}$"):
        load_config([f"pim.units={units}"])


@pytest.mark.parametrize("key", ["int8_gops", "compute_util", "gemv_efficiency"])
def test_the_old_inputs_fail_with_a_hint(key):
    with pytest.raises(ConfigError, match=rf"--set pim\.{key}: no longer an input: .*pim\."):
        load_config([f"pim.{key}=409.6"])
    with pytest.raises(ConfigError, match=r"pim\.int8_gops is no longer an input: .*pim\.units"):
        load_config(platform_text=resources.files("ahasd.sim.system").joinpath(
            "configs", "platform.toml").read_text().replace("[pim]\n", "[pim]\nint8_gops = 1\n"))


def test_memory_section_is_validated():
    assert load_config().memory.placement == "striped"
    with pytest.raises(ConfigError, match=r"memory\.placement must be one of striped, "
                                          r"partitioned, not 'mixed'"):
        load_config(["memory.placement=mixed"])
    with pytest.raises(ConfigError, match=r"memory\.draft_ranks must be in 1\.\.15 .*not 16"):
        load_config(["memory.placement=partitioned", "memory.draft_ranks=16"])


def test_pim_reads_pay_the_column_path():
    p = load_config().pim
    assert p.bank_pj_per_bit == pytest.approx(0.11 + 0.44 + 1.01)
    assert p.offchip_pj_per_bit == pytest.approx(0.11 + 0.44 + 1.01 + 1.23 + 1.0)
    assert load_config().hbm_pim.bank_pj_per_bit == pytest.approx(p.bank_pj_per_bit)
