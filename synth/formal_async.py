"""Formal proofs across the clock crossing: the queues' ``AsyncFIFO`` with two clocks.

Block ``async_fifo`` of :mod:`ahasd.synth.formal`: the feedback queue
(:class:`ahasd.hw.queues.DescriptorQueue`, NPU -> PIM) and the unverified-draft queue
(:class:`ahasd.hw.draft_queue.DraftQueue`, PIM -> NPU, its squash epoch crossing both ways) at
depth :data:`ASYNC_DEPTH` with their two clock domains kept apart. Two ways to clock them:

* **clock enables** (``fifo_contract``, ``level_bounds``, ``draft_squash``,
  ``draft_epoch_lag``): one solver clock; every register of a domain (the queue's and the
  wrapper's bookkeeping of that domain) advances only in the steps where that domain's free
  enable is high (``EnableInserter``). A step is an edge of either clock, of both or of
  neither, in any sequence: every ratio and phase of two asynchronous clocks (one much faster,
  equal, drifting), each edge costing one step.
* **free clocks** (``fifo_contract_2clk``): sby ``multiclock on``; yosys' ``clk2fflogic`` makes
  every flip-flop logic sampled at the global clock (``$global_clock``) and both clocks are
  free inputs. The same check as ``fifo_contract`` on the real flow; an edge costs two steps
  (low, then high), so the depth reached in the time budget is smaller (BMC 24 took 187 s,
  against 31 s for ``fifo_contract`` at 20 with enables).

Metastability is not modelled (a synchroniser flop takes its input's value at the edge); that
part of the argument stays the Gray code's (one bit changes per increment, so a late sample is
the old or the new pointer). The payload is :data:`ASYNC_WIDTH` bits: the queue logic never
looks at it, and with the data symbolic two bits tell any entry from another (the real
descriptor layouts are the one-clock proofs' ``queues.*``); the memory is mapped to flip-flops
for the solver (``memory_map``, four times faster).

The wrapper keeps its bookkeeping in the domain of the event it counts: pushes (and the
symbolic watched entry, chosen by the free input ``watch`` at a push, with its epoch tag) in
the write domain, pops, discards and accepted squashes in the read domain. Properties:

* ``fifo_contract``: whenever the queue offers an entry, something was pushed and not yet
  popped (none invented or duplicated), and the offered entry, when it is the watched push's
  turn, carries the watched data (none lost, reordered or corrupted);
* ``level_bounds``: the write side never accepts a push into ``ASYNC_DEPTH`` unpopped entries
  (the full flag, computed from the synchronised read pointer, is never optimistic), so there
  are never more than ``ASYNC_DEPTH``;
* ``draft_squash``: the epoch rule of ``docs/queues-gts.md`` across the crossing: the k-th
  entry to leave (delivered, or discarded: a step of ``discarded``) is the k-th pushed; it is
  delivered with its data iff its tag (the ``w_squash`` pulses up to its push) equals the
  accepted squashes when it reaches the head, else discarded; never both in one cycle;
* ``draft_epoch_lag``: the ``w_squash`` pulses trail the accepted squashes by 0 or 1.
"""

from amaranth import ClockDomain, ClockSignal, Const, Module, Mux, ResetSignal, Signal, Value
from amaranth.hdl import Assert, Assume, DomainRenamer, EnableInserter
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from ahasd.synth import formal

__all__ = ["ASYNC_DEPTH", "ASYNC_WIDTH", "PROPERTIES", "MUTANTS"]

#: Depth proved across the crossing (the pointers have one more bit than the address).
ASYNC_DEPTH = 4
#: Payload bits across the crossing (see the module docstring).
ASYNC_WIDTH = 2
_COUNT_BITS = 6                   # pushes and pops counted mod 64: more than the depth can reach
_EPOCH_BITS = 4                   # squashes counted mod 16

_P = formal.Property
PROPERTIES = [
    _P("async_fifo", "fifo_contract", "bmc", 20,
       "feedback queue, clock enables: an offered entry was pushed and not yet popped, the "
       "watched push read back with its data", mutant_depth=20, memory_map=True),
    _P("async_fifo", "level_bounds", "bmc", 20,
       "feedback queue, clock enables: no push accepted into a full queue (never more than the "
       "depth unpopped)", mutant_depth=20, memory_map=True),
    _P("async_fifo", "fifo_contract_2clk", "bmc", 16,
       "feedback queue, free clocks (multiclock on): the fifo_contract check", mutant_depth=16,
       multiclock=True, memory_map=True),
    _P("async_fifo", "draft_squash", "bmc", 14,
       "draft queue, clock enables: the k-th removal is the k-th push, delivered iff its epoch "
       "tag is current at the head, else discarded", mutant_depth=14, memory_map=True),
    _P("async_fifo", "draft_epoch_lag", "bmc", 20,
       "draft queue, clock enables: the w_squash pulses trail the accepted squashes by 0 or 1",
       mutant_depth=20, memory_map=True),
]

MUTANTS = {
    "fifo_contract": "o_stream.valid from the write side's level (not the synchronised pointer)",
    "level_bounds": "i_stream.ready from the read side's level (not the synchronised pointer)",
    "fifo_contract_2clk": "o_stream.valid from the write side's level (not the synchronised "
                          "pointer)",
    "draft_squash": "w_squash never pulses (entries pushed after a squash carry the old epoch)",
    "draft_epoch_lag": "squash_ready always high (no wait for the producer's acknowledgement)",
}


def _valid_from_w_level(m, q):
    m.d.comb += q.o_stream.valid.eq(m.submodules.fifo.w_level != 0)


def _ready_from_r_level(m, q):
    m.d.comb += [q.i_stream.ready.eq(m.submodules.fifo.r_level != ASYNC_DEPTH),
                 m.submodules.fifo.w_en.eq(q.i_stream.valid & q.i_stream.ready)]


def _no_w_squash(m, q):
    m.d.comb += q.w_squash.eq(0)


def _always_squash_ready(m, q):
    m.d.comb += q.squash_ready.eq(1)


def _dut(queue, mutant=None):
    from amaranth.lib import data

    from ahasd.hw.draft_queue import DraftQueue
    from ahasd.hw.queues import DescriptorQueue
    layout = data.StructLayout({"data": ASYNC_WIDTH})
    mutation = {"fifo_contract": _valid_from_w_level, "level_bounds": _ready_from_r_level,
                "draft_squash": _no_w_squash, "draft_epoch_lag": _always_squash_ready
                }.get(mutant)
    if queue == "draft":
        cls, params = DraftQueue, dict(w_domain="pim", r_domain="npu")
    else:
        cls, params = DescriptorQueue, dict(w_domain="npu", r_domain="pim")
    if mutation is not None:
        cls = formal._subclass(cls, mutation)
    return cls(layout=layout, depth=ASYNC_DEPTH, **params)


class _Harness(wiring.Component):
    """The queue with both clock domains (no reset after the start), the free inputs, the checks.

    ``clocking`` ``"enables"``: one solver clock, each domain advancing where its free enable
    ``<domain>_en`` is high; ``"multiclock"``: free clocks ``<domain>_clk``."""

    def __init__(self, selected, dut, clocking):
        self.block, self.selected, self.dut, self.clocking = "async_fifo", selected, dut, clocking
        self.w, self.r = dut.w_domain, dut.r_domain
        tick = "clk" if clocking == "multiclock" else "en"
        super().__init__({**{name: In(len(Value.cast(v)))
                             for name, v in formal._inputs(dut).items()},
                          "watch": In(1), f"{self.w}_{tick}": In(1), f"{self.r}_{tick}": In(1)})

    def elaborate(self, platform):
        m = Module()
        core = self._core()
        w, r = self.w, self.r
        if self.clocking == "multiclock":
            m.domains += [ClockDomain(w), ClockDomain(r)]
            m.submodules.core = core
            m.d.comb += [ClockSignal(w).eq(getattr(self, f"{w}_clk")),
                         ClockSignal(r).eq(getattr(self, f"{r}_clk")),
                         ResetSignal(w).eq(0), ResetSignal(r).eq(0)]
        else:
            enables = {w: getattr(self, f"{w}_en"), r: getattr(self, f"{r}_en")}
            m.submodules.core = DomainRenamer({w: "sync", r: "sync"})(
                EnableInserter(enables)(core))
            m.d.comb += Assume(~ResetSignal("sync"))
        return m

    def _core(self):
        """The queue and the bookkeeping, each register in the domain of what it counts."""
        m = Module()
        m.submodules.dut = dut = self.dut
        for name, value in formal._inputs(dut).items():
            m.d.comb += Value.cast(value).eq(getattr(self, name))
        checks = (self._draft(m, dut) if hasattr(dut, "w_squash") else self._fifo(m, dut))
        for name in self.selected:
            m.d.comb += Assert(checks[name.removesuffix("_2clk")], name)
        return m

    def _watched(self, m, dut, tag):
        """Pushes counted and the watched entry (its index, data and ``tag``) in the write
        domain."""
        push = dut.i_stream.valid & dut.i_stream.ready
        pushes = Signal(_COUNT_BITS, name="m_pushes")
        armed = Signal(name="m_armed")
        seq = Signal(_COUNT_BITS, name="m_w_seq")
        data = Signal(len(dut.i_stream.payload.as_value()), name="m_w_data")
        w_tag = Signal(_EPOCH_BITS, name="m_w_tag")
        m.d[self.w] += pushes.eq(pushes + push)
        with m.If(push & self.watch & ~armed):
            m.d[self.w] += [armed.eq(1), seq.eq(pushes), w_tag.eq(tag),
                            data.eq(dut.i_stream.payload.as_value())]
        if self.clocking == "enables":    # a push counts only on its domain's edge
            push = push & getattr(self, f"{self.w}_en")
        return push, pushes, armed, seq, data, w_tag

    def _fifo(self, m, dut):
        push, pushes, armed, seq, data, _ = self._watched(m, dut, Const(0, _EPOCH_BITS))
        pops = Signal(_COUNT_BITS, name="m_pops")
        m.d[self.r] += pops.eq(pops + (dut.o_stream.valid & dut.o_stream.ready))
        unpopped = (pushes - pops)[:_COUNT_BITS]
        return {
            "fifo_contract": ~dut.o_stream.valid | (
                (unpopped != 0) & (unpopped <= ASYNC_DEPTH) &
                (~armed | (seq != pops) | (dut.o_stream.payload.as_value() == data))),
            "level_bounds": (~push | (unpopped < ASYNC_DEPTH)) & (unpopped <= ASYNC_DEPTH),
        }

    def _draft(self, m, dut):
        """The squash rule: removals (a delivery, or a step of ``discarded``) are registered
        and scored one read edge later, so that both are scored alike."""
        w, r = self.w, self.r
        w_count = Signal(_EPOCH_BITS, name="m_w_count")      # w_squash pulses (write side)
        r_count = Signal(_EPOCH_BITS, name="m_r_count")      # accepted squashes (read side)
        m.d[w] += w_count.eq(w_count + dut.w_squash)
        m.d[r] += r_count.eq(r_count + (dut.squash & dut.squash_ready))
        _, pushes, armed, seq, data, tag = self._watched(m, dut, w_count + dut.w_squash)
        deliver = dut.o_stream.valid & dut.o_stream.ready
        e_deliver = Signal(name="e_deliver")
        e_out = Signal(len(dut.o_stream.payload.as_value()), name="e_out")
        e_r_count = Signal(_EPOCH_BITS, name="e_r_count")
        e_discarded = Signal.like(dut.discarded, name="e_discarded")
        m.d[r] += [e_deliver.eq(deliver), e_out.eq(dut.o_stream.payload.as_value()),
                   e_r_count.eq(r_count), e_discarded.eq(dut.discarded)]
        e_discard = dut.discarded != e_discarded
        e_remove = e_deliver | e_discard
        removed = Signal(_COUNT_BITS, name="m_removed")
        m.d[r] += removed.eq(removed + e_remove)
        scored = armed & e_remove & (removed == seq)
        right = Mux(tag == e_r_count, e_deliver & (e_out == data), e_discard)
        return {
            "draft_squash": (~e_remove | (removed != pushes)) & (~scored | right) &
                            ~(e_deliver & e_discard),
            "draft_epoch_lag": (r_count - w_count)[:_EPOCH_BITS] <= 1,
        }


_QUEUE_OF = {"fifo_contract": "feedback", "level_bounds": "feedback",
             "fifo_contract_2clk": "feedback", "draft_squash": "draft", "draft_epoch_lag": "draft"}


def _build(selected, mutant):
    kinds = {("multiclock" if name.endswith("_2clk") else "enables", _QUEUE_OF[name])
             for name in selected}
    if len(kinds) != 1:
        raise ValueError(f"async_fifo properties of different clockings or queues: "
                         f"{sorted(selected)}")
    clocking, queue = kinds.pop()
    return _Harness(selected, _dut(queue, mutant and mutant.removesuffix("_2clk")), clocking)


formal.register("async_fifo", PROPERTIES, MUTANTS, _build)
