"""RTL in the loop: the system simulator's EDC and TVC decisions from the Verilated controller top.

:class:`RtlDeciders` is a :class:`ahasd.sim.system.deciders.Deciders` whose every decision comes
from :class:`ahasd.hw.controller.Controller` Verilated on the project's harness
(:class:`ahasd.cosim.controller.VerilatedController`), through the top's streams and its
AXI4-Lite registers (programmed with :class:`ahasd.firmware.driver.ControllerDriver`):

* **EDC** (one controller top, ``EDC_CTRL.mode`` = predict, ``TVC_CTRL.disable`` = 1): each
  drafted batch is pushed into ``draft_in`` with its mean entropy quantised to UQ4.12 exactly as
  the golden EDC quantises it (:func:`ahasd.sim.blocks.edc.entropy_to_fx`); the push is the EDC
  draft event and ``decision`` answers one cycle later. Each verification result is pushed into
  ``feedback_in`` (NPU clock); it crosses the feedback queue and its hand-over at
  ``feedback_out`` is the EDC verify event. A draft waits until every earlier result has been
  handed over, so the RTL sees the events in the engine's order. The results carry no TVC record
  (``kv_length`` 0, which TVC counts as a record error and otherwise ignores): this top's TVC is
  off.
* **TVC** (a second controller top, ``EDC_CTRL.mode`` = never): the frequency ratio, the offline
  presets (``TVC_*_PRESET`` + ``TVC_CTRL.load_presets``) and ``TVC_CTRL.max_len`` are written over
  AXI4-Lite; NVCT records enter as verification results at ``feedback_in`` (``cycles``,
  ``kv_length``), PDCT and PVCT records at ``record``. The engine asks TVC again after each
  pre-verification, while the top asks TVC once per EDC *stop* decision, so each decision is
  requested the top's way: ``tvc_inputs`` are set, a batch is pushed into ``draft_in`` (the
  ``never`` mode makes its decision a stop, which issues the TVC request), and the result is read
  from ``TVC_STATUS.last_length`` (0: no insert), checked by ``TVC_DECISIONS``. Inserts go
  through the pre-verify queue to the GTS, whose tasks finish at once (``task_done`` high).
  Every record is handed to TVC before a decision is requested. This top's EDC sees dummy
  batches and decides nothing that is used.

The numbers the engine passes are prescaled and clamped as for the golden models
(:class:`ahasd.sim.system.deciders.ScaledDeciders`): the controller sees the same integers. The
saturation counts are kept by the host from the integers it writes (the top exposes only the
tables' averages): a recorded ratio at the table maximum, shifted through a shadow of each
table's ``depth`` entries.
"""

from collections import deque
from dataclasses import asdict

from ahasd.firmware import regs
from ahasd.firmware.driver import BusError, ControllerDriver
from ahasd.sim.blocks.edc import entropy_to_fx
from ahasd.sim.blocks.tvc import RATIO_FRAC_BITS, TABLES, to_pim
from ahasd.sim.system.deciders import ScaledDeciders
from ahasd.spec.descriptors import DraftDescriptor, FeedbackDescriptor
from ahasd.spec.params import check_real

__all__ = ["RtlDeciders", "HarnessBus"]

#: PIM cycles any one wait of the loop may take before the harness reports a hang.
LIMIT = 1 << 20


class HarnessBus:
    """``read32`` / ``write32`` on a :class:`~ahasd.cosim.controller.VerilatedController`'s
    AXI4-Lite port, one harness batch per access (the bus of
    :class:`~ahasd.firmware.driver.ControllerDriver`)."""

    def __init__(self, ctl):
        self.ctl = ctl

    def read32(self, address):
        result = self.ctl.read(address)
        self.ctl.harness.run()
        data, resp = result.value
        if resp:
            raise BusError(f"read of 0x{address:03X} answered {resp}")
        return data

    def write32(self, address, value):
        result = self.ctl.write(address, value)
        self.ctl.harness.run()
        if result.value:
            raise BusError(f"write of 0x{address:03X} answered {result.value}")


class _Top:
    """One Verilated controller top, its driver and the counts of what went through it."""

    def __init__(self, params):
        from ahasd.cosim.controller import VerilatedController
        self.ctl = VerilatedController(**params)
        self.h = self.ctl.harness
        self.driver = ControllerDriver(HarnessBus(self.ctl))
        self.ctl.task_done("always")
        self.drafts = self.feedbacks = 0

    def push_draft(self, entropy_fx, length=0, kv_base=0):
        self.h.push(self.ctl.sources["draft_in"],
                    DraftDescriptor(batch_id=self.drafts & 0xFFFF, length=length,
                                    kv_base=kv_base, mean_entropy=entropy_fx).pack())
        self.drafts += 1

    def push_feedback(self, full, cycles, kv_length):
        self.h.push(self.ctl.sources["feedback_in"],
                    FeedbackDescriptor(accepted_length=0, full=int(full), cycles=cycles,
                                       kv_length=kv_length).pack())
        self.feedbacks += 1

    def handed_over(self):
        """Queue: run until every pushed result has left ``feedback_out``."""
        self.h.until_count(self.ctl.sinks["feedback_out"], self.feedbacks, "sync", LIMIT)

    def decisions(self):
        """Queue: run until every pushed batch has its decision; the Result of the new ones."""
        sink = self.ctl.sinks["decision"]
        self.h.until_count(sink, self.drafts, "sync", LIMIT)
        return self.h.collect(sink)

    def close(self):
        self.ctl.close()


class RtlDeciders(ScaledDeciders):
    """EDC and TVC decisions from two Verilated controller tops (see the module docstring).

    Parameters
    ----------
    edc_variant : str
        Must be ``committed`` (the variant the EDC RTL implements).
    freq_ratio, tvc_params, prescale_bits
        As :class:`ahasd.sim.system.deciders.ScaledDeciders`; ``tvc_params`` are also the
        controller's TVC parameters (its descriptors fix ``cycles_bits`` 32 and
        ``length_bits`` 16).
    edc_params : dict
        Parameters of the controller's EDC (:class:`ahasd.spec.edc.EDCParams` fields).
    queue_depths : tuple of int
        Draft, feedback and pre-verify queue depths of the controllers.

    The tops are built (and their harnesses started) at the first EDC or TVC call; :meth:`close`
    ends them.
    """

    kind = "rtl"

    def __init__(self, *, edc_variant="committed", freq_ratio, tvc_params=None, edc_params=None,
                 prescale_bits=0, queue_depths=(64, 32, 16)):
        if edc_variant != "committed":
            raise ValueError(f"the EDC RTL implements the committed variant only, not "
                             f"{edc_variant!r}")
        super().__init__(freq_ratio=freq_ratio, tvc_params=tvc_params,
                         prescale_bits=prescale_bits)
        p = self.tvc_params
        if p.max_preverify_len > 8:
            raise ValueError(f"tvc max_preverify_len must be in 1..8 for TVC_CTRL.max_len, not "
                             f"{p.max_preverify_len}")
        draft, feedback, preverify = queue_depths
        self._params = {"draft_depth": draft, "feedback_depth": feedback,
                        "preverify_depth": preverify, "tvc": asdict(p),
                        **({"edc": dict(edc_params)} if edc_params else {})}
        # Validate now (the Verilog is generated and built at the first call).
        from ahasd.hw.controller import Controller
        from ahasd.sim.blocks.edc import EDCParams
        Controller._check_fit(EDCParams(**(edc_params or {})), p)
        self._edc = self._tvc = None
        self._shadow = {name: deque([False] * p.depth, maxlen=p.depth) for name in TABLES}
        self._recorded = False
        self.tvc_decisions = 0
        # Cycles from the request to TVC_STATUS settled: the longest record division the
        # request may wait for, the decision pipeline and the status register, with margin.
        self._settle = p.numerator_bits + 16

    # ---- the two tops --------------------------------------------------------------------------
    def _edc_top(self):
        if self._edc is None:
            top = self._edc = _Top(self._params)
            top.driver.set_edc_mode("predict")
            top.driver.configure_tvc(enabled=False, load_presets=False)
        return self._edc

    def _tvc_top(self):
        if self._tvc is None:
            top = self._tvc = _Top(self._params)
            top.driver.set_edc_mode("never")
            # The golden TVC starts with zero tables.
            top.driver.configure_tvc(freq_ratio=self.freq_ratio, nvct=0, pdct=0, pvct=0,
                                     max_len=self.tvc_params.max_preverify_len, enabled=True)
        return self._tvc

    def close(self):
        for top in (self._edc, self._tvc):
            if top is not None:
                top.close()
        self._edc = self._tvc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- EDC -----------------------------------------------------------------------------------
    def edc_draft(self, entropy_nats):
        fx = entropy_to_fx(check_real("entropy_nats", entropy_nats, 0.0))
        top = self._edc_top()
        top.handed_over()            # verifications first, in the engine's order
        top.push_draft(fx)
        got = top.decisions()
        top.h.run()
        if len(got.value) != 1:
            raise RuntimeError(f"the controller gave {len(got.value)} decisions for one batch")
        (_, payload), = got.value
        return bool(payload & 1)

    def edc_verify(self, full):
        self._edc_top().push_feedback(bool(full), 0, 0)

    # ---- TVC -----------------------------------------------------------------------------------
    def _shift_shadow(self, table, ratio):
        self._shadow[table].appendleft(ratio >= self.tvc_params.ratio_max)

    def tvc_preset(self, table, cycles, length):
        if table not in TABLES:
            raise ValueError(f"table must be one of {', '.join(TABLES)}, not {table!r}")
        if self._recorded:
            raise RuntimeError("TVC presets are the offline profile: write them before the "
                               "first record (TVC_CTRL.load_presets reloads every table)")
        ratio = self._preset_ratio(table, cycles, length)
        # Loads all three preset registers: the tables not yet preset get their registers'
        # values, 0 as in the golden model.
        self._tvc_top().driver.configure_tvc(**{table: ratio}, load_presets=True)
        for _ in range(self.tvc_params.depth):
            self._shift_shadow(table, ratio)

    def tvc_record(self, table, cycles, length):
        if table not in TABLES:
            raise ValueError(f"table must be one of {', '.join(TABLES)}, not {table!r}")
        cycles, length = self._fit(cycles, length)
        top = self._tvc_top()
        self._recorded = True
        if table == "nvct":
            top.push_feedback(False, cycles, length)
        else:
            word = (TABLES.index(table) | cycles << 2
                    | length << (2 + self.tvc_params.cycles_bits))
            top.h.push(top.ctl.sources["record"], word)
        if length:
            c = to_pim(cycles, self.freq_ratio) if table == "nvct" else cycles
            ratio = min((c << RATIO_FRAC_BITS) // length, self.tvc_params.ratio_max)
            if ratio >= self.tvc_params.ratio_max:
                self.saturated_records += 1
            self._shift_shadow(table, ratio)

    def tvc_decide(self, kv_len, now, pending):
        if any(any(flags) for flags in self._shadow.values()):
            self.saturated_decisions += 1
        kv_len, now, pending = self._decide_operands(kv_len, now, pending)
        top = self._tvc_top()
        h, ctl = top.h, top.ctl
        h.drain("sync", LIMIT)       # every record accepted ...
        top.handed_over()            # ... and every NVCT result handed to TVC
        ctl.set_tvc_inputs(kv_len, now, pending)
        top.push_draft(0)            # its stop decision requests the TVC decision
        got = top.decisions()
        h.wait("sync", self._settle)
        status = ctl.read(regs.TVC_STATUS)
        count = ctl.read(regs.TVC_DECISIONS)
        h.run()
        self.tvc_decisions += 1
        if [payload & 1 for _, payload in got.value] != [0]:
            raise RuntimeError(f"the TVC controller's EDC gave {got.value} for one batch "
                               f"(mode never: one stop)")
        (word, resp), (decisions, resp2) = status.value, count.value
        if resp or resp2:
            raise BusError(f"TVC_STATUS / TVC_DECISIONS answered {resp} / {resp2}")
        if word & regs.TVC_STATUS_DECIDING_MASK or decisions != self.tvc_decisions:
            raise RuntimeError(f"TVC did not settle: TVC_STATUS 0x{word:X}, TVC_DECISIONS "
                               f"{decisions} (expected {self.tvc_decisions})")
        return (word & regs.TVC_STATUS_LAST_LENGTH_MASK) >> regs.TVC_STATUS_LAST_LENGTH_LSB
