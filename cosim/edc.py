"""The Verilated EDC RTL behind the golden model's event interface (RTL in the loop).

:class:`VerilatedEDC` compiles :class:`ahasd.hw.edc.EDC` with Verilator (cached) and runs events
through it; decisions come back as :class:`ahasd.sim.blocks.edc.Decision`, so callers can swap it for the
golden :class:`ahasd.sim.blocks.edc.EDC` and compare line for line.
"""

from ahasd.sim.blocks.edc import Decision, entropy_to_fx

__all__ = ["VerilatedEDC"]


class VerilatedEDC:
    """EDC RTL (variant ``committed``) compiled with Verilator.

    Parameters
    ----------
    **params
        Hardware parameters of :class:`ahasd.hw.edc.EDC`.

    Each event takes one clock cycle; :meth:`step` also models a verify and a draft in the same
    cycle (verify first, the documented ordering).
    """

    def __init__(self, **params):
        from ahasd.hw.blocks import port_list, to_verilog
        from ahasd.hw.edc import EDC
        from ahasd.cosim.model import VerilatedModel
        dut = EDC(**params)
        inputs, outputs = port_list(dut)
        self._in = [name for name, _ in inputs]
        self._out = {name: i for i, (name, _) in enumerate(outputs)}
        self._model = VerilatedModel(to_verilog(dut, "edc"), "edc", inputs, outputs)
        self._reset_done = False

    def _cycle(self, draft_fx=None, verify=None, rst=0):
        values = {"draft_valid": draft_fx is not None, "draft_entropy": draft_fx or 0,
                  "verify_valid": verify is not None, "verify_full": bool(verify)}
        return (rst,) + tuple(int(values[name]) for name in self._in)

    def _decision(self, outputs):
        if not outputs[self._out["decision_valid"]]:
            raise RuntimeError("EDC RTL gave no decision one cycle after a draft")
        return Decision(bool(outputs[self._out["decision_continue"]]),
                        outputs[self._out["decision_index"]])

    def run_events(self, events):
        """Run ``("draft", entropy_nats)`` / ``("verify", full)`` events, one per cycle, from
        reset; return the decisions (one per draft)."""
        cycles = [self._cycle(rst=1)]
        drafts = []
        for op, value in events:
            if op == "draft":
                drafts.append(len(cycles))
                cycles.append(self._cycle(draft_fx=entropy_to_fx(value)))
            elif op == "verify":
                cycles.append(self._cycle(verify=bool(value)))
            else:
                raise ValueError(f"unknown EDC event {op!r}")
        cycles.append(self._cycle())
        outputs = self._model.run(cycles)
        return [self._decision(outputs[n + 1]) for n in drafts]

    def step(self, draft_fx=None, verify=None):
        """One cycle, closed loop (as :meth:`ahasd.sim.blocks.edc.EDC.step`): returns the draft's
        :class:`Decision` or ``None``."""
        if not self._reset_done:
            self._model.step(self._cycle(rst=1))
            self._reset_done = True
        self._model.step(self._cycle(draft_fx, verify))
        if draft_fx is None:
            return None
        # The decision is registered: it is visible in the next cycle, which idles.
        return self._decision(self._model.step(self._cycle()))

    def close(self):
        self._model.close()
