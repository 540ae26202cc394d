"""ahasd.hw.controller.Controller: parameters, lint, and the cocotb tests (tests/hw/cocotb_controller.py)."""

import pytest

from ahasd.hw.controller import Controller


def test_parameters_are_validated():
    with pytest.raises(ValueError, match=r"draft_depth must be a power of two >= 2, not 6"):
        Controller(draft_depth=6)
    with pytest.raises(ValueError, match=r"edc must be a dict of parameters or None, not int 3"):
        Controller(edc=3)
    with pytest.raises(ValueError, match=r"addr_width 7 is too narrow"):
        Controller(addr_width=7)
    with pytest.raises(ValueError, match=r"tvc cycles_bits must be 32 to fit the feedback "
                                         r"descriptor's cycles, not 24"):
        Controller(tvc={"cycles_bits": 24})
    with pytest.raises(ValueError, match=r"tvc counter_bits must be in 1\.\.16 to fit the "
                                         r"16-bit TVC_ERRORS register, not 20"):
        Controller(tvc={"counter_bits": 20})
    with pytest.raises(ValueError, match=r"edc fifo_depth_log2 must be in 0\.\.7 to fit the "
                                         r"8-bit EDC_STATUS.pending field, not 8"):
        Controller(edc={"fifo_depth_log2": 8})


def test_lint_clean(tmp_path):
    from ahasd.synth.export import write_verilog
    write_verilog("controller", tmp_path)


@pytest.mark.cocotb
@pytest.mark.slow
def test_controller_cocotb():
    from ahasd.tb.cocotb_run import run_cocotb
    # Small queues, so that full queues, push-back and threshold crossings happen often.
    depths = {"draft_depth": 8, "feedback_depth": 4, "preverify_depth": 4}
    run_cocotb(Controller(**depths), "controller", "cocotb_controller",
               params={**depths, "addr_width": 8, "seed": 11, "transactions": 10000})
