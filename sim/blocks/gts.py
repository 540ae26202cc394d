"""Golden model of the gated task scheduler (GTS, docs/architecture.md 4.4), cycle by cycle.

The GTS gates the PIM ranks between drafting (DLM weights, ``draft_mask``, ranks 0..N-2 by
default) and pre-verification (TLM weights, ``preverify_mask``, rank N-1 by default). It runs one
task at a time:

* States IDLE (ranks gated off, ``rank_en = 0``), DRAFT (``rank_en = draft_mask``), PREVERIFY
  (``rank_en = preverify_mask``).
* A task request (kind DRAFT or PREVERIFY, a length in tokens) is a valid/ready stream.
  ``ready = not switching and (state == IDLE or done)``: a request is accepted when the ranks are
  free (idle, or the running task signals ``done`` in this cycle: back to back).
* The switch takes one cycle: at the clock edge that accepts a task the state becomes the task's
  kind, so the next cycle already drives the new ``rank_en`` and starts the task (``o_task``, a
  one-cycle pulse with the task). ``switching`` is high in that first cycle when the working mode
  (DRAFT vs PREVERIFY, i.e. the weights) changed since the last task; requests are refused in it.
  A refused request stays valid at the producer (stream rule), so it is not lost.
* ``done`` in a non-IDLE state without an accepted follow-up task returns to IDLE; ``done`` in IDLE
  is ignored.
* ``cfg_we`` loads both masks at the clock edge (CSR write); ``rank_en`` follows at once.
* Counters (32 bits, wrap): ``switch_count`` (working-mode changes, counted at the accepting edge;
  the first task after reset counts), ``busy_count`` (cycles not IDLE), ``stall_count`` (cycles
  with a request offered and refused).

:meth:`GTS.step` takes one cycle's inputs and returns that cycle's outputs (what the RTL drives
before the edge), then applies the edge.
"""

from dataclasses import dataclass

from ahasd.spec.gts import LENGTH_BITS, GTSParams, State, TaskKind, check_mask, state_of
from ahasd.spec.params import COUNTER_BITS, check_bool, check_choice, check_int

__all__ = ["State", "TaskKind", "GTSParams", "GTSCycle", "GTS", "COUNTER_BITS", "LENGTH_BITS",
           "state_of", "check_mask"]

_COUNTER_MASK = (1 << COUNTER_BITS) - 1


@dataclass(frozen=True)
class GTSCycle:
    """Outputs of one cycle (before its clock edge)."""

    ready: bool
    state: State
    rank_en: int
    switching: bool
    o_valid: bool
    o_kind: int
    o_length: int
    switch_count: int
    busy_count: int
    stall_count: int


class GTS:
    """Cycle-accurate GTS; see the module docstring. Parameters as :class:`GTSParams`."""

    def __init__(self, *, ranks=16, draft_mask=None, preverify_mask=None):
        self.params = p = GTSParams(ranks=ranks, draft_mask=draft_mask,
                                    preverify_mask=preverify_mask)
        self.draft_mask = p.draft_mask
        self.preverify_mask = p.preverify_mask
        self.state = State.IDLE
        self.mode = State.IDLE          # last working mode (IDLE: none yet)
        self.switching = False
        self.o_valid = False
        self.o_kind = 0
        self.o_length = 0
        self.switch_count = 0
        self.busy_count = 0
        self.stall_count = 0

    def rank_en(self):
        if self.state == State.DRAFT:
            return self.draft_mask
        if self.state == State.PREVERIFY:
            return self.preverify_mask
        return 0

    def step(self, task=None, done=False, cfg=None):
        """One cycle. ``task``: ``(kind, length)`` offered, or None; ``done``: the running task
        ends; ``cfg``: ``(draft_mask, preverify_mask)`` written, or None."""
        if task is not None:
            kind, length = task
            check_choice("task kind", kind, tuple(TaskKind))
            check_int("task length", length, 0, (1 << LENGTH_BITS) - 1)
        check_bool("done", done)
        if cfg is not None:
            cfg = tuple(check_mask(name, value, self.params.ranks)
                        for name, value in zip(("draft_mask", "preverify_mask"), cfg, strict=True))
        ready = not self.switching and (self.state == State.IDLE or bool(done))
        out = GTSCycle(ready=ready, state=self.state, rank_en=self.rank_en(),
                       switching=self.switching, o_valid=self.o_valid, o_kind=self.o_kind,
                       o_length=self.o_length, switch_count=self.switch_count,
                       busy_count=self.busy_count, stall_count=self.stall_count)
        accept = task is not None and ready
        if task is not None and not ready:
            self.stall_count = (self.stall_count + 1) & _COUNTER_MASK
        if self.state != State.IDLE:
            self.busy_count = (self.busy_count + 1) & _COUNTER_MASK
        if accept:
            kind, length = task
            new = state_of(kind)
            self.switching = new != self.mode
            if self.switching:
                self.switch_count = (self.switch_count + 1) & _COUNTER_MASK
            self.mode = new
            self.state = new
            self.o_valid, self.o_kind, self.o_length = True, int(kind), int(length)
        else:
            self.switching = False
            self.o_valid = False
            if done and self.state != State.IDLE:
                self.state = State.IDLE
        if cfg is not None:
            self.draft_mask, self.preverify_mask = (int(v) for v in cfg)
        return out
