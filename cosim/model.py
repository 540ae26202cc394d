"""A Verilated block driven one clock cycle per input row (the vector mode of the harness).

:class:`VerilatedModel` keeps the simple row-per-cycle API over
:class:`ahasd.cosim.harness.Harness`: each row holds ``rst`` and the input values, each answer the
output values sampled after the inputs settle and before the rising edge (what a synchronous
consumer would capture at that edge). Blocks with handshakes, several clocks or a register bus use
:class:`~ahasd.cosim.harness.Harness` directly.
"""

from ahasd.cosim.build import build
from ahasd.cosim.harness import Harness

__all__ = ["VerilatedModel"]

#: Clock period of the single ``sync`` domain (arbitrary: only cycles are observable).
PERIOD_PS = 1000


class VerilatedModel:
    """A Verilated block stepped one clock cycle per row.

    Parameters
    ----------
    verilog : str
        Verilog text (e.g. from :func:`ahasd.hw.blocks.to_verilog`), with ``clk`` and ``rst``.
    top : str
        Top module name.
    inputs, outputs : list of (str, int)
        Port names and widths (:func:`ahasd.hw.blocks.port_list`), any width; ``rst`` is driven
        as the first input.

    The model is compiled once per distinct design into the cache. :meth:`run` drives a whole
    list of cycles from a fresh start (open loop, fastest); :meth:`step` drives one cycle at a
    time in a simulation that lasts until :meth:`close`.
    """

    def __init__(self, verilog, top, inputs, outputs):
        self.top = top
        self.inputs = [("rst", 1)] + list(inputs)
        self.outputs = list(outputs)
        self._args = (verilog, top, list(inputs), self.outputs)
        self._stepper = None
        self.binary = build(verilog, top, self._ports())

    def _ports(self):
        return [("clk", 1, True), ("rst", 1, True)] + \
            [(n, w, True) for n, w in self._args[2]] + [(n, w, False) for n, w in self.outputs]

    def _start(self):
        harness = Harness(*self._args, domains={"sync": ("clk", "rst", PERIOD_PS)})
        harness.vports("sync", [n for n, _ in self.inputs], [n for n, _ in self.outputs])
        return harness

    def run(self, cycles):
        """Drive ``cycles`` (an iterable of input tuples, ``rst`` first) from a fresh start and
        return the list of output tuples, one per cycle."""
        with self._start() as harness:
            result = harness.vectors(cycles)
            harness.run()
        return result.value

    def step(self, values):
        """Drive one cycle (input tuple, ``rst`` first) and return its output tuple."""
        if self._stepper is None:
            self._stepper = self._start()
        result = self._stepper.vectors([values])
        self._stepper.run()
        return result.value[0]

    def close(self):
        if self._stepper is not None:
            self._stepper.close()
            self._stepper = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
