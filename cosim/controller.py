"""The controller top (:class:`ahasd.hw.controller.Controller`) on the Verilator harness.

Both clocks run: ``sync`` (the PIM clock, 1250 ps by default, with the AXI4-Lite port and the PIM
ends of the queues) and ``npu`` (1000 ps, the NPU ends of the draft and feedback queues). Every
stream of the top is a harness source or sink; :class:`VerilatedController` pushes descriptors,
collects what comes out (with the cycle of its domain), and reads and writes the registers over
AXI4-Lite, all in batches (:meth:`VerilatedController.run`).
"""

from functools import lru_cache

from ahasd.cosim.harness import Harness
from ahasd.spec.clocks import NPU_PERIOD_PS, PIM_PERIOD_PS

__all__ = ["VerilatedController", "SOURCES", "SINKS", "PIM_PERIOD_PS", "NPU_PERIOD_PS"]


#: Streams the harness drives: name -> (domain, valid, ready or None, payload ports).
SOURCES = {
    "draft_in": ("sync", "draft_in__valid", "draft_in__ready", ("draft_in__payload",)),
    "record": ("sync", "record__valid", "record__ready", ("record__payload",)),
    "draft_request": ("sync", "draft_request__valid", "draft_request__ready",
                      ("draft_request__payload",)),
    "feedback_in": ("npu", "feedback_in__valid", "feedback_in__ready", ("feedback_in__payload",)),
    "squash": ("npu", "squash", "squash_ready", ()),
}
#: Streams the harness collects: name -> (domain, valid, ready or None, payload ports).
SINKS = {
    "decision": ("sync", "decision__valid", None, ("decision__payload",)),
    "feedback_out": ("sync", "feedback_out__valid", "feedback_out__ready",
                     ("feedback_out__payload",)),
    "task": ("sync", "task__valid", None, ("task__payload",)),
    "draft_squash": ("sync", "draft_squash", None, ()),
    "draft_out": ("npu", "draft_out__valid", "draft_out__ready", ("draft_out__payload",)),
}


@lru_cache(maxsize=4)
def _design(params):
    """Verilog and ports of the controller with ``params`` (a tuple of items, nested dicts as
    tuples): the Verilog takes seconds to generate, so each parameter set is generated once."""
    from ahasd.hw.blocks import port_list, to_verilog
    from ahasd.hw.controller import Controller
    dut = Controller(**{k: dict(v) if isinstance(v, tuple) else v for k, v in params})
    inputs, outputs = port_list(dut)
    return to_verilog(dut, "controller"), inputs, outputs


class VerilatedController:
    """The Verilated controller with its two clocks, its streams and its register bus.

    Parameters
    ----------
    pim_period_ps, npu_period_ps : int
        Clock periods of the ``sync`` (PIM) and ``npu`` domains.
    **params
        Parameters of :class:`ahasd.hw.controller.Controller`.

    After construction both domains have been reset. ``log[name]`` accumulates, for each source,
    ``(cycle, waited)`` per accepted item (waited = cycles it was offered with ready low) and, for
    each sink, ``(cycle, value, ...)`` per item, in the cycles of the stream's domain; they are
    fetched by every :meth:`run`.
    """

    def __init__(self, *, pim_period_ps=PIM_PERIOD_PS, npu_period_ps=NPU_PERIOD_PS, **params):
        from ahasd.hw.csr import AXI_PREFIX
        from ahasd.hw.regmap import load
        key = tuple(sorted((k, tuple(sorted(v.items())) if isinstance(v, dict) else v)
                           for k, v in params.items()))
        verilog, inputs, outputs = _design(key)
        self.regmap = load()
        self.periods = {"sync": pim_period_ps, "npu": npu_period_ps}
        h = self.harness = Harness(
            verilog, "controller", inputs, outputs,
            domains={"sync": ("clk", "rst", pim_period_ps), "npu": ("npu_clk", "npu_rst",
                                                                    npu_period_ps)})
        self.sources = {name: h.source(name, domain, valid, ready, payload, log=True,
                                       timeout=1 << 40)
                        for name, (domain, valid, ready, payload) in SOURCES.items()}
        self.sinks = {name: h.sink(name, domain, valid, ready, payload)
                      for name, (domain, valid, ready, payload) in SINKS.items()}
        self.bus = h.axil(AXI_PREFIX, "sync")
        self.log = {name: [] for name in list(SOURCES) + list(SINKS)}
        h.reset("sync", 4)
        h.reset("npu", 4)
        h.wait("sync", 8)
        self.run()

    def time_ps(self, domain, cycle):
        """Simulated time of the rising edge ``cycle`` of ``domain`` (the clocks start at 0)."""
        return (cycle + 1) * self.periods[domain]

    # ---- streams and plain inputs -------------------------------------------------------------
    def push(self, stream, *values):
        """Queue an item on source ``stream`` (payload values; none for squash)."""
        self.harness.push(self.sources[stream], *values)

    def gaps(self, stream, p_idle, seed):
        self.harness.gaps(self.sources[stream], p_idle, seed)

    def ready(self, stream, pattern):
        """Ready of a sink: ``"always"``, ``"never"``, a bit string or ``(p_high, seed)``."""
        self.harness.ready(self.sinks[stream], pattern)

    def task_done(self, pattern):
        """Drive ``task_done`` after each PIM edge: ``"always"``, ``"never"``, a bit string or
        ``(p_high, seed)`` (the PIM ranks finish their tasks at random)."""
        self.harness.drive("task_done", "sync", pattern)

    def set(self, port, value):
        self.harness.set(port, value)

    def set_tvc_inputs(self, kv_len, now, pending):
        for name, value in (("kv_len", kv_len), ("now", now), ("pending", pending)):
            self.harness.set(f"tvc_inputs__{name}", value)

    def wait(self, cycles, domain="sync"):
        self.harness.wait(domain, cycles)

    def pending(self, stream):
        """Result: items of source ``stream`` not yet accepted."""
        return self.harness.pending(stream)

    # ---- registers ---------------------------------------------------------------------------
    def read(self, address, max_cycles=1000):
        """Result ``(data, resp)`` of an AXI4-Lite read (sent with the next :meth:`run`)."""
        return self.harness.axil_read(self.bus, address, max_cycles)

    def write(self, address, data, strobe=0xF, max_cycles=1000):
        """Result ``resp`` of an AXI4-Lite write (sent with the next :meth:`run`)."""
        return self.harness.axil_write(self.bus, address, data, strobe, max_cycles)

    def read_reg(self, ident):
        """Read register ``ident`` now (runs the batch); raise unless the answer is OKAY."""
        result = self.read(self.regmap[ident].address)
        self.run()
        value, resp = result.value
        if resp != 0:
            raise RuntimeError(f"read of {ident} answered {resp}")
        return value

    def write_reg(self, ident, value):
        """Write register ``ident`` now (runs the batch); raise unless the answer is OKAY."""
        result = self.write(self.regmap[ident].address, value)
        self.run()
        if result.value != 0:
            raise RuntimeError(f"write of {ident} answered {result.value}")

    # ---- batches -----------------------------------------------------------------------------
    def run(self):
        """Send the queued batch, then fetch every stream's log into :attr:`log`."""
        h = self.harness
        h.run()
        fetched = {name: h.accepted(index) for name, index in self.sources.items()}
        fetched.update({name: h.collect(index) for name, index in self.sinks.items()})
        h.run()
        for name, result in fetched.items():
            self.log[name] += result.value

    def close(self):
        self.harness.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
