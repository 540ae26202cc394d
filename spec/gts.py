"""The gated task scheduler's specification (docs/queues-gts.md): states, task kinds, the task
length field and the parameters (rank count and masks), shared by the RTL (:class:`ahasd.hw.gts.GTS`)
and the golden model (:class:`ahasd.sim.blocks.gts.GTS`). The state encoding is also the register
map's ``GTS_STATUS.state`` enum (``hw/regs.rdl``)."""

import enum
from dataclasses import dataclass

from ahasd.spec.params import check_int

__all__ = ["LENGTH_BITS", "State", "TaskKind", "state_of", "GTSParams", "check_mask"]

#: Bits of a task's length field.
LENGTH_BITS = 8


class State(enum.IntEnum):
    IDLE = 0
    DRAFT = 1
    PREVERIFY = 2


class TaskKind(enum.IntEnum):
    DRAFT = 0
    PREVERIFY = 1


def state_of(kind):
    return State.DRAFT if kind == TaskKind.DRAFT else State.PREVERIFY


@dataclass(frozen=True)
class GTSParams:
    """Validated GTS parameters; ``None`` masks take the defaults."""

    ranks: int = 16
    draft_mask: int | None = None
    preverify_mask: int | None = None

    def __post_init__(self):
        check_int("ranks", self.ranks, 2, 64)
        if self.draft_mask is None:
            object.__setattr__(self, "draft_mask", (1 << (self.ranks - 1)) - 1)
        if self.preverify_mask is None:
            object.__setattr__(self, "preverify_mask", 1 << (self.ranks - 1))
        for name in ("draft_mask", "preverify_mask"):
            object.__setattr__(self, name, check_mask(name, getattr(self, name), self.ranks))


def check_mask(name, mask, ranks):
    """``mask`` if it enables at least one of ``ranks`` ranks."""
    return check_int(name, mask, 1, (1 << ranks) - 1,
                     note=f"a mask enabling at least one of {ranks} ranks")
