"""The controller board top: it elaborates for the ULX3S with the UART bridge on the board's
UART; the full bitstream build (a few minutes) is a regression."""

import pytest

from ahasd.synth.boards import BOARDS, ControllerBoardTop, build_board


def test_board_top_prepares_with_the_bridge_and_the_controller():
    plan = BOARDS["ulx3s"]().prepare(ControllerBoardTop(), name="top")
    rtlil = plan.files["top.il"]
    assert "module \\top.bridge" in rtlil and "module \\top.ctrl.tvc" in rtlil
    lpf = plan.files["top.lpf"]
    # The FTDI UART's rx and tx pins.
    assert 'COMP "uart_0__rx__io" SITE "M1"' in lpf and 'COMP "uart_0__tx__io" SITE "L4"' in lpf


@pytest.mark.regress
def test_ulx3s_bitstream(tmp_path):
    bitstream = build_board("ulx3s", tmp_path)
    assert bitstream.stat().st_size > 100_000
