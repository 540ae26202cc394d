"""State-commit unit: the rank-A SpecLA commit applied in fixed point to a state streamed from DRAM.

Synthesizable: a DRAM read scheduler and ``E = burst_bytes / 2`` lanes. The state ``S`` (d_k x
d_v, int16 Q3.12) lies row-major in DRAM (:func:`ahasd.sim.specla.fixed.state_layout`); every
burst carries ``E`` elements of one row ``i``. Lane ``l`` computes

    S'[i, j] = sat16((P * S[i, j] + sum_{t < rank} (kw[t, i] * u[t, j]) << 1 + 2^14) >> 15)

as one carry-save tree of the ``max_rank + 1`` products' partial products (:class:`CommitLane`,
:mod:`ahasd.hw.csa`), pipelined (:func:`lane_latency` cycles: 6 for ``max_rank`` 16); one burst
enters per cycle, so the unit keeps pace with the DRAM (one burst per tCCD). Bit-exact mirror and
formats: :mod:`ahasd.sim.specla.fixed`.

Factors are loaded on the ``f`` stream (always ready, also while a commit runs), one ``data`` word
of ``16 * max(max_rank, E)`` bits (16-bit values, value n in bits ``16n..16n+15``) per cycle, its
``kind`` saying what it is: ``P`` (value 0: the decay product of the whole path), ``W`` (values t:
``w_t``, the decay after token t), ``K`` at ``index = i`` (values t: ``k_t[i]``, stored as ``kw_t =
round(k_t[i] * w_t)`` by ``max_rank`` multipliers, so ``W`` comes first), ``U`` for token ``t`` at
``index = jb``
(values l: ``u_t[jb * E + l]``). A commit loads in ``2 + d_k + rank * d_v / E`` cycles (258 for
128 x 128, A = 16, against about 4100 to stream the state). There are two factor banks: the words
taken before a ``start`` fill the bank that commit reads, those after it (the cycle of the start
included) the other bank, for the next commit, while this one streams. ``start`` may follow the
last word at once (the reads wait for the key scaling's last row, :data:`KEY_LATENCY` cycles).
The keys live in a memory of ``2 d_k`` words of ``max_rank`` values (read by row), the values in
one memory per lane of ``2 d_v / E`` words of ``max_rank`` values (read by burst column), all in
``amaranth.lib.memory``, read when a burst lands. Each lane's MAC tree is one
:class:`CommitLane` and each key scaling one :class:`KeyScale`, so the area flow maps each
circuit once and counts it per instance.

Scheduling is the GEMV bank's (:mod:`ahasd.hw.gemv`): bursts in address order, consecutive rows in
consecutive banks, the next bank precharged and activated between reads, per-bank refresh of the
banks not in use (all-bank refresh every tREFI with ``DRAMConfig(refresh="all_bank")``). A read
is issued only while the output FIFO has room for everything in flight, so back-pressure on
``o_stream`` stalls the reads instead of losing data.
"""

from amaranth.hdl import Cat, Module, Mux, Signal, signed
from amaranth.lib import data, enum, fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ahasd.hw.construction import rejecting_construction
from ahasd.hw.csa import (
    add_constant,
    pipelined_add,
    product_columns,
    product_counts,
    reduce_columns,
    reduction_levels,
)
from ahasd.hw.dram_port import ReadScheduler, command_signature, connect_command
from ahasd.spec.dram import DRAMConfig
from ahasd.spec.params import check_instance, check_int, check_power_of_two
from ahasd.spec.specla import ACC_BITS, FACTOR_KINDS, W_FRAC

__all__ = ["StateCommit", "CommitLane", "KeyScale", "FactorKind", "factor_layout",
           "lane_latency", "LANE_STAGE_LEVELS", "KEY_STAGE_LEVELS", "LANE_ADD_CUTS",
           "KEY_ADD_CUTS", "KEY_LATENCY"]

#: Full-adder levels of a lane's carry-save tree per pipeline stage (about 6 cells of depth
#: each in the area mapping).
LANE_STAGE_LEVELS = 5
#: The key scaling's tree (16 rows) in one stage: 6 levels.
KEY_STAGE_LEVELS = 6
#: Where the final additions are cut into one chunk per cycle (about two cells of depth per
#: bit in the area mapping): the lane's 40-bit sum in 14 + 14 + 12 bits, the last chunk with
#: the saturation; the key product's 33 bits in 11 + 11 + 11.
LANE_ADD_CUTS = (14, 28)
KEY_ADD_CUTS = (11, 22)
#: Cycles from a key value into :class:`KeyScale` to its scaled value.
KEY_LATENCY = 1 + len(KEY_ADD_CUTS)
_KEY_BITS = 33          # |k * w + 2^14| < 2^32


class FactorKind(enum.Enum, shape=2):
    """What a factor-port write loads (codes shared with
    :func:`ahasd.sim.specla.fixed.load_sequence`)."""
    P = FACTOR_KINDS["P"]   # decay product of the path (Q1.15, unsigned)
    W = FACTOR_KINDS["W"]   # w_0..w_{R-1} (Q1.15, unsigned)
    K = FACTOR_KINDS["K"]   # k_0[i]..k_{R-1}[i] at index = i (Q1.14), stored as round(k * w_t)
    U = FACTOR_KINDS["U"]   # u_t[jb*E .. jb*E+E-1] for token t at index = jb (Q3.12)


def factor_layout(*, max_rank, d_k, d_v, lanes):
    """Payload of the ``f`` stream: what the word loads (:class:`FactorKind`), its token ``t``,
    its key row or value burst column ``index``, and the ``data`` word of
    ``16 * max(max_rank, lanes)`` bits."""
    return data.StructLayout({"kind": FactorKind, "t": range(max_rank),
                              "index": range(max(d_k, d_v // lanes)),
                              "data": 16 * max(max_rank, lanes)})


class StateCommit(wiring.Component):
    """Rank-A state commit over a state streamed from LPDDR5.

    Parameters
    ----------
    config : DRAMConfig
        DRAM geometry and timing; ``n_banks`` a power of two, ``burst_bytes >= 2``.
    d_k, d_v : int
        State shape; ``d_v`` a multiple of ``E = burst_bytes / 2``.
    max_rank : int
        Largest accepted path length A.

    Ports
    -----
    f : in stream of :attr:`factor_layout` {kind: FactorKind, t, index, data}
        Factor loads (see the module docstring); always ``ready``: the words after a ``start``
        load the next commit into the other factor bank.
    rank, base_row, start : in
        Commit ``rank`` tokens (0..max_rank) to the state at global row ``base_row``; ``start``
        while idle begins; a ``rank`` above ``max_rank`` sets ``error`` and nothing runs (a
        command strobe with its operands, as the GEMV bank's, not a stream: a ``start`` while
        busy is ignored).
    o_stream : out stream of ``E * 16`` bits
        The new state's bursts in address order (same layout as read).
    busy, error, cycles : out
        Running; last start rejected; cycles from ``start`` to the last burst leaving.
    cmd, cmd_bank, cmd_row, cmd_col : the DRAM command port; rd : the read bursts (a valid-only
        stream, docs/streams.md).
    """

    def __init__(self, *, config=DRAMConfig(), d_k=128, d_v=128, max_rank=16):
        with rejecting_construction(self):
            check_instance("config", config, DRAMConfig)
            check_power_of_two("config.n_banks", config.n_banks)
            ReadScheduler.check_config(config)
            check_int("config.burst_bytes", config.burst_bytes, 2)
            check_int("d_k", d_k, 1)
            check_int("d_v", d_v, 1)
            check_int("max_rank", max_rank, 1)
            lanes = config.burst_bytes // 2
            if d_v % lanes:
                raise ValueError(f"d_v must be a multiple of {lanes} (elements per burst), "
                                 f"not {d_v}")
            bursts = d_k * d_v // lanes
            if bursts > config.rows * config.n_banks * config.bursts_per_row:
                raise ValueError(f"a {d_k}x{d_v} state needs {bursts} bursts; the DRAM has "
                                 f"{config.rows * config.n_banks * config.bursts_per_row}")
        self.config, self.d_k, self.d_v, self.max_rank = config, d_k, d_v, max_rank
        self.lanes = lanes
        self.bursts = bursts
        #: Factor-port word: 16-bit values, enough for a key row (max_rank) or a value burst (E).
        self.load_width = 16 * max(max_rank, lanes)
        #: Output FIFO depth: room for every burst in flight at full rate, plus slack.
        #: Cycles from a burst landing on ``rd`` to its new elements entering the output FIFO (the
        #: landing register and the factor memories' read, then a lane).
        self.pipeline_cycles = 1 + lane_latency(max_rank)
        self.fifo_depth = (config.t_rl + self.pipeline_cycles + 2) // config.t_ccd + 3
        #: Payload of ``f`` (:func:`factor_layout`).
        self.factor_layout = factor_layout(max_rank=max_rank, d_k=d_k, d_v=d_v, lanes=lanes)
        sig = {
            "f": In(stream.Signature(self.factor_layout)),
            "rank": In(range(max_rank + 1)),
            "base_row": In(range(config.rows * config.n_banks)),
            "start": In(1),
            "o_stream": Out(stream.Signature(16 * lanes)),
            "busy": Out(1), "error": Out(1), "cycles": Out(32),
            "rd": In(stream.Signature(8 * config.burst_bytes, always_ready=True)),
        }
        sig.update(command_signature(config))
        super().__init__(sig)

    def elaborate(self, platform):
        m = Module()
        c, E, R = self.config, self.lanes, self.max_rank
        nblk = self.d_v // E
        accept = Signal()          # a start taken this cycle
        load_bank = Signal()       # the factor bank the loads fill
        run_bank = Signal()        # the bank the running commit reads

        # ---- factor storage: two banks, one filled while the other is read ------------------
        m.submodules.kmem = kmem = memory.Memory(shape=16 * R, depth=2 * self.d_k, init=[])
        # The values: one memory per lane (value t of lane ln at 16-bit position t), so every lane
        # reads its own word and the lanes are one circuit for the area flow.
        umems = []
        for ln in range(E):
            m.submodules[f"umem{ln}"] = umem = memory.Memory(shape=16 * R, depth=2 * nblk,
                                                             init=[])
            umems.append((umem.write_port(granularity=16), umem.read_port()))
        kw_port = kmem.write_port()
        kr_port = kmem.read_port()
        p_regs = [Signal(16, init=1 << W_FRAC, name=f"p{b}") for b in range(2)]
        w_regs = [Signal(16, name=f"w{t}") for t in range(R)]

        # ---- factor loads: L1 registers the word, L2 the key scaling -------------------------
        # Always ready; a word taken in the cycle of an accepted start loads the next commit.
        m.d.comb += self.f.ready.eq(1)
        l1_valid, l1_bank = Signal(), Signal()
        l1 = Signal(self.factor_layout)
        m.d.sync += [l1_valid.eq(self.f.valid), l1.eq(self.f.payload),
                     l1_bank.eq(load_bank ^ accept)]
        kws_in = []
        for t in range(R):
            # kw_t = sat16(round(k_t[i] * w_t)): R KeyScale modules, all the same circuit.
            m.submodules[f"kscale{t}"] = scale = KeyScale()
            m.d.comb += [scale.k.eq(l1.data.word_select(t, 16)), scale.w.eq(w_regs[t])]
            kws_in.append(scale.kw)
        # A key row's write follows its word through the KeyScale pipeline.
        key, key_bank, key_index = (l1_valid & (l1.kind == FactorKind.K) & (l1.index < self.d_k),
                                    l1_bank, l1.index)
        in_flight = [key & (key_bank == run_bank)]
        for n in range(KEY_LATENCY):
            nk, nb = Signal(name=f"key{n}"), Signal(name=f"key{n}_bank")
            ni = Signal(range(self.d_k), name=f"key{n}_index")
            m.d.sync += [nk.eq(key), nb.eq(key_bank), ni.eq(key_index)]
            key, key_bank, key_index = nk, nb, ni
            in_flight.append(key & (key_bank == run_bank))
        m.d.comb += [kw_port.addr.eq(key_index + Mux(key_bank, self.d_k, 0)),
                     kw_port.data.eq(Cat(*kws_in)), kw_port.en.eq(key)]
        # Key rows of the running commit's bank still being scaled.
        keys_in_flight = Signal()
        m.d.comb += keys_in_flight.eq(Cat(*in_flight).any())
        u_en = Signal(R)
        for ln, (uw_port, _) in enumerate(umems):
            m.d.comb += [uw_port.addr.eq(l1.index + Mux(l1_bank, nblk, 0)), uw_port.en.eq(u_en),
                         uw_port.data.eq(Cat(*[l1.data.word_select(ln, 16)] * R))]
        with m.If(l1_valid):
            with m.Switch(l1.kind):
                with m.Case(FactorKind.P):
                    with m.If(l1_bank):
                        m.d.sync += p_regs[1].eq(l1.data[:16])
                    with m.Else():
                        m.d.sync += p_regs[0].eq(l1.data[:16])
                with m.Case(FactorKind.W):
                    m.d.sync += [w.eq(l1.data.word_select(t, 16))
                                 for t, w in enumerate(w_regs)]
                # Indices past the memories are ignored (they would alias other words).
                with m.Case(FactorKind.U):
                    with m.If(l1.index < nblk):
                        m.d.comb += u_en.eq(1 << l1.t)

        # ---- run state --------------------------------------------------------------------
        rank_mask = Signal(R)
        p_run = Signal(16)
        m.d.sync += p_run.eq(Mux(run_bank, p_regs[1], p_regs[0]))
        reads_left = Signal(range(self.bursts + 1))
        outstanding = Signal(range(self.fifo_depth + 1))

        # ---- the shared DRAM read scheduler (as the GEMV bank's) ---------------------------
        rd_issued = Signal()
        popped = Signal()
        m.submodules.scheduler = sched = ReadScheduler(c)
        connect_command(m, sched, self)
        m.d.comb += [
            # (no read while a key row of the bank is still being scaled: a commit may start
            # the cycle after its last factor word)
            sched.reading.eq(self.busy & (reads_left != 0) & ~keys_in_flight),
            sched.rd_allowed.eq(outstanding < self.fifo_depth),   # room in the output FIFO
            sched.base_row.eq(self.base_row),
            rd_issued.eq(sched.rd_issued),
        ]
        with m.If(rd_issued):
            m.d.sync += reads_left.eq(reads_left - 1)

        # ---- datapath: land -> (factor reads) -> MAC lanes (2 stages) -> output FIFO --------
        land_jb = Signal(range(nblk))
        land_i = Signal(range(self.d_k))
        m.d.comb += [kr_port.addr.eq(land_i + Mux(run_bank, self.d_k, 0)),
                     kr_port.en.eq(self.rd.valid)]
        for _, ur_port in umems:
            m.d.comb += [ur_port.addr.eq(land_jb + Mux(run_bank, nblk, 0)),
                         ur_port.en.eq(self.rd.valid)]
        with m.If(self.rd.valid):
            with m.If(land_jb == nblk - 1):
                m.d.sync += [land_jb.eq(0), land_i.eq(Mux(land_i == self.d_k - 1, 0, land_i + 1))]
            with m.Else():
                m.d.sync += land_jb.eq(land_jb + 1)
        s1_valid = Signal()
        s1_data = Signal(16 * E)
        m.d.sync += [s1_valid.eq(self.rd.valid), s1_data.eq(self.rd.payload)]
        valid = s1_valid
        for n in range(self.pipeline_cycles - 1):
            nxt = Signal(name=f"s{n + 2}_valid")
            m.d.sync += nxt.eq(valid)
            valid = nxt
        results = []
        for ln in range(E):
            # One module per lane, all the same circuit: the area flow maps it once and counts
            # it E times (ahasd.synth.hierarchy).
            m.submodules[f"lane{ln}"] = lane = CommitLane(R)
            m.d.comb += [lane.p.eq(p_run), lane.s.eq(s1_data.word_select(ln, 16)),
                         lane.kw.eq(kr_port.data), lane.mask.eq(rank_mask),
                         lane.u.eq(umems[ln][1].data)]
            results.append(lane.res)

        m.submodules.out = out = fifo.SyncFIFO(width=16 * E, depth=self.fifo_depth)
        m.d.comb += [
            out.w_en.eq(valid), out.w_data.eq(Cat(*results)),
            self.o_stream.valid.eq(out.r_rdy), self.o_stream.payload.eq(out.r_data),
            out.r_en.eq(self.o_stream.ready),
            popped.eq(out.r_rdy & self.o_stream.ready),
        ]
        m.d.sync += outstanding.eq(outstanding + rd_issued - popped)

        # ---- start / finish ------------------------------------------------------------------
        with m.If(self.busy):
            m.d.sync += self.cycles.eq(self.cycles + 1)
            with m.If((reads_left == 0) & (outstanding == popped)):
                m.d.sync += self.busy.eq(0)
        with m.Elif(self.start):
            with m.If(self.rank <= R):
                m.d.comb += [sched.load.eq(1), accept.eq(1)]
                m.d.sync += [
                    self.busy.eq(1), self.error.eq(0), self.cycles.eq(1),
                    rank_mask.eq(Cat(*[self.rank > t for t in range(R)])),
                    reads_left.eq(self.bursts), land_jb.eq(0), land_i.eq(0),
                    run_bank.eq(load_bank), load_bank.eq(~load_bank),
                ]
            with m.Else():
                m.d.sync += self.error.eq(1)
        return m


class KeyScale(wiring.Component):
    """``kw = sat16(round(k * w))`` for one factor value: ``k`` Q1.14 (signed), ``w`` the decay
    after its token (UQ1.15); one partial-product tree (:mod:`ahasd.hw.csa`), registered as two
    rows, added in chunks (:data:`KEY_ADD_CUTS`) and saturated: ``kw`` follows ``k`` and ``w``
    by :data:`KEY_LATENCY` cycles (combinational from the last registers)."""

    def __init__(self):
        super().__init__({"k": In(signed(16)), "w": In(16), "kw": Out(signed(16))})

    def elaborate(self, platform):
        m = Module()
        cols = [[] for _ in range(_KEY_BITS)]
        const = product_columns(m, cols, self.k, self.w, a_signed=True, b_signed=False,
                                width=_KEY_BITS, name="pp")
        add_constant(cols, const + (1 << (W_FRAC - 1)), _KEY_BITS)
        x, y = reduce_columns(m, cols, _KEY_BITS, "csa", stage_levels=KEY_STAGE_LEVELS)
        total = pipelined_add(m, x, y, _KEY_BITS, KEY_ADD_CUTS, "add")
        m.d.comb += self.kw.eq(_saturate_shifted(total, W_FRAC))
        return m


class CommitLane(wiring.Component):
    """One lane of the commit: ``res = sat16((p * s + sum_{t < rank} (kw_t * u_t) << 1 + 2^14)
    >> 15)``, pipelined: ``res`` is registered :attr:`latency` cycles after its inputs.

    The ``max_rank + 1`` products are not multipliers: their partial products and the rounding
    constant go into one carry-save tree of full adders (:mod:`ahasd.hw.csa`), registered after
    every :data:`LANE_STAGE_LEVELS` levels and as its two final 40-bit rows; these are added in
    chunks (:data:`LANE_ADD_CUTS`, one per cycle), the last chunk saturated into ``res``.

    Ports: ``p`` (Q1.15, unsigned), ``s`` (the old state element), ``kw`` and ``u`` (``max_rank``
    16-bit values each, value t in bits ``16t..16t+15``), ``mask`` (bit t: token t counts, i.e.
    ``t < rank``); ``res`` the new element.
    """

    def __init__(self, max_rank):
        self.max_rank = max_rank
        #: Cycles from the inputs to ``res``.
        self.latency = lane_latency(max_rank)
        super().__init__({
            "p": In(16), "s": In(signed(16)), "kw": In(16 * max_rank), "u": In(16 * max_rank),
            "mask": In(max_rank), "res": Out(signed(16)),
        })

    def elaborate(self, platform):
        m = Module()
        cols = [[] for _ in range(ACC_BITS)]
        const = product_columns(m, cols, self.p, self.s, a_signed=False, b_signed=True,
                                width=ACC_BITS, name="pp_s")
        for t in range(self.max_rank):
            kw = Signal(16, name=f"kw{t}")
            m.d.comb += kw.eq(Mux(self.mask[t], self.kw.word_select(t, 16), 0))
            const += product_columns(m, cols, kw, self.u.word_select(t, 16), a_signed=True,
                                     b_signed=True, width=ACC_BITS, shift=1, name=f"pp{t}")
        # acc has W_FRAC + S_FRAC fraction bits, the result S_FRAC: round half up.
        add_constant(cols, const + (1 << (W_FRAC - 1)), ACC_BITS)
        x, y = reduce_columns(m, cols, ACC_BITS, "csa", stage_levels=LANE_STAGE_LEVELS)
        total = pipelined_add(m, x, y, ACC_BITS, LANE_ADD_CUTS, "acc")
        m.d.sync += self.res.eq(_saturate_shifted(total, W_FRAC))
        return m


def lane_latency(max_rank):
    """Cycles of a :class:`CommitLane` of ``max_rank`` tokens: its carry-save stages, then the
    add-and-saturate stage."""
    counts = [0] * ACC_BITS
    const = product_counts(counts, 16, 16, a_signed=False, b_signed=True, width=ACC_BITS)
    for _ in range(max_rank):
        const += product_counts(counts, 16, 16, a_signed=True, b_signed=True, width=ACC_BITS,
                                shift=1)
    add_constant(counts, const + (1 << (W_FRAC - 1)), ACC_BITS)
    return -(-reduction_levels(counts) // LANE_STAGE_LEVELS) + len(LANE_ADD_CUTS) + 1


def _saturate_shifted(total, shift):
    """``sat16(total >> shift)`` for a two's-complement ``total``: in range when the bits from
    ``shift + 15`` up are all equal (the sign), else the limit of the sign."""
    top = total[shift + 15:]
    in_range = (top == 0) | (top == (1 << len(top)) - 1)
    return Mux(in_range, total[shift:shift + 16],
               Mux(total[-1], 1 << 15, (1 << 15) - 1))
