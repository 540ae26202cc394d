"""Drive the ports of :class:`ahasd.hw.tvc.TVC` from a list of transactions, one at a time.

:func:`drive` is a generator independent of the simulator: it yields the input values of a cycle
(a dict by port name), receives the output values sampled in that cycle before the clock edge,
and returns a :class:`DriveResult`. Each transaction is held until its ``ready`` is seen (a
``config`` only changes the ``freq_ratio`` input, a ``preset`` pulses ``preset__load`` for one
cycle), so the RTL sees the transactions in trace order, as the golden model does.
:func:`ahasd.cosim.tvc.replay_rtl` applies the same rules on the Verilated block, on the C++ side
of the harness, and returns the same :class:`DriveResult`; the tests run :func:`drive` in
Amaranth's simulator; the cocotb scoreboard drives the same ports with the shared stream drivers
(:mod:`ahasd.tb.cocotb_streams`). Payloads go through their layouts (:mod:`ahasd.tb.payloads`).
"""

from dataclasses import dataclass, field
from functools import lru_cache

from amaranth import unsigned
from amaranth.lib import data

from ahasd.hw.tvc import decide_layout, record_layout, result_layout
from ahasd.sim.blocks.tvc import DEFAULT_FREQ_RATIO, TABLES, Decision, TVCParams
from ahasd.tb.payloads import field_reader, pack

__all__ = ["DriveResult", "pack_record", "pack_decide", "unpack_result", "drive"]


@dataclass
class DriveResult:
    """What :func:`drive` observed: the decisions in order and cycle counts."""
    decisions: list = field(default_factory=list)
    cycles: int = 0
    #: For each decide, cycles from its accept cycle to its result cycle.
    decision_latency: list = field(default_factory=list)
    #: For each record, cycles from its accept cycle to the next cycle with ``ready`` high.
    record_latency: list = field(default_factory=list)
    #: For each decide, cycles it was presented with ``ready`` low (backpressure).
    decide_wait: list = field(default_factory=list)
    #: Output values of the last cycle (error counter, averages, ...).
    final: dict = field(default_factory=dict)
    #: CPU seconds of the simulator process, where one ran apart (the Verilator harness).
    simulator_cpu_s: float = 0.0


def pack_record(params, table, cycles, length):
    """The ``record`` payload: ``table`` is a name (``"nvct"``...) or a raw 2-bit code."""
    code = TABLES.index(table) if isinstance(table, str) else table
    return pack(record_layout(params, table=unsigned(2)),
                {"table": code, "cycles": cycles, "length": length})


def pack_decide(params, kv_len, now, pending):
    """The ``decide`` payload."""
    return pack(decide_layout(params), {"kv_len": kv_len, "now": now, "pending": pending})


def unpack_result(payload, params=None):
    """A ``result`` payload as a :class:`~ahasd.sim.blocks.tvc.Decision`.

    Without ``params`` the length field is taken as wide as the payload needs (its leading zero
    bits do not change the value).
    """
    payload = int(payload)
    if params is None:
        reader = _free_reader(max(payload.bit_length() - 1, 1))
    else:
        reader = _result_reader(params)
    result = reader(payload)
    return Decision(insert=bool(result["insert"]), length=result["length"])


@lru_cache(maxsize=16)
def _result_reader(params):
    """:func:`ahasd.tb.payloads.field_reader` of ``result_layout(params)``, built once."""
    return field_reader(result_layout(params))


@lru_cache(maxsize=64)
def _free_reader(length_bits):
    return field_reader(data.StructLayout({"insert": 1, "length": length_bits}))


def drive(ops, params=None, *, freq_ratio=DEFAULT_FREQ_RATIO, presets=None):
    """Generator: yield input dicts, receive output dicts, return a :class:`DriveResult`.

    Starts in the first cycle after reset with the ``preset__*`` inputs at ``presets`` (0 where
    missing), which the block loads in that cycle, and ``freq_ratio``.
    """
    p = params or TVCParams()
    inputs = {"freq_ratio": freq_ratio, "preset__load": 0, "record__valid": 0,
              "record__payload": 0, "decide__valid": 0, "decide__payload": 0}
    inputs.update({f"preset__{name}": (presets or {}).get(name, 0) for name in TABLES})
    out = DriveResult()
    # Far more than any legal wait (a record keeps the block busy < numerator_bits + 3 cycles).
    stall_limit = 4 * (p.numerator_bits + 8)
    accepted = []         # accept cycles of decides whose result has not appeared yet
    record = {"since": None}   # accept cycle of the last record while waiting for ready

    def cycle():
        outputs = yield dict(inputs)
        now = out.cycles
        if record["since"] is not None and outputs["record__ready"]:
            out.record_latency.append(now - record["since"])
            record["since"] = None
        if outputs["result__valid"]:
            out.decisions.append(unpack_result(outputs["result__payload"], p))
            out.decision_latency.append(now - accepted.pop(0))
        out.cycles += 1
        out.final = outputs
        return outputs

    for item in ops:
        op = item["op"]
        if op == "config":
            inputs["freq_ratio"] = item["freq_ratio"]
        elif op == "preset":
            inputs[f"preset__{item['table']}"] = item["ratio"]
            inputs["preset__load"] = 1 << TABLES.index(item["table"])
            yield from cycle()
            inputs["preset__load"] = 0
        else:
            port = "record" if op == "record" else "decide"
            inputs[f"{port}__valid"] = 1
            inputs[f"{port}__payload"] = (
                pack_record(p, item["table"], item["cycles"], item["length"]) if op == "record"
                else pack_decide(p, item["kv_len"], item["now"], item["pending"]))
            for waited in range(stall_limit):  # noqa: B007 (read after the loop: cycles waited)
                when = out.cycles
                outputs = yield from cycle()
                if outputs[f"{port}__ready"]:
                    break
            else:
                raise RuntimeError(f"{port} not accepted within {stall_limit} cycles")
            inputs[f"{port}__valid"] = 0
            if op == "decide":
                accepted.append(when)
                out.decide_wait.append(waited)
            elif item["length"]:
                record["since"] = when
    for _ in range(stall_limit):
        if not (accepted or record["since"] is not None):
            return out
        yield from cycle()
    raise RuntimeError(f"results or ready missing {stall_limit} cycles after the last "
                       f"transaction")

