"""DRAM timing sets and the clock definitions of ahasd.spec, against the figures they name."""

import pytest

from ahasd.sim.system.config import load_config
from ahasd.spec import clocks
from ahasd.spec.dram import TIMING_SETS, DRAMConfig, named_config
from ahasd.spec.tvc import DEFAULT_FREQ_RATIO


def test_the_jedec_set_is_the_default():
    assert named_config("jedec") == DRAMConfig()
    assert (DRAMConfig().t_refi, DRAMConfig().t_rfc) == (3120, 224)


def test_the_authors_set_is_what_the_platform_file_uses():
    cfg = named_config("authors")
    assert (cfg.t_refi, cfg.t_rfc) == (6240, 560)
    pim = load_config().pim
    assert (pim.t_refi, pim.t_rfc) == (cfg.t_refi, cfg.t_rfc)
    assert (pim.t_rrd_l, pim.t_faw) == (cfg.t_rrd, cfg.t_faw)
    assert cfg.t_rfcpb == cfg.t_rfc // 2
    assert named_config("authors", n_banks=8).n_banks == 8
    with pytest.raises(ValueError, match="name must be one of jedec, authors, not 'ddr4'"):
        named_config("ddr4")
    assert set(TIMING_SETS) == {"jedec", "authors"}


def test_clocks():
    assert (clocks.PIM_PERIOD_PS, clocks.NPU_PERIOD_PS) == (1250, 1000)
    assert (clocks.PIM_FREQ_MHZ, clocks.NPU_FREQ_MHZ) == (800.0, 1000.0)
    # 0.8 * 2**14 = 13107.2
    assert DEFAULT_FREQ_RATIO == 13107
    cfg = load_config()
    assert (cfg.pim.freq_mhz, cfg.npu.freq_mhz) == (800.0, 1000.0)
    assert load_config(["pim.freq_mhz=400"]).pim.freq_mhz == 400.0
