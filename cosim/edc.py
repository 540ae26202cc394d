"""The Verilated EDC RTL behind the golden model's event interface (RTL in the loop).

:class:`VerilatedEDC` compiles :class:`ahasd.hw.edc.EDC` with Verilator (cached) and runs events
through it on :class:`ahasd.cosim.harness.Harness`: drafts and verifies are pushed in batches into
one lane (one event per cycle, in order) and the decisions are collected on the C++ side;
decisions come back as :class:`ahasd.sim.blocks.edc.Decision`, so callers can swap it for the
golden :class:`ahasd.sim.blocks.edc.EDC` and compare line for line.
"""

from collections import deque
from itertools import islice

from ahasd.sim.blocks.edc import Decision, entropy_to_fx

__all__ = ["VerilatedEDC", "PORT_TABLES"]

#: The EDC's port names, in one place: per stream its valid port and payload ports, and how the
#: decision's (continue, index) come out of the decision's payload values. The first table whose
#: valid ports the block has is used: today's valid-only names, and the project's stream rule
#: (``<stream>__valid`` / ``<stream>__payload``; decision payload = continue in bit 0, index above).
PORT_TABLES = (
    {"draft": ("draft_valid", ("draft_entropy",)),
     "verify": ("verify_valid", ("verify_full",)),
     "decision": ("decision_valid", ("decision_continue", "decision_index")),
     "decode": lambda cont, index: Decision(bool(cont), index)},
    {"draft": ("draft__valid", ("draft__payload",)),
     "verify": ("verify__valid", ("verify__payload",)),
     "decision": ("decision__valid", ("decision__payload",)),
     "decode": lambda payload: Decision(bool(payload & 1), payload >> 1)},
)

#: Events per batch sent to the harness (bounded memory for any length of event stream), and
#: per part of a batch sent ahead (the harness simulates a part while Python encodes the next).
CHUNK = 32768
STRIDE = 4096


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
        dut = EDC(**params)
        inputs, outputs = port_list(dut)
        names = {name for name, _ in inputs + outputs}
        for table in PORT_TABLES:
            if all(table[s][0] in names for s in ("draft", "verify", "decision")):
                self.ports = table
                break
        else:
            raise RuntimeError(f"the EDC block has none of the known port names: {sorted(names)}")
        self._args = (to_verilog(dut, "edc"), "edc", inputs, outputs)
        self._harness = None
        self._stepping = False
        self.simulator_cpu_s = 0.0
        self._start()            # builds (or finds) the model now

    def _start(self):
        from ahasd.cosim.harness import Harness
        if self._harness is not None:
            self._harness.close()
        h = self._harness = Harness(*self._args, domains={"sync": ("clk", "rst", 1000)})
        t = self.ports
        self._draft = h.source("draft", "sync", t["draft"][0], None, t["draft"][1], lane="events")
        self._verify = h.source("verify", "sync", t["verify"][0], None, t["verify"][1],
                                lane="events")
        self._decision = h.sink("decision", "sync", t["decision"][0], None, t["decision"][1])
        h.reset("sync", 1)
        h.wait("sync", 1)
        self._stepping = False
        return h

    def run_events(self, events):
        """Run ``("draft", entropy_nats)`` / ``("verify", full)`` events (any iterable), one per
        cycle, from reset; return the decisions (one per draft)."""
        return list(self.iter_events(events))

    def iter_events(self, events):
        """:meth:`run_events` as a generator: the decisions of each batch are yielded as soon as
        the batch has run, so memory does not grow with the event stream (a replay of a 1 GB
        trace holds one batch)."""
        from ahasd.cosim.harness import paused_gc
        with paused_gc():
            yield from self._run_events(events)

    def _run_events(self, events):
        h = self._start()
        decode = self.ports["decode"]
        expected = deque()               # the cycle each pending decision must appear in
        cycle = 1                        # the cycle of the next event (0 was the reset)
        events = iter(events)
        while True:
            chunk = list(islice(events, CHUNK))
            if not chunk:
                break
            lines = h._lines
            for n, (op, value) in enumerate(chunk, 1):
                if n % STRIDE == 0:     # let the harness run these while the rest is encoded
                    h.drain("sync", 2 * STRIDE + 8)
                    h.send()
                if op == "draft":
                    lines.append(f"s 0 {entropy_to_fx(value):x}")
                    expected.append(cycle + 1)   # registered: visible one cycle later
                elif op == "verify":
                    lines.append(f"s 1 {int(bool(value))}")
                else:
                    raise ValueError(f"unknown EDC event {op!r}")
                cycle += 1
            del chunk
            h.drain("sync", 2 * n + 8)
            got = h.collect(self._decision)
            h.run()
            yield from self._check(got.value, expected, decode)
        h.wait("sync", 2)
        got = h.collect(self._decision)
        h.run()
        yield from self._check(got.value, expected, decode)
        if expected:
            raise RuntimeError(f"EDC RTL gave no decision in cycle {expected[0]}, one cycle "
                               f"after its draft")
        h.close()
        self.simulator_cpu_s = h.cpu_s or 0.0   # the harness process's CPU time of this run
        self._harness = None

    @staticmethod
    def _check(items, expected, decode):
        out = []
        for cycle, *values in items:
            want = expected.popleft() if expected else None
            if cycle != want:
                raise RuntimeError(f"EDC RTL gave a decision in cycle {cycle}; the next draft's "
                                   f"decision was due in cycle {want}")
            out.append(decode(*values))
        return out

    def step(self, draft_fx=None, verify=None):
        """One cycle, closed loop (as :meth:`ahasd.sim.blocks.edc.EDC.step`): returns the draft's
        :class:`Decision` or ``None``."""
        if not self._stepping:
            self._start()
            self._stepping = True
        h, t = self._harness, self.ports
        (dv, (dp,)), (vv, (vp,)) = t["draft"], t["verify"]
        h.set(vv, verify is not None)
        h.set(vp, bool(verify))
        h.set(dv, draft_fx is not None)
        h.set(dp, draft_fx or 0)
        h.wait("sync", 1)
        for port in (vv, vp, dv, dp):
            h.set(port, 0)
        if draft_fx is None:
            h.run()
            return None
        # The decision is registered: it is visible in the next cycle, which idles.
        valid, *values = [h.get(port) for port in (t["decision"][0],) + t["decision"][1]]
        h.wait("sync", 1)
        h.run()
        if not valid.value:
            raise RuntimeError("EDC RTL gave no decision one cycle after a draft")
        return self.ports["decode"](*(v.value for v in values))

    def close(self):
        if self._harness is not None:
            self._harness.close()
            self._harness = None
