"""Replay TVC transactions on the Verilated RTL (``ahasd tvc replay --rtl``, the ``tvc`` bench).

The transactions go in batches into one lane of :class:`ahasd.cosim.harness.Harness`, in trace
order: a ``record`` or ``decide`` is held on its stream until ``ready`` (on the C++ side), a
``config`` sets ``freq_ratio`` and a ``preset`` pulses ``preset__load`` for one cycle, as the
port driver :func:`ahasd.tb.tvc_driver.drive` does cycle by cycle. The result is the same
:class:`ahasd.tb.tvc_driver.DriveResult`, with the cycles numbered as the driver numbers them
(0 = the first cycle after reset).
"""

from collections import deque
from dataclasses import asdict
from functools import lru_cache
from itertools import islice

from ahasd.sim.blocks.tvc import DEFAULT_FREQ_RATIO, TABLES, TVCParams
from ahasd.tb.tvc_driver import DriveResult, unpack_result

__all__ = ["replay_rtl"]

#: Transactions per batch sent to the harness (one answer per batch), and per part of a batch
#: sent ahead (the harness simulates a part while Python encodes the next).
CHUNK = 32768
STRIDE = 2048
RECORD, DECIDE = 0, 1


class _Latency:
    """Record latency from the accept cycles of records and the changes of ``record__ready``:
    cycles from a record's accept cycle to the next cycle with ``ready`` high."""

    def __init__(self):
        self.waiting = deque()   # accept cycles of records with a length, not yet resolved
        self.changes = deque()   # (cycle, ready) changes not yet consumed
        self.last = 0            # the cycle the last latency resolved in

    def resolve(self, out, horizon):
        """Resolve what the samples up to cycle ``horizon`` decide. Ready is high in a record's
        accept cycle, and a 1-bit watch logs alternating changes: if ready falls in the next
        cycle, the change after that is its rise."""
        waiting, changes = self.waiting, self.changes
        while waiting:
            accept = waiting[0]
            while changes and changes[0][0] <= accept:
                changes.popleft()
            if changes and changes[0][0] == accept + 1:      # the divider made it busy
                if len(changes) < 2:
                    return
                cycle = changes[1][0]
            else:
                cycle = accept + 1
            if cycle > horizon:
                return
            out.record_latency.append(cycle - accept)
            self.last = max(self.last, cycle)
            waiting.popleft()


@lru_cache(maxsize=8)
def _design(params):
    """Verilog and ports of the TVC with ``params`` (a sorted tuple of items): generating the
    Verilog takes longer than most replays, so it is done once per parameter set."""
    from ahasd.hw.blocks import port_list, to_verilog
    from ahasd.hw.tvc import TVC
    dut = TVC(**dict(params))
    inputs, outputs = port_list(dut)
    return to_verilog(dut, "tvc"), inputs, outputs


def replay_rtl(ops, params=None, *, freq_ratio=DEFAULT_FREQ_RATIO, presets=None):
    """Run ``ops`` (any iterable of trace dicts) on the Verilated TVC (built with ``params``);
    return the :class:`ahasd.tb.tvc_driver.DriveResult`."""
    out = DriveResult()
    for _ in _replay(ops, params or TVCParams(), freq_ratio, presets, out, keep=True):
        pass
    return out


def iter_replay_rtl(ops, params=None, *, freq_ratio=DEFAULT_FREQ_RATIO, presets=None):
    """:func:`replay_rtl` as a generator of the decisions, yielded batch by batch, in memory that
    does not grow with ``ops`` (the per-transaction latency lists are not kept)."""
    yield from _replay(ops, params or TVCParams(), freq_ratio, presets, DriveResult(), keep=False)


def _replay(ops, p, freq_ratio, presets, out, keep):
    """Run ``ops``, filling ``out``; yield the decisions of each batch when it has run. Without
    ``keep``, ``out``'s lists are emptied after each batch."""
    from ahasd.cosim.harness import Harness, paused_gc

    with paused_gc():
        yield from _run(ops, p, freq_ratio, presets, out, keep, Harness)


def _run(ops, p, freq_ratio, presets, out, keep, Harness):
    verilog, inputs, outputs = _design(tuple(sorted(asdict(p).items())))
    # Far more than any legal wait (a record keeps the block busy < numerator_bits + 3 cycles).
    stall_limit = 4 * (p.numerator_bits + 8)
    results = 0              # decisions collected so far
    with Harness(verilog, "tvc", inputs, outputs,
                 domains={"sync": ("clk", "rst", 1000)}) as h:
        for name in TABLES:
            h.set(f"preset__{name}", (presets or {}).get(name, 0))
        h.set("freq_ratio", freq_ratio)
        record = h.source("record", "sync", "record__valid", "record__ready", ["record__payload"],
                          lane="ops", log=True, timeout=stall_limit)
        decide = h.source("decide", "sync", "decide__valid", "decide__ready", ["decide__payload"],
                          lane="ops", log=True, timeout=stall_limit)
        result = h.sink("result", "sync", "result__valid", None, ["result__payload"])
        ready = h.watch("record__ready", "sync")
        h.reset("sync", 1)
        h.wait("sync", 1)
        h.run()
        decides = deque()        # accept cycles of decides whose result has not come
        latency = _Latency()
        lengths = deque()        # lengths of the records pushed, in order
        end = 0                  # the last cycle the driver would spend (harness numbering)
        ops = iter(ops)
        lines = h._lines
        lb, cb = p.length_bits, p.cycles_bits
        table_code = {name: i for i, name in enumerate(TABLES)}
        while True:
            chunk = list(islice(ops, CHUNK))
            if not chunk:
                break
            for n, item in enumerate(chunk, 1):
                if n % STRIDE == 0:     # let the harness run these while the rest is encoded
                    h.drain("sync", stall_limit * (STRIDE + 1))
                    h.send()
                op = item["op"]
                # The payloads of ahasd.tb.tvc_driver.pack_record / pack_decide, inline (hot).
                if op == "decide":
                    word = item["kv_len"] | item["now"] << lb | item["pending"] << (lb + cb)
                    lines.append(f"s {DECIDE} {word:x}")
                elif op == "record":
                    length, table = item["length"], item["table"]
                    code = table_code[table] if isinstance(table, str) else table
                    word = code | item["cycles"] << 2 | length << (2 + cb)
                    lines.append(f"s {RECORD} {word:x}")
                    lengths.append(length)
                elif op == "config":
                    lines.append(f"lset ops freq_ratio {item['freq_ratio']:x}")
                elif op == "preset":
                    lines.append(f"lset ops preset__{item['table']} {item['ratio']:x}")
                    lines.append(f"lpulse ops preset__load {1 << TABLES.index(item['table']):x}")
                else:
                    raise ValueError(f"unknown TVC transaction {op!r}")
            h.drain("sync", stall_limit * (len(chunk) + 1))
            end = max(end, _collect(h, record, decide, result, ready, out, decides, latency,
                                    lengths))
            results = len(out.decisions) + (0 if keep else results)
            yield from _batch(out, keep)
        # The results and the record divider still in flight.
        h.until_count(result, results + len(decides), "sync", stall_limit)
        h.until("record__ready", 1, "sync", stall_limit)
        h.wait("sync", 1)                 # ... and sampled
        end = max(end, _collect(h, record, decide, result, ready, out, decides, latency, lengths,
                                final=True))
        results = len(out.decisions) + (0 if keep else results)
        yield from _batch(out, keep)
        values = {name: h.get(name) for name, _ in outputs}
        h.run()
    out.simulator_cpu_s = h.cpu_s or 0.0
    out.final = {name: v.value for name, v in values.items()}
    out.cycles = end        # driver numbering: harness cycle - 1, plus one for the last cycle


def _batch(out, keep):
    """The decisions of the batch just collected, taken out of ``out`` with the batch's latency
    lists (without ``keep``); with ``keep`` everything stays in ``out`` and nothing is yielded."""
    if keep:
        return ()
    new = out.decisions
    out.decisions = []
    for name in ("decision_latency", "record_latency", "decide_wait"):
        getattr(out, name).clear()
    return new


def _collect(h, record, decide, result, ready, out, decides, latency, lengths, final=False):
    """Fetch the logs of the batch just run into ``out``; return the last busy cycle."""
    rec, dec, res, changes, now = (h.accepted(record), h.accepted(decide), h.collect(result),
                                   h.seen(ready), h.time())
    h.run()
    horizon = now.value[1][0] - 1          # the last sampled cycle
    last = horizon if not final else 0     # a drained lane: the driver ran up to here
    for cycle, waited in dec.value:
        decides.append(cycle)
        out.decide_wait.append(waited)
    for cycle, _ in rec.value:
        if lengths.popleft():
            latency.waiting.append(cycle)
        last = max(last, cycle)
    for cycle, payload in res.value:
        out.decisions.append(unpack_result(payload))
        out.decision_latency.append(cycle - decides.popleft())
        last = max(last, cycle)
    latency.changes.extend(changes.value)
    latency.resolve(out, horizon)
    if final and latency.waiting:
        raise RuntimeError("record__ready did not return after the last record")
    return max(last, latency.last)
