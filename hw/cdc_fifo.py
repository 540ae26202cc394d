"""An asynchronous FIFO with Amaranth's behaviour, cycle for cycle, and shorter paths.

:class:`AsyncFIFO` is ``amaranth.lib.fifo.AsyncFIFO`` (a subclass: the same ports, the same
Gray-code pointers through two-flop ``FFSynchronizer`` stages, the same write-domain reset
handling, so ``synth/cdc.py`` and the formal proofs treat it as that FIFO) with two changes to
how the next state is computed, neither of which changes a value any port shows in any cycle:

* **Registered increments.** Each pointer keeps ``pointer + 1`` and its Gray code in registers
  beside it, so ``w_en`` / ``r_en`` (late handshakes from the FIFO's users) only select between
  two registers instead of starting a carry chain and a Gray encoder.
* **Read data selected, not addressed.** Amaranth's FIFO reads its storage through a
  synchronous port at ``consume + do_read``, so ``r_en`` reaches the memory's address. Here two
  asynchronous reads at ``consume`` and ``consume + 1`` (both registers) feed a multiplexer that
  ``do_read`` selects in front of the output register: the same ``r_data`` one cycle later.
  The reads are from two copies of the storage (twice the memory bits), since synthesis would
  merge two reads of one memory back into one at a multiplexed address.
* **Registered flags.** ``w_rdy`` (not full) and ``r_rdy`` (not empty) come from flip-flops
  with, every cycle, the value of Amaranth's combinational comparison of the local pointer
  with the synchronised remote one. The next value is computed from the local pointer's next
  value (both candidates, ``pointer`` and ``pointer + 1``, compared; the late ``w_en`` /
  ``r_en`` only selects) and the synchroniser's next output (its first flop,
  :class:`PeekFFSynchronizer`). A write-domain reset clears the write pointer (the domains' resets
  are synchronous): whenever the pointer is 0 (a register says so) the full flag is a
  register of the comparison with a zero pointer, so the reset is never read as data (one
  multiplexer after the registers). ``r_rdy`` is that register and not
  ``r_rst`` (the reset crossing still forces empty, as before). The first flop is only
  compared into the flag register, which samples it as the second flop does: with the Gray
  code it is the old or the new remote pointer, both safe (a full or empty flag seen one
  cycle late); the register has the clock period less the comparator to resolve a
  metastable first flop, the second flop the whole period.
* **Key matches of the read data, registered** (``match_keys``, ``fast_read`` only). Bit
  ``i`` of ``r_key_match`` is ``r_data[-key_bits:] == r_keys[i]`` with ``r_keys`` as it was in
  the previous cycle: both storage entries ``r_data`` may take are compared and ``do_read``
  selects, as for ``r_data`` itself (the draft queue's epoch check, without a comparator
  behind the read data register). The comparison is inside the FIFO, at the read side of its
  storage, where the FIFO's protocol keeps the entries stable.
* **Level comparisons without a comparator behind** ``r_level`` (:meth:`AsyncFIFO.r_level_at_least`):
  ``r_level >= threshold`` in every cycle, from the decoded remote pointer compared with the
  local pointer and with the local pointer plus the threshold (a sum of registers), side by
  side: two short comparisons after the Gray decode instead of a subtraction and then a
  comparison (the controller's queue threshold interrupts).
* **Level copy.** ``r_level`` and its threshold checks decode a second copy of the write
  pointer's synchroniser output: a flop beside ``produce_r_gry`` sampling the same first
  flop, so the level's readers (the controller's status registers, far from the FIFO's own
  logic) have a register of their own. In every cycle it holds the value ``produce_r_gry``
  holds; only after a metastable first flop can the two resolve apart, each to the old or the
  new pointer (Gray code), which the level shows one cycle later than the flags at most.
"""

from amaranth import Cat, Const, Module, Mux, ResetSignal, Signal, Value
from amaranth.hdl import Assume
from amaranth.lib import fifo
from amaranth.lib.cdc import AsyncFFSynchronizer, FFSynchronizer
from amaranth.lib.memory import Memory

__all__ = ["AsyncFIFO", "PeekFFSynchronizer", "gray_code", "gray_decode"]


def gray_code(value):
    """``value`` in reflected binary Gray code (one bit changes per increment)."""
    return value ^ (value >> 1)


def gray_decode(gray):
    """The binary value of Gray code ``gray`` (a Value)."""
    # binary[i] = gray[i] ^ binary[i + 1], from the top bit down.
    bits = [gray[-1]]
    for i in reversed(range(len(gray) - 1)):
        bits.insert(0, bits[0] ^ gray[i])
    return Cat(*bits)


class PeekFFSynchronizer(FFSynchronizer):
    """``amaranth.lib.cdc.FFSynchronizer`` (the same flops, platform hook aside) that also
    shows ``o_next``: the value ``o`` takes after the next edge of ``o_domain`` (the input of
    the last flop, so at least two stages)."""

    def __init__(self, i, o, **kwargs):
        super().__init__(i, o, **kwargs)
        if self._stages < 2:
            raise ValueError("PeekFFSynchronizer needs at least two stages")
        self.o_next = Signal.like(o, name=f"{o.name}_next")

    def elaborate(self, platform):
        m = Module()
        flops = [Signal(self.i.shape(), name=f"stage{index}",
                        init=self._init, reset_less=self._reset_less)
                 for index in range(self._stages)]
        for i, o in zip((self.i, *flops), flops):
            m.d[self._o_domain] += o.eq(i)
        m.d.comb += [self.o.eq(flops[-1]), self.o_next.eq(flops[-2])]
        return m


class AsyncFIFO(fifo.AsyncFIFO):
    """``amaranth.lib.fifo.AsyncFIFO`` (same parameters, ports and behaviour) with registered
    pointer increments and the read data selected after the storage (module docstring).

    ``storage_attrs`` : dict, optional
        Attributes of the storage memory (``{"ram_style": "distributed"}``).
    ``match_keys``, ``key_bits``, ``key_init`` : int, int, list of int
        Registered matches of the read data's top ``key_bits`` bits with ``match_keys`` keys
        ``r_keys`` (module docstring); ``key_init``: the keys' power-up values (default 0).
    ``fast_read`` : bool
        Read two copies of the storage and select after them (default True); False: one
        storage read through a synchronous port at the multiplexed pointer (half the memory
        bits, for a FIFO whose ``r_en`` is early).
    """

    def __init__(self, *, width, depth, r_domain="read", w_domain="write", exact_depth=False,
                 storage_attrs=None, fast_read=True, match_keys=0, key_bits=0,
                 key_init=None):
        super().__init__(width=width, depth=depth, r_domain=r_domain, w_domain=w_domain,
                         exact_depth=exact_depth)
        if self.depth == 0:
            raise ValueError("depth must be at least 1, not 0")
        self.storage_attrs = dict(storage_attrs or {})
        self.fast_read = bool(fast_read)
        if match_keys and not (self.fast_read and 0 < key_bits <= width):
            raise ValueError("match_keys needs fast_read and 0 < key_bits <= width")
        self.key_bits = key_bits
        # The keys' values at power-up (the read data starts at 0): the matches' initial value.
        key_init = list(key_init or [0] * match_keys)
        self._key_match_init = sum(1 << i for i, key in enumerate(key_init) if key == 0)
        #: Keys (read domain) compared with the next ``r_data``'s top ``key_bits`` bits.
        self.r_keys = [Signal(key_bits, name=f"r_key{i}") for i in range(match_keys)]
        #: Bit i: ``r_data[-key_bits:]`` equals ``r_keys[i]`` of the previous cycle.
        self.r_key_match = Signal(match_keys)
        self._level_checks = []

    def r_level_at_least(self, threshold):
        """A signal of the read domain equal to ``r_level >= threshold`` in every cycle
        (``threshold`` a value of the read domain, any width); call before elaboration.

        ``r_level`` is ``(produce - consume) mod 2**bits`` (``bits`` the pointers' width), so
        with ``K + k * 2**bits = consume + threshold`` (registers' sum, ``k`` its carry) it is
        at least the threshold exactly when ``produce >= K`` and not ``k`` if
        ``produce >= consume``, and when ``produce >= K`` or not ``k`` otherwise: the decoded
        ``produce`` meets two comparisons side by side and one gate, no subtraction first.
        """
        reached = Signal(name=f"r_level_at_least_{len(self._level_checks)}")
        self._level_checks.append((Value.cast(threshold), reached))
        return reached

    def elaborate(self, platform):
        m = Module()
        bits = self._ctr_bits
        w, r = self._w_domain, self._r_domain

        do_write = self.w_rdy & self.w_en
        do_read = self.r_rdy & self.r_en

        # Write pointer: binary and Gray, each with its increment (reset with the write domain).
        produce_w_bin = Signal(bits)
        produce_w_inc = Signal(bits, init=1)
        produce_w_gry = Signal(bits)
        produce_w_gry_inc = Signal(bits, init=gray_code(1))
        with m.If(do_write):
            m.d[w] += [
                produce_w_bin.eq(produce_w_inc),
                produce_w_inc.eq(produce_w_inc + 1),
                produce_w_gry.eq(produce_w_gry_inc),
                produce_w_gry_inc.eq(gray_code((produce_w_inc + 1)[:bits])),
            ]

        # Read pointer: reset_less (reset through the write domain's reset, below).
        consume_r_bin = Signal(bits, reset_less=True)
        consume_r_inc = Signal(bits, init=1, reset_less=True)
        consume_r_gry = Signal(bits, reset_less=True)
        consume_r_gry_inc = Signal(bits, init=gray_code(1), reset_less=True)

        produce_r_gry = Signal(bits)
        m.submodules.produce_cdc = produce_cdc = PeekFFSynchronizer(
            produce_w_gry, produce_r_gry, o_domain=r)
        consume_w_gry = Signal(bits)
        m.submodules.consume_cdc = consume_cdc = PeekFFSynchronizer(
            consume_r_gry, consume_w_gry, o_domain=w)

        consume_w_bin = Signal(bits)
        m.d[w] += consume_w_bin.eq(gray_decode(consume_w_gry))

        def full(produce_gry, consume_gry):
            return ((produce_gry[-1] != consume_gry[-1]) &
                    (produce_gry[-2] != consume_gry[-2]) &
                    (produce_gry[:-2] == consume_gry[:-2]))

        # The flags, registered (module docstring): each is the comparison of its pointers as
        # they are in this cycle, computed from their next values in the previous one.
        # Write side: the write pointer's next value is its increment or itself, or 0 after a
        # write-domain reset. Whenever it is 0 the flag is a second register's, the comparison
        # with a zero pointer (which holds after a reset without reading the reset as data).
        consume_next = consume_cdc.o_next
        w_full_run = Signal(reset_less=True)    # full(produce_w_gry, ...) unless just reset
        w_full_zero = Signal(reset_less=True)   # full(0, consume_w_gry)
        produce_w_moved = Signal()              # produce_w_gry != 0
        m.d[w] += [
            w_full_run.eq(Mux(do_write, full(produce_w_gry_inc, consume_next),
                              full(produce_w_gry, consume_next))),
            w_full_zero.eq(full(Const(0, bits), consume_next)),
            produce_w_moved.eq(Mux(do_write, produce_w_gry_inc != 0, produce_w_gry != 0)),
        ]
        w_full = Signal()                       # full(produce_w_gry, consume_w_gry)
        m.d.comb += w_full.eq(Mux(produce_w_moved, w_full_run, w_full_zero))
        r_equal = Signal(reset_less=True, init=1)   # consume_r_gry == produce_r_gry
        r_rst = Signal()
        produce_next = produce_cdc.o_next
        m.d[r] += r_equal.eq(Mux(r_rst, produce_r_gry == produce_next,
                                 Mux(do_read, consume_r_gry_inc == produce_next,
                                     consume_r_gry == produce_next)))
        r_empty = Signal()
        m.d.comb += r_empty.eq(r_equal | r_rst)
        m.d[w] += self.w_level.eq(produce_w_bin - consume_w_bin)
        # The level's own copy of the synchroniser's last flop (module docstring, "Level copy"):
        # the same value as ``produce_r_gry`` in every cycle, a register of its own (``keep``)
        # that place and route puts beside the level's readers.
        produce_r_gry_level = Signal(bits, reset_less=True, attrs={"keep": 1})
        m.d[r] += produce_r_gry_level.eq(produce_next)
        level_bin = Signal(bits)
        m.d.comb += level_bin.eq(gray_decode(produce_r_gry_level))
        m.d.comb += self.r_level.eq(level_bin - consume_r_bin)
        for threshold, reached in self._level_checks:
            # r_level >= threshold (r_level_at_least): a threshold of 2**bits or more is never
            # reached; below, K and its carry k come from registers alone.
            low = threshold[:bits]
            biased = Signal(bits + 1, name=f"{reached.name}_bias")   # Cat(K, k)
            m.d.comb += biased.eq(consume_r_bin + low)
            ahead = level_bin >= biased[:bits]                         # produce >= K
            carry = biased[bits]
            fits = (threshold[bits:] == 0) if len(threshold) > bits else Const(1, 1)
            m.d.comb += reached.eq(fits & Mux(level_bin >= consume_r_bin,
                                              ahead & ~carry, ahead | ~carry))

        # Two copies of the storage, written alike, one read at the pointer and one at the
        # pointer + 1: one memory with both reads would be merged back into one read at a
        # multiplexed address by synthesis (yosys memory_share), which is the path avoided here.
        copies = []
        for name in ("storage", "storage_next")[:2 if self.fast_read else 1]:
            memory = m.submodules[name] = Memory(shape=self.width, depth=self.depth, init=[])
            memory.attrs.update(self.storage_attrs)
            w_port = memory.write_port(domain=w)
            m.d.comb += [
                w_port.addr.eq(produce_w_bin[:-1]),
                w_port.data.eq(self.w_data),
                w_port.en.eq(do_write),
            ]
            copies.append(memory)
        m.d.comb += [self.w_rdy.eq(~w_full), self.r_rdy.eq(~r_empty)]
        if self.fast_read:
            r_here, r_next = (memory.read_port(domain="comb") for memory in copies)
            m.d.comb += [r_here.addr.eq(consume_r_bin[:-1]), r_next.addr.eq(consume_r_inc[:-1])]
            if self.r_keys:
                here, after = (port.data[-self.key_bits:] for port in (r_here, r_next))
                key_match = Signal(len(self.r_keys), reset_less=True,
                                   init=self._key_match_init)
                m.d[r] += key_match.eq(Mux(do_read, Cat(after == k for k in self.r_keys),
                                           Cat(here == k for k in self.r_keys)))
                m.d.comb += self.r_key_match.eq(key_match)
            # The entry at the read pointer after this cycle, as a synchronous port reads it.
            r_data = Signal(self.width, reset_less=True)   # a read port's register: no reset
            m.d[r] += r_data.eq(Mux(do_read, r_next.data, r_here.data))
            m.d.comb += self.r_data.eq(r_data)
        else:
            r_port = copies[0].read_port(domain=r)
            m.d.comb += [r_port.addr.eq(Mux(do_read, consume_r_inc, consume_r_bin)[:-1]),
                         self.r_data.eq(r_port.data)]

        # Write-domain reset empties the FIFO (as amaranth.lib.fifo.AsyncFIFO does it).
        w_rst = ResetSignal(domain=w, allow_reset_less=True)
        m.submodules.rst_cdc = AsyncFFSynchronizer(w_rst, r_rst, o_domain=r)
        with m.If(r_rst):
            produce_now = gray_decode(produce_r_gry)
            m.d[r] += [
                consume_r_gry.eq(produce_r_gry),
                consume_r_bin.eq(produce_now),
                consume_r_inc.eq(produce_now + 1),
                consume_r_gry_inc.eq(gray_code((produce_now + 1)[:bits])),
                self.r_rst.eq(1),
            ]
        with m.Else():
            m.d[r] += self.r_rst.eq(0)
            with m.If(do_read):
                m.d[r] += [
                    consume_r_bin.eq(consume_r_inc),
                    consume_r_inc.eq(consume_r_inc + 1),
                    consume_r_gry.eq(consume_r_gry_inc),
                    consume_r_gry_inc.eq(gray_code((consume_r_inc + 1)[:bits])),
                ]

        if platform == "formal":
            from amaranth.asserts import Initial
            with m.If(Initial()):
                m.d.comb += [
                    Assume(produce_w_gry == gray_code(produce_w_bin)),
                    Assume(consume_r_gry == gray_code(consume_r_bin)),
                    Assume(produce_w_inc == (produce_w_bin + 1)[:bits]),
                    Assume(consume_r_inc == (consume_r_bin + 1)[:bits]),
                    Assume(produce_w_gry_inc == gray_code(produce_w_inc)),
                    Assume(consume_r_gry_inc == gray_code(consume_r_inc)),
                    Assume(w_full_run == full(produce_w_gry, consume_w_gry)),
                    Assume(w_full_zero == full(Const(0, bits), consume_w_gry)),
                    Assume(produce_w_moved == (produce_w_gry != 0)),
                    Assume(r_equal == (consume_r_gry == produce_r_gry)),
                    Assume(produce_r_gry_level == produce_r_gry),
                ]
        return m
