"""Golden models of the task queues (:mod:`ahasd.hw.queues`, :mod:`ahasd.hw.draft_queue`).

They predict *which* descriptors come out and in what order, given the events each side of a
queue observes; they do not model the clock-domain-crossing latency (that is the RTL's business
and is never visible in what comes out). The scoreboards of the tests and the system simulator use
them.

:class:`QueueModel` is a lossless FIFO. :class:`SquashQueueModel` follows the draft queue's epoch
squash exactly (see :mod:`ahasd.hw.draft_queue`):

* the producer side calls :meth:`~SquashQueueModel.w_squash` when it sees the ``w_squash`` pulse,
  *before* :meth:`~SquashQueueModel.push` of the same cycle; each push is tagged with the number
  of squashes the producer has seen;
* the consumer side calls :meth:`~SquashQueueModel.pop` for a delivered descriptor, *before*
  :meth:`~SquashQueueModel.squash` of the same cycle;
* an entry is delivered iff its tag equals the consumer's squash count when it reaches the head;
  every other entry is discarded and counted.
"""

from collections import deque

from ahasd.spec.params import check_positive

__all__ = ["QueueError", "QueueModel", "SquashQueueModel"]


class QueueError(AssertionError):
    """The observed queue behaviour contradicts the golden model (loss, duplication, reordering,
    a producer ahead of the consumer's epoch, ...)."""


class QueueModel:
    """A lossless, order-preserving queue of at most ``depth`` descriptors.

    Parameters
    ----------
    depth : int or None
        Capacity; :meth:`push` on a full queue raises :class:`QueueError` (a real queue pushes
        back instead). ``None``: unbounded (for a clock-domain-crossing queue, whose fill as seen
        by the producer lags the consumer).
    """

    def __init__(self, *, depth=None):
        self.depth = check_positive("depth", depth, integer=True, optional=True)
        self.entries: deque = deque()
        self.pushed = 0
        self.popped = 0

    def __len__(self):
        return len(self.entries)

    @property
    def full(self):
        return self.depth is not None and len(self.entries) >= self.depth

    def push(self, item):
        if self.full:
            raise QueueError(f"push of {item!r} into a full queue of depth {self.depth}")
        self.entries.append(item)
        self.pushed += 1

    def pop(self, observed=None):
        """Remove and return the oldest descriptor; with ``observed``, raise unless it matches."""
        if not self.entries:
            raise QueueError(f"pop of {observed!r} from an empty queue (duplicate or invented)")
        item = self.entries.popleft()
        self.popped += 1
        if observed is not None and observed != item:
            raise QueueError(f"popped {observed!r}, expected {item!r} (loss or reordering; "
                             f"{self.popped - 1} popped before)")
        return item


class SquashQueueModel:
    """The draft queue: a FIFO whose consumer can squash everything pushed before the producer
    sees the squash (epoch tags; see the module docstring).

    Epochs are unbounded integers here; the RTL's ``log2(depth) + 2``-bit tags must behave the
    same, which the scoreboards check.
    """

    def __init__(self):
        self.entries: deque[tuple[int, object]] = deque()  # (epoch, item)
        self.w_epoch = 0
        self.r_epoch = 0
        self.pushed = 0
        self.delivered = 0
        self.discarded = 0
        self.squashes = 0

    def __len__(self):
        return len(self.entries)

    def w_squash(self):
        """The producer saw a squash (``w_squash`` pulse)."""
        if self.w_epoch >= self.r_epoch:
            raise QueueError(f"producer saw squash {self.w_epoch + 1} but the consumer issued "
                             f"only {self.r_epoch}")
        self.w_epoch += 1

    def push(self, item):
        self.entries.append((self.w_epoch, item))
        self.pushed += 1

    def squash(self):
        """The consumer squashed (``squash`` and ``squash_ready`` at a read clock edge)."""
        if self.w_epoch != self.r_epoch:
            raise QueueError("a squash was accepted before the producer adopted the previous one")
        self.r_epoch += 1
        self.squashes += 1

    def _discard_stale(self):
        while self.entries and self.entries[0][0] != self.r_epoch:
            epoch, item = self.entries[0]
            if epoch > self.r_epoch:
                raise QueueError(f"entry {item!r} carries epoch {epoch} ahead of the "
                                 f"consumer's {self.r_epoch}")
            self.entries.popleft()
            self.discarded += 1

    def pop(self, observed=None):
        """The consumer received a descriptor; return the expected one (raise on a mismatch)."""
        self._discard_stale()
        if not self.entries:
            raise QueueError(f"delivered {observed!r} but no live entry is queued (a stale entry "
                             f"shown, a duplicate, or an invented descriptor)")
        _, item = self.entries.popleft()
        self.delivered += 1
        if observed is not None and observed != item:
            raise QueueError(f"delivered {observed!r}, expected {item!r} (loss or reordering; "
                             f"{self.delivered - 1} delivered before)")
        return item

    def drain(self):
        """Discard the stale head entries and return the live entries still queued."""
        self._discard_stale()
        return [item for _, item in self.entries]
