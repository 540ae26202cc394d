"""GEMV bank: INT8 weights from LPDDR5 rows x INT8 activations -> INT32 results.

Synthesizable: the DRAM command scheduler and the MAC datapath. The DRAM array is outside (in
simulation :class:`ahasd.tb.dram_bank.DRAMBankModel`).

Dataflow. One lane per burst byte: a burst carries ``W[t*B + l, k]`` for the ``B`` lanes of output
tile ``t`` at column ``k`` (layout :func:`ahasd.sim.blocks.dram.weight_layout`); every lane multiplies its
byte by the broadcast activation ``x[k]`` and adds the product into its 32-bit accumulator. After
``N`` bursts the tile's ``min(B, M - t*B)`` results leave on ``o_stream`` (lane order) while the next
tile accumulates.

Scheduling. Bursts are read in address order; consecutive rows lie in consecutive banks, so while
the current row streams out at one RD per tCCD, the next row's bank is precharged and activated in
the command slots between the reads. With ``n_banks >= 2`` a row switch is fully hidden when
``bursts_per_row * t_ccd >= t_rp + t_rcd + 2`` (the PRE and ACT take a command slot each; the
bank's tRAS has long passed, since it was opened ``n_banks - 1`` rows earlier): 256 >= 66 for the
defaults. Every ``t_refi`` cycles reads stop, open banks are precharged and an all-bank REF is
issued; the precharge, tRFC and re-activation (about t_rp + t_rfc + t_rcd) per refresh and the
pipeline fill are the losses against :meth:`ahasd.sim.blocks.dram.DRAMConfig.read_bound`, which charges
only tRFC. The scheduler keeps its own copy of every timing counter, so it never
issues an illegal command (the bank model checks this in every test).
"""

from amaranth.hdl import Array, Module, Signal, signed
from amaranth.lib import fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.dram_port import Cmd, command_signature
from ahasd.sim.blocks.dram import DRAMConfig
from ahasd.sim.params import check_instance, check_positive, check_power_of_two

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
    cmd, cmd_bank, cmd_row, cmd_col : out
        DRAM command bus.
    rd : In(stream.Signature(8 * burst_bytes, always_ready=True))
        Read data from the DRAM (any fixed latency up to ``config.t_rl``).
    """

    def __init__(self, *, config=DRAMConfig(), max_n=4096, max_m=4096):
        with rejecting_construction(self):
            check_instance("config", config, DRAMConfig)
            check_power_of_two("config.n_banks", config.n_banks)
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
        nb, bpr, lanes = c.n_banks, c.bursts_per_row, self.lanes
        bank_bits = (nb - 1).bit_length()

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
        n_reg = Signal.like(self.n)
        m_left = Signal.like(self.m)          # results not yet moved to the output buffer
        tiles_left = Signal(range(self.max_m // lanes + 2))  # tiles whose reads are not all issued
        k = Signal(range(self.max_n))          # column of the next RD within its tile
        col = Signal(range(bpr))               # burst of the next RD within the current row
        b_cur = Signal(range(nb))
        r_cur = Signal(range(c.rows))
        pending = Signal(range(c.t_rl + 3))    # RDs issued, data not yet landed
        last_inflight = Signal(range(c.t_rl + 3))

        # ---- scheduler's copy of the DRAM timing state --------------------------------------
        act_sat = max(c.t_ras, c.t_rcd)
        is_open = Array(Signal(name=f"open{b}") for b in range(nb))
        open_row = Array(Signal(range(c.rows), name=f"open_row{b}") for b in range(nb))
        since_act = Array(Signal(range(act_sat + 1), init=act_sat, name=f"since_act{b}")
                          for b in range(nb))
        since_pre = Array(Signal(range(c.t_rp + 1), init=c.t_rp, name=f"since_pre{b}")
                          for b in range(nb))
        since_rd = Signal(range(c.t_ccd + 1), init=c.t_ccd)
        since_any_pre = Signal(range(c.t_rp + 1), init=c.t_rp)
        rfc_left = Signal(range(c.t_rfc + 1))
        since_ref = Signal(range(c.t_refi + 1))
        for b in range(nb):
            with m.If(since_act[b] != act_sat):
                m.d.sync += since_act[b].eq(since_act[b] + 1)
            with m.If(since_pre[b] != c.t_rp):
                m.d.sync += since_pre[b].eq(since_pre[b] + 1)
        with m.If(since_rd != c.t_ccd):
            m.d.sync += since_rd.eq(since_rd + 1)
        with m.If(since_any_pre != c.t_rp):
            m.d.sync += since_any_pre.eq(since_any_pre + 1)
        with m.If(rfc_left != 0):
            m.d.sync += rfc_left.eq(rfc_left - 1)
        with m.If(since_ref != c.t_refi):
            m.d.sync += since_ref.eq(since_ref + 1)

        def issue(cmd, bank=0, row=0, col_=0):
            m.d.comb += [self.cmd.eq(cmd), self.cmd_bank.eq(bank), self.cmd_row.eq(row),
                         self.cmd_col.eq(col_)]

        def do_act(bank, row):
            issue(Cmd.ACT, bank, row)
            m.d.sync += [is_open[bank].eq(1), open_row[bank].eq(row), since_act[bank].eq(1)]

        def do_pre(bank):
            issue(Cmd.PRE, bank)
            m.d.sync += [is_open[bank].eq(0), since_pre[bank].eq(1), since_any_pre.eq(1)]

        # The row after the current one (next bank; the row advances when the bank wraps).
        b_nxt = Signal(range(nb))
        r_nxt = Signal(range(c.rows))
        wrap = Signal()
        m.d.comb += [
            wrap.eq(b_cur == nb - 1),
            b_nxt.eq(b_cur + 1 if nb > 1 else 0),
            r_nxt.eq(r_cur + wrap),
        ]

        # ---- output buffer: a shift register of B results ----------------------------------
        res = [Signal(signed(32), name=f"res{l}") for l in range(lanes)]
        out_count = Signal(range(lanes + 1))
        m.d.comb += [self.o_stream.valid.eq(out_count != 0), self.o_stream.payload.eq(res[0])]
        out_pop = Signal()
        m.d.comb += out_pop.eq(self.o_stream.valid & self.o_stream.ready)

        # ---- command selection --------------------------------------------------------------
        reading = Signal()
        m.d.comb += reading.eq(self.busy & (tiles_left != 0))
        last_of_tile = Signal()
        m.d.comb += last_of_tile.eq(k == n_reg - 1)
        ref_due = Signal()
        m.d.comb += ref_due.eq(since_ref == c.t_refi)
        cur_ready = Signal()
        m.d.comb += cur_ready.eq(is_open[b_cur] & (open_row[b_cur] == r_cur)
                                 & (since_act[b_cur] >= c.t_rcd))
        rd_ok = Signal()
        # The last RD of a tile waits until the previous tile's results have left and no other
        # tile-end is in flight: the results of this tile will need the output buffer.
        m.d.comb += rd_ok.eq(reading & ~ref_due & cur_ready & (since_rd >= c.t_ccd)
                             & (rfc_left == 0)
                             & (~last_of_tile | ((out_count == 0) & (last_inflight == 0))))
        rd_issued = Signal()
        rd_last = Signal()
        m.d.comb += xr.addr.eq(k)

        def prepare(bank, row):
            """Conditions to precharge / activate ``bank`` so that ``row`` is open in it."""
            pre_ok = Signal()
            act_ok = Signal()
            m.d.comb += [
                pre_ok.eq(is_open[bank] & (open_row[bank] != row) & (since_act[bank] >= c.t_ras)),
                act_ok.eq(~is_open[bank] & (since_pre[bank] >= c.t_rp) & (rfc_left == 0)),
            ]
            return pre_ok, act_ok

        cur_pre, cur_act = prepare(b_cur, r_cur)
        nxt_pre, nxt_act = prepare(b_nxt, r_nxt)
        nxt_wanted = Signal()
        m.d.comb += nxt_wanted.eq(reading & (b_nxt != b_cur))

        # Banks to close before a refresh: the lowest-numbered open one whose tRAS has passed.
        pre_for_ref = Signal()
        pre_bank = Signal(range(nb))
        for b in reversed(range(nb)):
            with m.If(is_open[b] & (since_act[b] >= c.t_ras)):
                m.d.comb += [pre_for_ref.eq(1), pre_bank.eq(b)]
        all_closed = Signal()
        m.d.comb += all_closed.eq(~_any(is_open[b] for b in range(nb)))

        with m.If(ref_due):
            with m.If(pre_for_ref):
                do_pre(pre_bank)
            with m.Elif(all_closed & (since_any_pre >= c.t_rp)):
                issue(Cmd.REF)
                m.d.sync += [rfc_left.eq(c.t_rfc - 1), since_ref.eq(1)]
        with m.Elif(rd_ok):
            issue(Cmd.RD, b_cur, r_cur, col)
            m.d.comb += [rd_issued.eq(1), rd_last.eq(last_of_tile)]
            m.d.sync += since_rd.eq(1)
            with m.If(col == bpr - 1):
                m.d.sync += [col.eq(0), b_cur.eq(b_nxt), r_cur.eq(r_nxt)]
            with m.Else():
                m.d.sync += col.eq(col + 1)
            with m.If(last_of_tile):
                m.d.sync += [k.eq(0), tiles_left.eq(tiles_left - 1)]
            with m.Else():
                m.d.sync += k.eq(k + 1)
        with m.Elif(reading & cur_pre):
            do_pre(b_cur)
        with m.Elif(reading & cur_act):
            do_act(b_cur, r_cur)
        with m.Elif(nxt_wanted & nxt_pre):
            do_pre(b_nxt)
        with m.Elif(nxt_wanted & nxt_act):
            do_act(b_nxt, r_nxt)

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

        m.d.sync += [
            pending.eq(pending + rd_issued - self.rd.valid),
            last_inflight.eq(last_inflight + (rd_issued & rd_last) - land_last),
        ]

        # ---- MAC lanes -----------------------------------------------------------------------
        acc = [Signal(signed(32), name=f"acc{l}") for l in range(lanes)]
        prods = []
        for l in range(lanes):
            p = Signal(signed(16), name=f"prod{l}")
            m.d.comb += p.eq(self.rd.payload.word_select(l, 8).as_signed() * x_now)
            prods.append(p)
        with m.If(self.rd.valid):
            for l in range(lanes):
                with m.If(land_last):
                    m.d.sync += acc[l].eq(0)
                with m.Else():
                    m.d.sync += acc[l].eq(acc[l] + prods[l])

        # Output buffer: filled at a tile end (it is empty then, see rd_ok), shifted on each pop.
        with m.If(land_last):
            m.d.sync += [res[l].eq(acc[l] + prods[l]) for l in range(lanes)]
            with m.If(m_left >= lanes):
                m.d.sync += [out_count.eq(lanes), m_left.eq(m_left - lanes)]
            with m.Else():
                m.d.sync += [out_count.eq(m_left), m_left.eq(0)]
        with m.Elif(out_pop):
            m.d.sync += [res[l].eq(res[l + 1]) for l in range(lanes - 1)]
            m.d.sync += out_count.eq(out_count - 1)

        # ---- start / finish -------------------------------------------------------------------
        with m.If(self.busy):
            m.d.sync += self.cycles.eq(self.cycles + 1)
            done = (tiles_left == 0) & (pending == 0) & (out_count == 0)
            with m.If(done):
                m.d.sync += self.busy.eq(0)
        with m.Elif(self.start):
            valid = ((self.m != 0) & (self.m <= self.max_m) & (self.n != 0)
                     & (self.n <= x_count))
            with m.If(valid):
                m.d.sync += [
                    self.busy.eq(1), self.error.eq(0), self.cycles.eq(1),
                    n_reg.eq(self.n), m_left.eq(self.m),
                    tiles_left.eq((self.m + lanes - 1) >> (lanes.bit_length() - 1)),
                    k.eq(0), col.eq(0), x_count.eq(0),
                    b_cur.eq(self.base_row[:bank_bits] if bank_bits else 0),
                    r_cur.eq(self.base_row >> bank_bits),
                ]
            with m.Else():
                m.d.sync += self.error.eq(1)
        return m


def _any(values):
    result = 0
    for v in values:
        result = result | v
    return result
