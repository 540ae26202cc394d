"""Runs tests/firmware/cocotb_driver.py: the Python driver over AxiLiteMaster on the Verilated
controller."""

import pytest

from ahasd.hw.controller import Controller


@pytest.mark.cocotb
def test_driver_over_axilite_on_the_controller():
    from ahasd.tb.cocotb_run import run_cocotb
    depths = {"draft_depth": 8, "feedback_depth": 4, "preverify_depth": 4}
    run_cocotb(Controller(**depths), "controller", "cocotb_driver", params=depths)
