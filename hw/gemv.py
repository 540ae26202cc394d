"""GEMV bank: INT8 weights from LPDDR5 rows x INT8 activations -> INT32 results.

Synthesizable: the DRAM command scheduler and the MAC datapath. The DRAM array is outside (in
simulation :class:`ahasd.tb.dram_bank.DRAMBankModel`).

Dataflow. One lane per burst byte: a burst carries ``W[t*B + l, k]`` for the ``B`` lanes of output
tile ``t`` at column ``k`` (layout :func:`ahasd.spec.dram.weight_layout`); every lane multiplies its
byte by the broadcast activation ``x[k]`` and adds the product into its 32-bit accumulator. After
``N`` bursts the tile's ``min(B, M - t*B)`` results leave on ``o_stream`` (lane order) while the next
tile accumulates.

Pipeline (for 800 MHz at 28 nm and 100 MHz on ECP5, docs/implementation.md "Timing"): a burst
and its activation are registered in the cycle it lands, its products in the next, they are added
into the accumulators in the one after (each a 16-bit low half, a 16-bit high half and the low
half's carry not yet added in, so no cycle holds a 32-bit carry), and in the cycle after a tile's
last product was added the carries are resolved into the output buffer. The tile's first result
is on ``o_stream`` :data:`GEMV.RESULT_LATENCY` = 4 cycles after its last burst landed (1 before
the pipeline); the rate stays one burst per cycle.

Scheduling. Bursts are read in address order; consecutive rows lie in consecutive banks, so while
the current row streams out at one RD per tCCD, the next row's bank is precharged and activated in
the command slots between the reads. With ``n_banks >= 2`` a row switch is fully hidden when
``bursts_per_row * t_ccd >= t_rp + t_rcd + 2`` (the PRE and ACT take a command slot each; the
bank's tRAS has long passed, since it was opened ``n_banks - 1`` rows earlier): 256 >= 66 for the
defaults. Refresh (``config.refresh``): per-bank by default, a pair of banks not in use is
refreshed while the others stream, so the reads never stop and the GEMV approaches the raw rate
:meth:`ahasd.spec.dram.DRAMConfig.raw_read_bound` (one burst per tCCD; the pipeline fill
and drain are the only losses); all-bank, every ``t_refi`` cycles reads stop, open banks are
precharged and a REF is issued, and the precharge, tRFC and re-activation are lost against
:meth:`ahasd.spec.dram.DRAMConfig.read_bound`, which charges only tRFC. The scheduler keeps
its own copy of every timing counter, so it never issues an illegal command (the bank model
checks this in every test). ``cmd_grant`` (tie to 1 without an arbiter) and ``cmd_peer`` (NOP)
join the DRAM port of a rank shared with another requester.
"""

from amaranth.hdl import Cat, Module, Mux, Signal, signed
from amaranth.lib import fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.dram_port import ReadScheduler, command_signature, connect_command
from ahasd.spec.dram import DRAMConfig
from ahasd.spec.params import check_instance, check_positive, check_power_of_two

__all__ = ["GEMV"]


class GEMV(wiring.Component):
    """GEMV bank with an LPDDR5 command scheduler.

    Parameters
    ----------
    config : DRAMConfig
        DRAM geometry and timing; ``burst_bytes`` is the lane count. ``n_banks`` must be a power
        of two.
    max_n : int
        Activation buffer depth (largest N).
    max_m : int
        Largest M (outputs per GEMV).

    Ports
    -----
    x_stream : in stream of signed(8)
        Activations x[0], x[1], ... of the next GEMV (accepted while idle; ``start`` rewinds).
    m, n, base_row, start : in
        A GEMV of ``m`` outputs over the first ``n`` loaded activations, weights starting at global
        row ``base_row`` (global row g is row ``g // n_banks`` of bank ``g % n_banks``). ``start``
        while idle begins it; ``m`` must be 1..max_m and ``n`` 1..(activations loaded), otherwise
        ``error`` is set and nothing runs.
    o_stream : out stream of signed(32)
        Results y[0..m-1] in order.
    busy, error, cycles : out
        Running; last ``start`` was rejected; cycles of the current/last GEMV from ``start`` to its
        last result leaving.
    cmd, cmd_bank, cmd_row, cmd_col : out; cmd_grant, cmd_peer : in
        DRAM command port (:func:`ahasd.hw.dram_port.command_signature`).
    rd : In(stream.Signature(8 * burst_bytes, always_ready=True))
        Read data from the DRAM (any fixed latency up to ``config.t_rl``).
    """

    #: Cycles from the landing of a tile's last burst to its first result on ``o_stream``.
    RESULT_LATENCY = 4

    def __init__(self, *, config=DRAMConfig(), max_n=4096, max_m=4096):
        with rejecting_construction(self):
            check_instance("config", config, DRAMConfig)
            check_power_of_two("config.n_banks", config.n_banks)
            ReadScheduler.check_config(config)
            check_positive("max_n", max_n, integer=True)
            check_positive("max_m", max_m, integer=True)
        self.config = config
        self.max_n = max_n
        self.max_m = max_m
        sig = {
            "x_stream": In(stream.Signature(signed(8))),
            "o_stream": Out(stream.Signature(signed(32))),
            "m": In(range(max_m + 1)),
            "n": In(range(max_n + 1)),
            "base_row": In(range(config.rows * config.n_banks)),
            "start": In(1),
            "busy": Out(1),
            "error": Out(1),
            "cycles": Out(32),
            "rd": In(stream.Signature(8 * config.burst_bytes, always_ready=True)),
        }
        sig.update(command_signature(config))
        super().__init__(sig)

    @property
    def lanes(self):
        return self.config.burst_bytes

    def elaborate(self, platform):
        m = Module()
        c = self.config
        lanes = self.lanes

        # ---- activation buffer -------------------------------------------------------------
        m.submodules.xbuf = xbuf = memory.Memory(shape=signed(8), depth=self.max_n, init=[])
        xw = xbuf.write_port()
        xr = xbuf.read_port()
        x_count = Signal(range(self.max_n + 1))
        m.d.comb += [
            # Not while `start` is high: start rewinds x_count, which would lose that write.
            self.x_stream.ready.eq(~self.busy & ~self.start & (x_count != self.max_n)),
            xw.addr.eq(x_count),
            xw.data.eq(self.x_stream.payload),
            xw.en.eq(self.x_stream.valid & self.x_stream.ready),
        ]
        with m.If(xw.en):
            m.d.sync += x_count.eq(x_count + 1)

        # ---- GEMV state ---------------------------------------------------------------------
        # ``k == n - 1`` (the next RD ends its tile) is a register, set from look-ahead values
        # (``n == 1``, ``n - 2``) loaded at ``start``, so that no compare sits in front of the
        # scheduler's command choice (its ``rd_allowed``).
        n_is_1 = Signal()
        n_m2 = Signal(range(self.max_n + 1))
        last_of_tile = Signal()
        m_left = Signal.like(self.m)          # results not yet moved to the output buffer
        tiles_left = Signal(range(self.max_m // lanes + 2))  # tiles whose reads are not all issued
        k = Signal(range(self.max_n))          # column of the next RD within its tile
        pending = Signal(range(c.t_rl + 3))    # RDs issued, data not yet landed
        last_inflight = Signal(range(c.t_rl + 3))

        # ---- output buffer: a shift register of B results ----------------------------------
        res = [Signal(signed(32), name=f"res{lane}") for lane in range(lanes)]
        out_count = Signal(range(lanes + 1))
        m.d.comb += [self.o_stream.valid.eq(out_count != 0), self.o_stream.payload.eq(res[0])]
        out_pop = Signal()
        m.d.comb += out_pop.eq(self.o_stream.valid & self.o_stream.ready)
        # ``(out_count == 0) & (last_inflight == 0)``, kept as a register (set from the next
        # values), so that the tile-end condition below is one gate in front of the scheduler.
        room = Signal(init=1)

        # ---- command selection: the shared DRAM read scheduler ----------------------------
        # ``busy & (tiles_left != 0)``, a register too: set at ``start`` (``m >= 1`` then), cleared
        # by the last RD of the last tile (``busy`` falls only after that).
        reading = Signal()
        rd_issued = Signal()
        rd_last = Signal()
        m.d.comb += xr.addr.eq(k)
        m.submodules.scheduler = sched = ReadScheduler(c)
        connect_command(m, sched, self)
        m.d.comb += [
            sched.reading.eq(reading),
            # The last RD of a tile waits until the previous tile's results have left and no
            # other tile-end is in flight (issued, not yet in the output buffer): the results of
            # this tile will need the output buffer.
            sched.rd_allowed.eq(~last_of_tile | room),
            sched.base_row.eq(self.base_row),
            rd_issued.eq(sched.rd_issued), rd_last.eq(sched.rd_issued & last_of_tile),
        ]
        with m.If(rd_issued):
            with m.If(last_of_tile):
                m.d.sync += [k.eq(0), tiles_left.eq(tiles_left - 1), last_of_tile.eq(n_is_1),
                             reading.eq(tiles_left != 1)]
            with m.Else():
                m.d.sync += [k.eq(k + 1), last_of_tile.eq(k == n_m2)]

        # ---- read tags: the activation and tile-end flag of each RD, popped with its data ----
        m.submodules.tags = tags = fifo.SyncFIFO(width=9, depth=c.t_rl + 2)
        tag_push = Signal()
        tag_last = Signal()
        m.d.sync += [tag_push.eq(rd_issued), tag_last.eq(rd_last)]
        m.d.comb += [
            tags.w_en.eq(tag_push),
            tags.w_data.eq(xr.data.as_unsigned() | (tag_last << 8)),
            tags.r_en.eq(self.rd.valid),
        ]
        x_now = Signal(signed(8))
        land_last = Signal()
        m.d.comb += [x_now.eq(tags.r_data[:8]), land_last.eq(self.rd.valid & tags.r_data[8])]

        # ---- MAC lanes: four stages ------------------------------------------------------------
        # Stage 0 (the burst lands): the burst, its activation and tile-end flag are registered
        # (the tag FIFO's read multiplexer and the DRAM data are then off the multipliers' path).
        # Stage 1: each lane's 8 x 8 product is registered. Stage 2: the product is added into
        # the lane's accumulator, held as two 16-bit halves and the carry out of the low half
        # not yet added into the high half (value ``lo + 2**16 * (hi + carry)``), so that a
        # cycle holds a 16-bit add, not a 32-bit one. Stage 3 (``flush``, the cycle after a
        # tile's last product was added): the carry is resolved into the output buffer and the
        # accumulator restarts (from the product of that cycle, if one arrives).
        d_valid = Signal()
        d_last = Signal()
        d_burst = Signal.like(self.rd.payload)
        d_x = Signal(signed(8))
        m.d.sync += [d_valid.eq(self.rd.valid), d_last.eq(land_last)]
        with m.If(self.rd.valid):
            m.d.sync += [d_burst.eq(self.rd.payload), d_x.eq(x_now)]
        p_valid = Signal()
        p_last = Signal()
        flush = Signal()
        m.d.sync += [p_valid.eq(d_valid), p_last.eq(d_last), flush.eq(p_valid & p_last)]
        prods = []
        for lane in range(lanes):
            p = Signal(signed(16), name=f"prod{lane}")
            m.d.sync += p.eq(d_burst.word_select(lane, 8).as_signed() * d_x)
            prods.append(p)

        m.d.sync += [
            pending.eq(pending + rd_issued - self.rd.valid),
            last_inflight.eq(last_inflight + (rd_issued & rd_last) - flush),
        ]

        resolved = []
        for lane in range(lanes):
            lo = Signal(16, name=f"acc_lo{lane}")
            hi = Signal(16, name=f"acc_hi{lane}")
            carry = Signal(name=f"acc_c{lane}")
            p = prods[lane]
            p_hi = p[15].replicate(16)
            low_sum = Signal(17, name=f"acc_low_sum{lane}")
            m.d.comb += low_sum.eq(lo + p[:16])
            word = Signal(signed(32), name=f"acc_word{lane}")
            m.d.comb += word.eq(Cat(lo, (hi + carry)[:16]))
            resolved.append(word)
            with m.If(flush):
                m.d.sync += [lo.eq(Mux(p_valid, p[:16], 0)), hi.eq(Mux(p_valid, p_hi, 0)),
                             carry.eq(0)]
            with m.Elif(p_valid):
                m.d.sync += [lo.eq(low_sum[:16]), carry.eq(low_sum[16]),
                             hi.eq(hi + p_hi + carry)]

        # Output buffer: filled at a flush (empty then, see rd_allowed), shifted on each pop.
        out_count_next = Signal.like(out_count)
        m.d.comb += out_count_next.eq(out_count)
        m.d.sync += out_count.eq(out_count_next)
        with m.If(flush):
            m.d.sync += [res[lane].eq(resolved[lane]) for lane in range(lanes)]
            with m.If(m_left >= lanes):
                m.d.comb += out_count_next.eq(lanes)
                m.d.sync += m_left.eq(m_left - lanes)
            with m.Else():
                m.d.comb += out_count_next.eq(m_left)
                m.d.sync += m_left.eq(0)
        with m.Elif(out_pop):
            m.d.sync += [res[lane].eq(res[lane + 1]) for lane in range(lanes - 1)]
            m.d.comb += out_count_next.eq(out_count - 1)
        # The next ``room``: a tile-end RD issued now leaves ``last_inflight >= 1`` (a flush
        # retires an earlier tile-end, so ``last_inflight >= 1`` then), otherwise
        # ``last_inflight`` drops by ``flush``.
        m.d.sync += room.eq(~rd_last & (out_count_next == 0) & (last_inflight == flush))

        # ---- start / finish -------------------------------------------------------------------
        with m.If(self.busy):
            m.d.sync += self.cycles.eq(self.cycles + 1)
            done = ((tiles_left == 0) & (pending == 0) & (last_inflight == 0)
                    & (out_count == 0))
            with m.If(done):
                m.d.sync += self.busy.eq(0)
        with m.Elif(self.start):
            valid = ((self.m != 0) & (self.m <= self.max_m) & (self.n != 0)
                     & (self.n <= x_count))
            with m.If(valid):
                m.d.comb += sched.load.eq(1)
                m.d.sync += [
                    self.busy.eq(1), self.error.eq(0), self.cycles.eq(1), reading.eq(1),
                    n_is_1.eq(self.n == 1), n_m2.eq(self.n - 2), last_of_tile.eq(self.n == 1),
                    m_left.eq(self.m),
                    tiles_left.eq((self.m + lanes - 1) >> (lanes.bit_length() - 1)),
                    k.eq(0), x_count.eq(0),
                ]
            with m.Else():
                m.d.sync += self.error.eq(1)
        return m

