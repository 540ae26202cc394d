"""Formal proofs across the clock crossing: the feedback queue (``AsyncFIFO``) on two free clocks.

Block ``async_fifo`` of :mod:`ahasd.synth.formal`: the feedback queue
(:class:`ahasd.hw.queues.DescriptorQueue`, NPU -> PIM, the real
:data:`~ahasd.hw.descriptors.FeedbackDescriptor` layout, depth :data:`ASYNC_DEPTH`) with its two
clock domains kept apart. sby runs with ``multiclock on``: yosys' ``clk2fflogic`` turns every
flip-flop into logic sampled at the solver's global clock (``$global_clock``), and both clocks
are free inputs, so a step may have a rising edge of either clock, of both or of none. The
proof covers every ratio and phase of the two clocks (one much faster than the other, equal,
drifting), not the one-clock ordering of :mod:`ahasd.synth.formal`'s ``queues.feedback_fifo``.
Metastability is not modelled (a synchroniser flop takes its input's value at the edge); that
part of the argument stays the Gray code's (one bit changes per increment, so a late sample is
the old or the new pointer).

The wrapper keeps its bookkeeping in the domain of the event it counts: pushes (and the
symbolic watched entry, chosen by the free input ``watch`` at a push) in the write domain,
pops in the read domain. Properties:

* ``fifo_contract``: whenever the queue offers an entry, something was pushed and not yet
  popped (none invented or duplicated), and the offered entry, when it is the watched push's
  turn, carries the watched data (none lost, reordered or corrupted);
* ``level_bounds``: the write side never accepts a push into ``ASYNC_DEPTH`` unpopped entries
  (the full flag, computed from the synchronised read pointer, is never optimistic), so there
  are never more than ``ASYNC_DEPTH``.
"""

from amaranth import ClockDomain, ClockSignal, Module, ResetSignal, Signal, Value
from amaranth.hdl import Assert, Assume, DomainRenamer, EnableInserter
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from ahasd.synth import formal

__all__ = ["ASYNC_DEPTH", "ASYNC_WIDTH", "PROPERTIES", "MUTANTS"]

#: Depth proved across the crossing (the pointers have one more bit than the address).
ASYNC_DEPTH = 4
#: Payload bits across the crossing: the queue logic does not look at the payload, and with the
#: data symbolic two bits tell any two entries apart (the real layouts: the one-clock proofs).
ASYNC_WIDTH = 2
#: Write and read domains of the feedback queue.
W_DOMAIN, R_DOMAIN = "npu", "pim"
_COUNT_BITS = 6                   # pushes and pops counted mod 64: more than the depth can reach

PROPERTIES = [
    formal.Property("async_fifo", "fifo_contract", "bmc", 20,
                    "clock enables: an offered entry was pushed and not yet popped, the watched "
                    "push read back with its data", mutant_depth=20, memory_map=True),
    formal.Property("async_fifo", "level_bounds", "bmc", 20,
                    "clock enables: no push accepted into a full queue (never more than the "
                    "depth unpopped)", mutant_depth=20, memory_map=True),
    formal.Property("async_fifo", "fifo_contract_2clk", "bmc", 12,
                    "free clocks (multiclock on): the fifo_contract check", mutant_depth=12,
                    multiclock=True, memory_map=True),
]

MUTANTS = {
    "fifo_contract": "o_stream.valid from the write side's level (not the synchronised pointer)",
    "level_bounds": "i_stream.ready from the read side's level (not the synchronised pointer)",
    "fifo_contract_2clk": "o_stream.valid from the write side's level (not the synchronised "
                          "pointer)",
}


def _valid_from_w_level(m, q):
    m.d.comb += q.o_stream.valid.eq(m.submodules.fifo.w_level != 0)


def _ready_from_r_level(m, q):
    m.d.comb += [q.i_stream.ready.eq(m.submodules.fifo.r_level != ASYNC_DEPTH),
                 m.submodules.fifo.w_en.eq(q.i_stream.valid & q.i_stream.ready)]


def _dut(mutant=None):
    from amaranth.lib import data

    from ahasd.hw.queues import DescriptorQueue
    cls = DescriptorQueue
    mutation = {"fifo_contract": _valid_from_w_level,
                "level_bounds": _ready_from_r_level}.get(mutant)
    if mutation is not None:
        cls = formal._subclass(cls, mutation)
    return cls(layout=data.StructLayout({"data": ASYNC_WIDTH}), depth=ASYNC_DEPTH, w_domain=W_DOMAIN,
               r_domain=R_DOMAIN)


class _Harness(wiring.Component):
    """The queue with both clock domains (no reset after the start), the free inputs, the checks.

    ``clocking`` ``"enables"``: one global clock, each domain's registers (the queue's and the
    wrapper's bookkeeping in that domain) advance in the steps where its free enable is high
    (``EnableInserter``): any pattern of edges of either, both or neither clock, one edge a
    step. ``"multiclock"``: the clocks themselves are free inputs (sby ``multiclock on``)."""

    def __init__(self, selected, dut, clocking):
        self.block, self.selected, self.dut, self.clocking = "async_fifo", selected, dut, clocking
        inputs = formal._inputs(dut)
        tick = "clk" if clocking == "multiclock" else "en"
        super().__init__({**{name: In(len(Value.cast(v))) for name, v in inputs.items()},
                          "watch": In(1), f"{W_DOMAIN}_{tick}": In(1), f"{R_DOMAIN}_{tick}": In(1)})

    def elaborate(self, platform):
        m = Module()
        core = self._core()
        if self.clocking == "multiclock":
            m.domains.npu = ClockDomain(W_DOMAIN)
            m.domains.pim = ClockDomain(R_DOMAIN)
            m.submodules.core = core
            m.d.comb += [ClockSignal(W_DOMAIN).eq(getattr(self, f"{W_DOMAIN}_clk")),
                         ClockSignal(R_DOMAIN).eq(getattr(self, f"{R_DOMAIN}_clk")),
                         ResetSignal(W_DOMAIN).eq(0), ResetSignal(R_DOMAIN).eq(0)]
        else:
            enables = {W_DOMAIN: getattr(self, f"{W_DOMAIN}_en"),
                       R_DOMAIN: getattr(self, f"{R_DOMAIN}_en")}
            m.submodules.core = DomainRenamer({W_DOMAIN: "sync", R_DOMAIN: "sync"})(
                EnableInserter(enables)(core))
            m.d.comb += Assume(~ResetSignal("sync"))
        return m

    def _core(self):
        """The queue and the bookkeeping, each register in the domain of what it counts."""
        m = Module()
        m.submodules.dut = dut = self.dut
        for name, value in formal._inputs(dut).items():
            m.d.comb += Value.cast(value).eq(getattr(self, name))
        push = dut.i_stream.valid & dut.i_stream.ready
        pop = dut.o_stream.valid & dut.o_stream.ready
        width = len(dut.i_stream.payload.as_value())
        pushes = Signal(_COUNT_BITS, name="m_pushes")
        pops = Signal(_COUNT_BITS, name="m_pops")
        armed = Signal(name="m_armed")
        w_seq = Signal(_COUNT_BITS, name="m_w_seq")
        w_data = Signal(width, name="m_w_data")
        m.d[W_DOMAIN] += pushes.eq(pushes + push)
        with m.If(push & self.watch & ~armed):
            m.d[W_DOMAIN] += [armed.eq(1), w_seq.eq(pushes),
                              w_data.eq(dut.i_stream.payload.as_value())]
        m.d[R_DOMAIN] += pops.eq(pops + pop)
        unpopped = (pushes - pops)[:_COUNT_BITS]
        # A push or pop counts only on its domain's edge: with enables, in the steps where the
        # domain's enable is high (the comb checks below see the same push and pop signals).
        if self.clocking == "enables":
            push = push & getattr(self, f"{W_DOMAIN}_en")
        checks = {
            "fifo_contract": ~dut.o_stream.valid | (
                (unpopped != 0) & (unpopped <= ASYNC_DEPTH) &
                (~armed | (w_seq != pops) | (dut.o_stream.payload.as_value() == w_data))),
            "level_bounds": (~push | (unpopped < ASYNC_DEPTH)) & (unpopped <= ASYNC_DEPTH),
        }
        for name in self.selected:
            m.d.comb += Assert(checks[name.removesuffix("_2clk")], name)
        return m


def _build(selected, mutant):
    clocking = {"multiclock" if name.endswith("_2clk") else "enables" for name in selected}
    if len(clocking) != 1:
        raise ValueError(f"async_fifo properties of different clockings: {sorted(selected)}")
    return _Harness(selected, _dut(mutant and mutant.removesuffix("_2clk")), clocking.pop())


formal.register("async_fifo", PROPERTIES, MUTANTS, _build)
