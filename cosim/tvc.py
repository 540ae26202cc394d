"""Replay TVC transactions on the Verilated RTL (``ahasd tvc replay --rtl``, the ``tvc`` bench).

The block is stepped one cycle at a time over :class:`ahasd.synth.verilator.VerilatedModel`'s pipe
(closed loop: each transaction is held until its ``ready``), by the port driver
:func:`ahasd.tb.tvc_driver.drive`.
"""

from dataclasses import asdict

from ahasd.tb.tvc_driver import drive
from ahasd.sim.blocks.tvc import DEFAULT_FREQ_RATIO, TVCParams

__all__ = ["replay_rtl"]


def replay_rtl(ops, params=None, *, freq_ratio=DEFAULT_FREQ_RATIO, presets=None):
    """Run ``ops`` on the Verilated TVC (built with ``params``); return the
    :class:`ahasd.tb.tvc_driver.DriveResult`."""
    from ahasd.hw.blocks import port_list, to_verilog
    from ahasd.hw.tvc import TVC
    from ahasd.cosim.model import VerilatedModel

    p = params or TVCParams()
    dut = TVC(**asdict(p))
    inputs, outputs = port_list(dut)
    names_in = [name for name, _ in inputs]
    names_out = [name for name, _ in outputs]
    gen = drive(ops, p, freq_ratio=freq_ratio, presets=presets)
    with VerilatedModel(to_verilog(dut, "tvc"), "tvc", inputs, outputs) as model:
        values = next(gen)
        model.step((1,) + tuple(values.get(name, 0) for name in names_in))   # reset
        try:
            while True:
                sampled = model.step((0,) + tuple(values.get(name, 0) for name in names_in))
                values = gen.send(dict(zip(names_out, sampled)))
        except StopIteration as stop:
            return stop.value
