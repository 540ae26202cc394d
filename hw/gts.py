"""GTS: the gated task scheduler of the PIM ranks (docs/architecture.md 4.4).

The behaviour, cycle by cycle, is specified by the golden model :mod:`ahasd.sim.blocks.gts` (read its
module docstring); this block matches it output for output.
"""

from amaranth import Module, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.spec import gts as gts_spec
from ahasd.spec.params import COUNTER_BITS, check_int

__all__ = ["GTS", "GTSState", "TaskKind", "Task", "cfg_layout"]


class GTSState(enum.Enum, shape=2):
    IDLE = gts_spec.State.IDLE
    DRAFT = gts_spec.State.DRAFT
    PREVERIFY = gts_spec.State.PREVERIFY


class TaskKind(enum.Enum, shape=1):
    DRAFT = gts_spec.TaskKind.DRAFT
    PREVERIFY = gts_spec.TaskKind.PREVERIFY


#: A task request: kind (bit 0), length in tokens (bits 1..8).
Task = data.StructLayout({"kind": TaskKind, "length": gts_spec.LENGTH_BITS})


def cfg_layout(ranks):
    """Payload of the GTS ``cfg`` stream: both rank masks."""
    return data.StructLayout({"draft_mask": ranks, "preverify_mask": ranks})


class GTS(wiring.Component):
    """Gated task scheduler: switches the PIM ranks between drafting and pre-verification.

    Parameters (keyword-only, validated by :class:`ahasd.spec.gts.GTSParams`)
    ----------------------------------------------------------------------
    ranks : int
        PIM ranks, 2..64 (default 16).
    draft_mask, preverify_mask : int or None
        Reset values of the rank-enable masks (defaults: ranks 0..N-2 draft, rank N-1
        pre-verifies).
    stats_bits : int
        Width of the wrapping statistics counters (default
        :data:`ahasd.spec.params.COUNTER_BITS`; narrower in test builds that reach the wrap).

    Ports (one clock domain, ``sync`` = the PIM clock)
    --------------------------------------------------
    i_task : In(stream.Signature(Task))
        Task requests; ``ready`` is low while a task runs (unless ``done``) and in a switch cycle.
        A refused request must stay valid (stream rule): it is delayed, never lost.
    o_task : Out(stream.Signature(Task, always_ready=True))
        ``o_task.valid`` is a one-cycle pulse: the accepted task ``o_task.payload`` starts, in the
        first cycle with its ``rank_en`` (the PIM ranks take it; no back-pressure, they are free).
    done : In(1)
        The running task finishes in this cycle (ignored in IDLE).
    cfg : In(stream.Signature({draft_mask: ranks, preverify_mask: ranks}, always_ready=True))
        CSR write of both masks (:meth:`cfg_layout`), effective from the next cycle.
    state : Out(GTSState)
        IDLE 0, DRAFT 1, PREVERIFY 2 (the encoding of the ``GTS_STATUS`` register).
    rank_en : Out(ranks)
        Rank enables: 0 in IDLE, the draft or pre-verify mask otherwise.
    switching : Out(1)
        The one switch cycle after a change of working mode (weights); requests are refused.
    draft_mask, preverify_mask : Out(ranks)
        The current masks (for CSR read-back).
    switch_count, busy_count, stall_count : Out(stats_bits)
        Working-mode switches, non-IDLE cycles, cycles a request was refused (wrapping).
    """

    def __init__(self, *, ranks=16, draft_mask=None, preverify_mask=None,
                 stats_bits=COUNTER_BITS):
        with rejecting_construction(self):
            check_int("stats_bits", stats_bits, 1, 64)
            self.params = p = gts_spec.GTSParams(ranks=ranks, draft_mask=draft_mask,
                                               preverify_mask=preverify_mask)
        n = p.ranks
        super().__init__({
            "i_task": In(stream.Signature(Task)),
            "o_task": Out(stream.Signature(Task, always_ready=True)),
            "done": In(1),
            "cfg": In(stream.Signature(cfg_layout(n), always_ready=True)),
            "state": Out(GTSState),
            "rank_en": Out(n),
            "switching": Out(1),
            "draft_mask": Out(n, init=p.draft_mask),
            "preverify_mask": Out(n, init=p.preverify_mask),
            "switch_count": Out(stats_bits),
            "busy_count": Out(stats_bits),
            "stall_count": Out(stats_bits),
        })

    def elaborate(self, platform):
        m = Module()
        mode = Signal(GTSState)   # last working mode; IDLE until the first task
        idle = self.state == GTSState.IDLE
        kind_state = Signal(GTSState)
        m.d.comb += [
            kind_state.eq(GTSState.DRAFT),
            self.i_task.ready.eq(~self.switching & (idle | self.done)),
        ]
        with m.If(self.i_task.payload.kind == TaskKind.PREVERIFY):
            m.d.comb += kind_state.eq(GTSState.PREVERIFY)
        accept = self.i_task.valid & self.i_task.ready

        with m.Switch(self.state):
            with m.Case(GTSState.DRAFT):
                m.d.comb += self.rank_en.eq(self.draft_mask)
            with m.Case(GTSState.PREVERIFY):
                m.d.comb += self.rank_en.eq(self.preverify_mask)

        with m.If(self.i_task.valid & ~self.i_task.ready):
            m.d.sync += self.stall_count.eq(self.stall_count + 1)
        with m.If(~idle):
            m.d.sync += self.busy_count.eq(self.busy_count + 1)

        m.d.sync += [
            self.switching.eq(0),
            self.o_task.valid.eq(0),
        ]
        with m.If(accept):
            m.d.sync += [
                self.state.eq(kind_state),
                mode.eq(kind_state),
                self.switching.eq(kind_state != mode),
                self.o_task.valid.eq(1),
                self.o_task.payload.eq(self.i_task.payload),
            ]
            with m.If(kind_state != mode):
                m.d.sync += self.switch_count.eq(self.switch_count + 1)
        with m.Elif(self.done):
            m.d.sync += self.state.eq(GTSState.IDLE)

        with m.If(self.cfg.valid):
            m.d.sync += [
                self.draft_mask.eq(self.cfg.payload.draft_mask),
                self.preverify_mask.eq(self.cfg.payload.preverify_mask),
            ]
        return m
