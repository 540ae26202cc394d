"""The unverified-draft queue: a clock-domain-crossing descriptor FIFO with an atomic squash.

Squash design (epoch tags)
--------------------------
The NPU (consumer, read domain) rejects batch *b*; every entry still in the queue was drafted
after *b* on tokens that are now known to be wrong (look-ahead), and so is every entry the PIM
pushes before it learns of the rejection. The queue removes all of them, atomically, like this:

* The read side keeps an epoch counter ``r_epoch``. An accepted ``squash`` increments it.
* The epoch crosses to the write domain (Gray code, two-flop synchroniser). Every pushed entry is
  stored with the epoch the write side sees *in the cycle of the push* (its tag).
* At the read side an entry whose tag differs from ``r_epoch`` is *stale*: it is never shown on
  ``o_stream``; it is popped from the FIFO without waiting for ``o_stream.ready`` (one per read
  cycle) and counted in ``discarded``.

Atomicity: from the read cycle after the squash, the consumer sees no entry older than the
squash; the removal is a single register update (``r_epoch``), so no half-removed state exists.
The producer sees the squash as a one-cycle pulse on ``w_squash``; pushes in that cycle and later
carry the new epoch and survive (until the next squash); pushes before it are removed. A pop and an
accepted squash in the same read cycle: the pop completes first (the entry was delivered).

Handshake and wrap-around: ``squash_ready`` is low from an accepted squash until the write side has
adopted the new epoch (the register updated at the end of its ``w_squash`` cycle) and that has come
back through a second synchroniser, so the write side is never more than one epoch behind and a
squash round trip is at least three read cycles. A stale entry was written before the write side
adopted the squash that made it stale, so it is visible at the read side by the time that squash is
acknowledged (give or take a synchroniser cycle); stale entries form a prefix of the FIFO (tags never
decrease along it) and drain at one per read cycle, so it is gone at most ``depth`` + 3 read cycles
later. Meanwhile at most ``depth / 3 + 2`` further squashes fit, far fewer than the ``4 * depth - 1``
that the ``log2(depth) + 2``-bit epoch counter needs to come back to a stale tag: a stale tag is
never mistaken for the current one. (The squash-storm test drives a 4-deep queue through more than
2**epoch_bits squashes with the consumer mostly stalled, scored against unbounded golden epochs.)

Stale entries occupy FIFO space until they drain, so ``w_level`` may stay high for up to
``depth`` read cycles after a squash (the producer sees push-back, never a lost entry).

Reset: reset both domains together (the write-domain reset also clears the FIFO, see
``amaranth.lib.fifo.AsyncFIFO``).
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from ahasd.hw.cdc_fifo import AsyncFIFO, gray_code, gray_decode
from ahasd.hw.construction import rejecting_construction
from ahasd.hw.descriptors import DraftDescriptor
from ahasd.spec.params import COUNTER_BITS, check_domain, check_power_of_two

__all__ = ["DraftQueue", "epoch_bits_for"]


def epoch_bits_for(depth):
    """Epoch tag width for a queue of ``depth`` entries (see the module docstring)."""
    return ceil_log2(depth) + 2


class DraftQueue(wiring.Component):
    """Unverified-draft queue: PIM (write domain) -> NPU (read domain), squashable.

    Parameters (keyword-only)
    -------------------------
    depth : int
        Entries, a power of two >= 2 (default 64).
    layout : data.Layout
        Payload layout (default :data:`ahasd.hw.descriptors.DraftDescriptor`).
    w_domain, r_domain : str
        Producer (PIM, default ``"pim"``) and consumer (NPU, default ``"npu"``) clock domains;
        they must differ.

    Ports
    -----
    i_stream : In(stream.Signature(layout)), write domain
        Descriptors from the drafting PIM; ``ready`` is low while the FIFO is full.
    w_squash : Out(1), write domain
        One-cycle pulse: a squash reached the producer. Pushes in this cycle and later belong to
        the new epoch; everything pushed before it was removed.
    w_level : Out(ceil_log2(depth + 1)), write domain
        FIFO fill as the producer sees it (includes stale entries not yet drained).
    o_stream : Out(stream.Signature(layout)), read domain
        Live descriptors to the verifying NPU, in push order.
    squash : In(1), read domain
        Remove every entry pushed before the producer sees this squash (see module docstring).
        Held until ``squash_ready``; takes effect at the clock edge where both are high.
    squash_ready : Out(1), read domain
        Low while the previous squash has not yet been adopted by the write side.
    r_level : Out(ceil_log2(depth + 1)), read domain
        FIFO fill as the consumer sees it (includes stale entries).
    discarded : Out(COUNTER_BITS), read domain
        Stale entries removed so far (wraps).
    discarding : Out(1), read domain
        A stale entry is removed in this cycle (``discarded`` counts it from the next cycle).
    """

    def __init__(self, *, depth=64, layout=DraftDescriptor, w_domain="pim", r_domain="npu"):
        with rejecting_construction(self):
            check_power_of_two("depth", depth, low=2)
            check_domain("w_domain", w_domain)
            check_domain("r_domain", r_domain)
            if w_domain == r_domain:
                raise ValueError(f"w_domain and r_domain must differ, both are {w_domain!r}")
        self.depth = depth
        self.layout = layout
        self.w_domain = w_domain
        self.r_domain = r_domain
        self.epoch_bits = epoch_bits_for(depth)
        level_bits = ceil_log2(depth + 1)
        super().__init__({
            "i_stream": In(stream.Signature(layout)),
            "w_squash": Out(1),
            "w_level": Out(level_bits),
            "o_stream": Out(stream.Signature(layout)),
            "squash": In(1),
            "squash_ready": Out(1),
            "r_level": Out(level_bits),
            "discarded": Out(COUNTER_BITS),
            "discarding": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        w, r = self.w_domain, self.r_domain
        width = len(self.i_stream.payload.as_value())
        ebits = self.epoch_bits
        # Storage in distributed RAM: on an FPGA the read data then comes from a flip-flop, not
        # from a block RAM's slow output (5.8 ns on ECP5), and the stale-tag check behind it fits
        # a 100 MHz cycle.
        m.submodules.fifo = fifo = AsyncFIFO(width=width + ebits, depth=self.depth,
                                             w_domain=w, r_domain=r,
                                             storage_attrs={"ram_style": "distributed"},
                                             match_keys=3, key_bits=ebits, key_init=[0, 1, 0])

        # Read side epoch, binary and Gray (the Gray copy is a register: it crosses domains).
        r_epoch = Signal(ebits)
        r_epoch_gray = Signal(ebits)
        # Write side: the synchronised Gray epoch (a register in the write domain), decoded.
        w_epoch_gray = Signal(ebits)
        m.submodules.epoch_to_w = FFSynchronizer(r_epoch_gray, w_epoch_gray, o_domain=w)
        w_epoch = Signal(ebits)
        m.d.comb += w_epoch.eq(gray_decode(w_epoch_gray))
        w_epoch_seen = Signal(ebits)
        w_epoch_seen_gray = Signal(ebits)
        m.d[w] += [
            w_epoch_seen.eq(w_epoch),
            w_epoch_seen_gray.eq(w_epoch_gray),
        ]
        # Adoption acknowledged back to the read side. The acknowledged copy is the one registered
        # at the end of the `w_squash` cycle, so a new squash can never be accepted before the
        # producer has had its pulse for the previous one.
        ack_gray = Signal(ebits)
        m.submodules.epoch_ack = FFSynchronizer(w_epoch_seen_gray, ack_gray, o_domain=r)

        m.d.comb += [
            self.w_squash.eq(w_epoch != w_epoch_seen),
            fifo.w_data.eq(Cat(self.i_stream.payload, w_epoch)),
            fifo.w_en.eq(self.i_stream.valid),
            self.i_stream.ready.eq(fifo.w_rdy),
            self.w_level.eq(fifo.w_level),
        ]

        # `tag == r_epoch` for the entry in the read data register, from registers: the FIFO
        # compares the tag of the entry its read data register takes next with the epoch, the
        # epoch + 1 and 0 (its key matches), and this cycle's accepted squash, registered,
        # picks the epoch + 1 match; where the epoch is 0 (the first cycle after a read-domain
        # reset among them: the reset is not read as data) the match with 0. So the stale check
        # behind the empty flag is a gate, not a tag comparator.
        squash_accept = Signal()
        r_epoch_next = Signal(ebits)  # truncated first: the Gray code of the wrapped value
        m.d.comb += r_epoch_next.eq(r_epoch + 1)
        m.d.comb += [fifo.r_keys[0].eq(r_epoch), fifo.r_keys[1].eq(r_epoch_next),
                     fifo.r_keys[2].eq(0)]
        squashed = Signal()                     # a squash was accepted in the previous cycle
        epoch_moved = Signal()                  # r_epoch != 0
        m.d[r] += [
            squashed.eq(squash_accept),
            epoch_moved.eq(Mux(squash_accept, r_epoch_next != 0, r_epoch != 0)),
        ]
        match = fifo.r_key_match
        tag_current = Signal()   # fifo.r_data[width:] == r_epoch, every cycle
        m.d.comb += tag_current.eq(Mux(epoch_moved, Mux(squashed, match[1], match[0]), match[2]))
        # For the tests: the register and what it stands for (the tag check it replaces).
        self._tag_check = (tag_current, fifo.r_data[width:] == r_epoch)
        stale = Signal()
        m.d.comb += [
            squash_accept.eq(self.squash & self.squash_ready),
            stale.eq(fifo.r_rdy & ~tag_current),
            self.o_stream.valid.eq(fifo.r_rdy & ~stale),
            self.o_stream.payload.eq(fifo.r_data[:width]),
            fifo.r_en.eq(stale | self.o_stream.ready),
            self.squash_ready.eq(ack_gray == r_epoch_gray),
            self.r_level.eq(fifo.r_level),
            self.discarding.eq(stale),
        ]
        with m.If(stale):
            m.d[r] += self.discarded.eq(self.discarded + 1)
        with m.If(squash_accept):
            m.d[r] += [
                r_epoch.eq(r_epoch_next),
                r_epoch_gray.eq(gray_code(r_epoch_next)),
            ]
        return m
