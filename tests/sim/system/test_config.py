"""Configuration: shipped TOML loads into validated dataclasses; overrides; capacity checks."""

import re
from importlib import resources

import pytest

from ahasd.sim.system.config import ConfigError, load_config
from ahasd.sim.system.runner import simulate
from ahasd.sim.system.systems import CapacityError


def test_shipped_figures_and_names():
    cfg = load_config()
    assert cfg.npu.int8_tops == pytest.approx(16.384) and cfg.npu.chips == 2
    assert cfg.pim.internal_bw_gbps == 256.0 and cfg.pim.offchip_bw_gbps == 51.2
    assert cfg.pim.mem_gb == 64.0 and cfg.pim.t_rfc == 560 and cfg.pim.t_refi == 6240
    assert cfg.interconnect.width_bits == 512 and cfg.interconnect.latency_cycles == 10
    assert cfg.gpu.mem_gb == 16.0 and cfg.gpu.mem_bw_gbps > 0
    assert set(cfg.pairs) == {"opt", "llama2", "palm", "palm30", "qwen3"}


@pytest.mark.parametrize("name,billions", [("opt-1.3b", 1.3), ("opt-6.7b", 6.7),
                                           ("llama2-7b", 6.7), ("llama2-13b", 13.0),
                                           ("palm-8b", 8.6), ("palm-62b", 62.5),
                                           ("qwen3-8b", 8.2), ("qwen3-32b", 32.8)])
def test_model_shapes_give_their_public_sizes(name, billions):
    assert load_config().models[name].params / 1e9 == pytest.approx(billions, rel=0.04)


def test_every_figure_names_its_source():
    text = resources.files("ahasd.sim.system").joinpath("configs", "platform.toml").read_text()
    for line in text.splitlines():
        if re.match(r"^[a-z_0-9]+\s*=", line):
            assert "#" in line, f"no source comment: {line}"


def test_overrides_apply_and_validate():
    cfg = load_config(["pim.internal_bw_gbps=512", "npu.int8_tops=32", "gpu.mem_bw_gbps=1000"])
    assert (cfg.pim.internal_bw_gbps, cfg.npu.int8_tops, cfg.gpu.mem_bw_gbps) == (512, 32, 1000)
    with pytest.raises(ConfigError, match=r"unknown key pim\.bogus"):
        load_config(["pim.bogus=1"])
    with pytest.raises(ConfigError, match=r"unknown section 'nope'"):
        load_config(["nope.x=1"])
    with pytest.raises(ConfigError, match=r"npu\.compute_util must be in \(0, 1\], not 1\.5"):
        load_config(["npu.compute_util=1.5"])
    with pytest.raises(ConfigError, match=r"pim\.internal_bw_gbps must be > 0, not -1"):
        load_config(["pim.internal_bw_gbps=-1"])
    with pytest.raises(ConfigError, match=r"gpu\.mem_gb must be a number, not 'lots'"):
        load_config(["gpu.mem_gb=lots"])
    with pytest.raises(ConfigError, match=r"needs SECTION\.KEY=VALUE"):
        load_config(["pim"])


def test_malformed_toml_is_named():
    with pytest.raises(ConfigError, match=r"malformed TOML in platform\.toml"):
        load_config(platform_text="[npu\nint8_tops = ")


def test_an_override_changes_the_result():
    a = simulate("ahasd", "opt", "fixed", tokens=48, max_files=40)
    b = simulate("ahasd", "opt", "fixed", tokens=48, max_files=40,
                 overrides=["npu.int8_tops=1", "pim.offchip_bw_gbps=25.6"])
    assert b.time_s > a.time_s
    assert b.config["pim"]["offchip_bw_gbps"] == 25.6


def test_capacity_is_checked():
    with pytest.raises(CapacityError, match=r"GPU-only: llama2-7b 6\.8 GB, llama2-13b 13\.0 GB "
                                            r".* do not fit the 16\.0 GB of gpu; use --offload"):
        simulate("gpu", "llama2", "fixed", tokens=16, max_files=40)
    with pytest.raises(CapacityError, match=r"do not fit the 64\.0 GB of lpddr5-pim"):
        simulate("ahasd", "palm", "fixed", tokens=16, max_files=40)
    r = simulate("gpu", "llama2", "fixed", tokens=16, max_files=40, offload=True)
    assert r.offloaded and "PCIe 5.0 x16" in r.offloaded[0]
    fits = simulate("gpu", "opt", "fixed", tokens=16, max_files=40)
    assert fits.offloaded == []
