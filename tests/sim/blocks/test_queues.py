"""The golden queue models on their own: they must reject what a correct queue never does."""

import pytest

from ahasd.sim.blocks.queues import QueueError, QueueModel, SquashQueueModel


def test_queue_model_is_fifo_and_flags_loss_and_duplicates():
    q = QueueModel(depth=3)
    for i in range(3):
        q.push(i)
    assert q.full
    with pytest.raises(QueueError, match="full queue of depth 3"):
        q.push(9)
    assert q.pop(0) == 0
    with pytest.raises(QueueError, match=r"popped 2, expected 1"):
        q.pop(2)
    q.pop()
    assert (q.pushed, q.popped) == (3, 3)     # the refused push is not counted
    with pytest.raises(QueueError, match="empty queue"):
        q.pop(7)
    with pytest.raises(ValueError, match="depth must be a positive integer or None, not 0"):
        QueueModel(depth=0)


def test_squash_model_discards_entries_pushed_before_the_producer_saw_the_squash():
    q = SquashQueueModel()
    for i in range(4):
        q.push(i)
    assert q.pop(0) == 0
    q.squash()                 # 1, 2, 3 are look-ahead of the rejected batch
    q.push(4)                  # pushed before the producer saw the squash: also stale
    q.w_squash()
    q.push(5)
    q.push(6)
    assert q.pop(5) == 5
    assert q.discarded == 4
    assert q.drain() == [6]
    # The counters the scoreboards compare: every push counted once, each fate once.
    assert (q.pushed, q.delivered, q.discarded, q.squashes) == (7, 2, 4, 1)
    assert q.pushed == q.delivered + q.discarded + len(q.drain())


def test_squash_model_rejects_impossible_orders():
    q = SquashQueueModel()
    with pytest.raises(QueueError, match="issued only 0"):
        q.w_squash()
    q.squash()
    with pytest.raises(QueueError, match="before the producer adopted"):
        q.squash()
    q.push(1)   # stale
    with pytest.raises(QueueError, match="no live entry"):
        q.pop(1)
    q.w_squash()
    q.push(2)
    with pytest.raises(QueueError, match=r"delivered 3, expected 2"):
        q.pop(3)
