"""TVC transaction traces: the JSON-lines format of ``ahasd tvc replay`` and two generators.

One transaction per line (blank lines are skipped, and counted)::

    {"op":"config","freq_ratio":<int UQ2.14>}
    {"op":"preset","table":"nvct|pdct|pvct","ratio":<int UQ24.8>}
    {"op":"record","table":"nvct|pdct|pvct","cycles":<int>,"length":<int>}
    {"op":"decide","kv_len":<int>,"now":<int>,"pending":<int>}

:func:`iter_trace` checks every line (the line rules of :mod:`ahasd.sim.traces.lines`, op,
keys, integer types and, against a :class:`ahasd.spec.tvc.TVCParams`, ranges) and raises
:class:`ahasd.sim.traces.errors.TraceError` naming the line;
:func:`apply` runs one transaction on the golden model.

Generators: :func:`random_trace` draws edge-biased values over the full ranges, every eighth
record on the ratio saturation threshold (``cycles * 256 == length * 2**ratio_bits``, one cycle either
side); :func:`boundary_trace` starts with records below, on and above that threshold and puts
decides on the comparison boundary; :func:`realistic_trace` follows
speculative decoding rounds (NPU verifies of 100-1000 cycles per KV token, PIM drafts and
pre-verifies of a few thousand cycles per token, a growing KV cache, the NPU cycle counter
sweeping each verification).
"""

import random

from ahasd.sim.blocks.tvc import DEFAULT_FREQ_RATIO, FREQ_BITS, RATIO_FRAC_BITS, TABLES, TVCParams
from ahasd.sim.traces.errors import TraceError
from ahasd.sim.traces.lines import check_int, json_lines, names, open_binary, show
from ahasd.sim.traces.lines import dumps as _dumps

__all__ = ["OPS", "TraceError", "iter_trace", "parse_trace", "read_trace", "apply", "dump",
           "random_trace", "realistic_trace", "boundary_trace"]

#: op -> its integer fields (besides "op", and "table" for preset/record).
OPS = {
    "config": ("freq_ratio",),
    "preset": ("ratio",),
    "record": ("cycles", "length"),
    "decide": ("kv_len", "now", "pending"),
}


def _limits(params):
    return {
        "freq_ratio": FREQ_BITS, "ratio": params.ratio_bits, "cycles": params.cycles_bits,
        "now": params.cycles_bits, "length": params.length_bits, "kv_len": params.length_bits,
        "pending": params.length_bits,
    }


def _transaction(number, item, limits):
    if not isinstance(item, dict):
        raise TraceError(number, f"expected a JSON object, got {type(item).__name__}")
    op = item.get("op")
    if not isinstance(op, str) or op not in OPS:
        raise TraceError(number, f"op must be one of {', '.join(OPS)}, not {show(op)}")
    keys = {"op", *OPS[op]} | ({"table"} if op in ("preset", "record") else set())
    missing, extra = sorted(keys - item.keys()), sorted(item.keys() - keys)
    if missing or extra:
        what = "; ".join(filter(None, [
            f"missing {', '.join(missing)}" if missing else None,
            f"unknown {names(extra)}" if extra else None]))
        raise TraceError(number, f"{op}: {what}")
    if "table" in keys and item["table"] not in TABLES:
        raise TraceError(number, f"table must be one of {', '.join(TABLES)}, "
                                 f"not {show(item['table'])}")
    for field in OPS[op]:
        check_int(number, field, item[field], 0, (1 << limits[field]) - 1)
    return item


def iter_trace(source, params=None):
    """Yield the checked transactions (dicts) of a file object or an iterable of JSON lines;
    raise :class:`TraceError` naming the line. Streams: memory does not grow with the trace."""
    limits = _limits(params or TVCParams())
    for number, item in json_lines(source):
        yield _transaction(number, item, limits)


def parse_trace(lines, params=None):
    """All transactions of an iterable of JSON lines, as a list."""
    return list(iter_trace(lines, params))


def read_trace(path, params=None):
    """All transactions of a file (``-``: standard input), as a list."""
    with open_binary(path) as f:
        return list(iter_trace(f, params))


def apply(model, item):
    """Run one parsed transaction on a golden :class:`ahasd.sim.blocks.tvc.TVC`; return the decision
    of a decide, else None."""
    op = item["op"]
    if op == "config":
        model.config(item["freq_ratio"])
    elif op == "preset":
        model.preset(item["table"], item["ratio"])
    elif op == "record":
        model.record(item["table"], item["cycles"], item["length"])
    else:
        return model.decide(item["kv_len"], item["now"], item["pending"])
    return None


def dump(ops):
    """The JSON-lines text of a list of transactions."""
    return "".join(_dumps(item) + "\n" for item in ops)


def _edgy(rng, bits):
    """A ``bits``-bit value, often 0, 1, the maximum or a power of two."""
    top = (1 << bits) - 1
    kind = rng.random()
    if kind < 0.08:
        return rng.choice((0, 1, top, top - 1 if top else 0))
    if kind < 0.2:
        return 1 << rng.randrange(bits)
    if kind < 0.5:
        return rng.getrandbits(rng.randrange(1, bits + 1))
    return rng.getrandbits(bits)


def random_trace(decisions, *, seed=0, params=None, record_share=0.3):
    """Edge-biased random transactions over the full ranges, ``decisions`` decides in all."""
    p = params or TVCParams()
    rng = random.Random(seed)
    ops, made, records = [], 0, 0
    while made < decisions:
        kind = rng.random()
        if kind < record_share:
            length = 0 if rng.random() < 0.05 else _edgy(rng, p.length_bits)
            record = {"op": "record", "table": rng.choice(TABLES),
                      "cycles": _edgy(rng, p.cycles_bits), "length": length}
            # Every eighth record (from the first) lies on the saturation threshold, cycling
            # through on, one cycle below and one above it.
            if records % 8 == 0:
                record = _saturation_record(rng, p, delta=(0, -1, 1)[records // 8 % 3]) or record
            records += 1
            ops.append(record)
        elif kind < record_share + 0.03:
            ops.append({"op": "preset", "table": rng.choice(TABLES),
                        "ratio": _edgy(rng, p.ratio_bits)})
        elif kind < record_share + 0.05:
            ops.append({"op": "config", "freq_ratio": _edgy(rng, FREQ_BITS)})
        else:
            ops.append({"op": "decide", "kv_len": _edgy(rng, p.length_bits),
                        "now": _edgy(rng, p.cycles_bits), "pending": _edgy(rng, p.length_bits)})
            made += 1
    return ops


def realistic_trace(decisions, *, seed=0, params=None):
    """Speculative-decoding-like transactions, ``decisions`` decides in all.

    Each round: the NPU verifies a batch over a KV cache of ``kv`` tokens at 100-1000 NPU cycles
    per KV token (an NVCT record); the PIM drafts 1-8 tokens at 1500-6000 PIM cycles each (PDCT)
    and sometimes pre-verifies 1-8 at 5000-20000 each (PVCT); TVC is asked several times while
    the verification runs (``now`` sweeps it). Clock ratios change rarely (DVFS), presets are
    rewritten rarely, and a few records have length 0.
    """
    p = params or TVCParams()
    rng = random.Random(seed)
    cap_c, cap_l = (1 << p.cycles_bits) - 1, (1 << p.length_bits) - 1
    cap_r = p.ratio_max

    def clip(value, cap):
        return max(0, min(int(value), cap))

    ops = [{"op": "preset", "table": "nvct", "ratio": clip(400 * 256, cap_r)},
           {"op": "preset", "table": "pdct", "ratio": clip(3000 * 256, cap_r)},
           {"op": "preset", "table": "pvct", "ratio": clip(12000 * 256, cap_r)}]
    npu_per_token = rng.uniform(100, 1000)
    kv, made = rng.randrange(64, 512), 0
    while made < decisions:
        if rng.random() < 0.01:
            ops.append({"op": "config", "freq_ratio": round(rng.choice((0.5, 0.8, 1.0, 1.25))
                                                            * (1 << 14))})
        elif rng.random() < 0.005:
            ops.append({"op": "config", "freq_ratio": DEFAULT_FREQ_RATIO})
        if rng.random() < 0.005:
            table = rng.choice(TABLES)
            ops.append({"op": "preset", "table": table,
                        "ratio": clip({"nvct": 400, "pdct": 3000, "pvct": 12000}[table]
                                      * 256 * rng.uniform(0.5, 2), cap_r)})
        npu_per_token = min(max(npu_per_token * rng.uniform(0.9, 1.1), 100), 1000)
        verify = kv * npu_per_token
        for _ in range(rng.randrange(1, 6)):
            ops.append({"op": "decide", "kv_len": clip(kv, cap_l),
                        "now": clip(rng.uniform(0, 1.1) * verify, cap_c),
                        "pending": clip(rng.randrange(0, 17), cap_l)})
            made += 1
        drafted = rng.randrange(1, 9)
        ops.append({"op": "record", "table": "pdct",
                    "cycles": clip(drafted * rng.uniform(1500, 6000), cap_c),
                    "length": clip(drafted, cap_l)})
        if rng.random() < 0.3:
            checked = rng.randrange(1, 9)
            ops.append({"op": "record", "table": "pvct",
                        "cycles": clip(checked * rng.uniform(5000, 20000), cap_c),
                        "length": clip(checked, cap_l)})
        ops.append({"op": "record", "table": "nvct", "cycles": clip(verify, cap_c),
                    "length": 0 if rng.random() < 0.01 else clip(kv, cap_l)})
        kv = kv + rng.randrange(1, 9)
        if kv > min(4096, cap_l):
            kv = rng.randrange(64, 512)   # a new sequence
    return ops


def boundary_trace(decisions, *, seed=0, params=None):
    """Decides placed on the comparison boundary ``L * avg(PVCT) == C_left * 256`` and next to
    it (``C_left`` one more or one less), by tracking a golden model while generating.

    Table ratios are mostly whole cycles per token (multiples of 256) so that the equality is
    reachable; ``now`` is found by inverting ``to_pim``. A few records, presets and clock-ratio
    changes keep the tables moving. When the inversion has no solution the decide is random.
    """
    from dataclasses import asdict

    from ahasd.sim.blocks.tvc import TVC

    p = params or TVCParams()
    rng = random.Random(seed)
    model = TVC(**asdict(p))
    cap_c, cap_l = (1 << p.cycles_bits) - 1, (1 << p.length_bits) - 1
    whole = max(1, p.ratio_max >> 8 >> 4)     # a whole-cycles ratio well below saturation

    def add(item):
        ops.append(item)
        apply(model, item)

    ops: list[dict] = []
    for table in TABLES:
        add({"op": "preset", "table": table, "ratio": rng.randrange(1, whole + 1) << 8})
    # Every trace starts on the ratio saturation threshold: one record below, on and above it.
    for delta in (-1, 0, 1):
        record = _saturation_record(rng, p, delta=delta)
        if record:
            add(record)
    for table in TABLES:
        add({"op": "preset", "table": table, "ratio": rng.randrange(1, whole + 1) << 8})
    made = 0
    while made < decisions:
        kind = rng.random()
        if kind < 0.02:
            add({"op": "config", "freq_ratio": rng.choice((1 << 14, DEFAULT_FREQ_RATIO, 8192,
                                                           20480, 0))})
        elif kind < 0.05:
            add({"op": "preset", "table": rng.choice(TABLES),
                 "ratio": rng.randrange(0, whole + 1) << 8 | (rng.random() < 0.2)})
        elif kind < 0.12:
            length = rng.randrange(1, min(64, cap_l) + 1)
            per_token = rng.randrange(0, whole + 1)
            add({"op": "record", "table": rng.choice(TABLES),
                 "cycles": min(per_token * length, cap_c), "length": length})
        else:
            add(_boundary_decide(rng, model, p, cap_c, cap_l))
            made += 1
    return ops


def _saturation_record(rng, p, delta=None):
    """A PDCT or PVCT record on the ratio saturation threshold: ``cycles * 256`` is
    ``length * 2**ratio_bits`` (the smallest quotient that saturates) plus ``delta`` * 256
    (-1, 0 or 1; random when None). None when the widths cannot reach the threshold."""
    shift = p.ratio_bits - RATIO_FRAC_BITS
    cap_c, cap_l = (1 << p.cycles_bits) - 1, (1 << p.length_bits) - 1
    top = min(cap_l, (cap_c - 1) >> shift)
    if top < 1:
        return None
    length = rng.choice((1, top, rng.randrange(1, top + 1)))
    delta = rng.choice((0, 0, -1, 1)) if delta is None else delta
    return {"op": "record", "table": rng.choice(("pdct", "pvct")),
            "cycles": (length << shift) + delta, "length": length}


def _boundary_decide(rng, model, p, cap_c, cap_l):
    from ahasd.sim.blocks.tvc import to_pim
    length = rng.randrange(1, p.max_preverify_len + 1)
    pending = rng.choice((cap_l, p.max_preverify_len, rng.randrange(0, p.max_preverify_len + 1)))
    pending = min(pending, cap_l)
    need = -(-length * model.average("pvct") // 256)       # smallest C_left that fits L
    c_left = max(0, need + rng.choice((0, 0, -1, 1)))
    fr = model.freq_ratio
    for _ in range(8):
        kv_len = rng.randrange(0, cap_l + 1) if rng.random() < 0.5 else rng.randrange(
            0, min(cap_l, 4096) + 1)
        target = model.c_left(kv_len, 0) - c_left          # needed to_pim(now)
        if target < 0:
            continue
        now = target if fr == 0 else -(-(target << 14) // fr)
        if fr == 0 and target:
            continue
        if now <= cap_c and to_pim(now, fr) == target:
            return {"op": "decide", "kv_len": kv_len, "now": now, "pending": pending}
    return {"op": "decide", "kv_len": rng.randrange(0, cap_l + 1),
            "now": rng.randrange(0, cap_c + 1), "pending": pending}
