"""The TVC's decision pipeline (:class:`ahasd.hw.tvc.TVC`, docs/architecture.md 4.2): what
decisions compare against (the per-length thresholds, registered two cycles behind the tables)
and the three register stages from an accepted decide to its result."""

from amaranth import Cat, Const, Mux, Signal

from ahasd.hw.carry_save import csa_tree, sign_of_sum
from ahasd.hw.tvc_arith import floor_rows, thermometer_count, times_terms
from ahasd.spec.tvc import FREQ_FRAC_BITS, RATIO_FRAC_BITS

__all__ = ["decisions"]


def decisions(m, p, *, averages, decide, freq_ratio, result):
    """Add the decision pipeline for :class:`ahasd.spec.tvc.TVCParams` ``p`` to module ``m``:
    ``averages`` (the tables' averages by name, registers written with their tables), the
    ``decide`` stream (its ``ready`` is set by the caller), ``freq_ratio``, and the ``result``
    stream, valid exactly three cycles after each accepted decide (see
    :class:`ahasd.hw.tvc.TVC`, Timing)."""
    rb = p.ratio_bits
    # -- what decisions compare against: registered two cycles behind the tables -----------
    # thresholds[i] = (i + 1) * avg(PVCT) + (avg(PDCT) >> 8) * 256, for the tables of two
    # cycles ago, which is when the decision now in stage 3 read them: the decision pipeline
    # only compares, and a table change is seen by exactly the decides accepted after it.
    lengths = range(1, p.max_preverify_len + 1)
    # Each threshold as a sum of rows (the non-adjacent form's shifted avg(PVCT) terms and
    # the PDCT term, one full-adder tree) resolved over the two cycles: the low half and its
    # carry out, and the high half's rows, registered in the first; the high half added in
    # the second, so that neither cycle holds a word adder of the threshold's width.
    pdct_term = Cat(Const(0, RATIO_FRAC_BITS), averages["pdct"][RATIO_FRAC_BITS:])
    thresholds = []
    for length in lengths:
        width = rb + length.bit_length() + 1
        rows = csa_tree(m, times_terms(averages["pvct"], length, width) + [pdct_term],
                        width)
        half = width // 2
        low = Signal(half + 1, name=f"threshold_{length}_lo")
        high = [Signal(width - half, name=f"threshold_{length}_hi_{row}") for row in "sc"]
        m.d.sync += [low.eq(rows[0][:half] + rows[1][:half]),
                     *(h.eq(r[half:]) for h, r in zip(high, rows))]
        th = Signal(width, name=f"threshold_{length}")
        m.d.sync += th.eq(Cat(low[:half], high[0] + high[1] + low[half]))
        thresholds.append(th)

    # -- decisions: three register stages --------------------------------------------------
    # C_left * 256 >= L * avg(PVCT)  <=>  (C_npu - to_pim(now)) * 256 >= thresholds[L - 1].
    # No carry chain wider than a comparison's: the products stay carry-save rows (two
    # rows whose sum is the value) until stage 3 takes the sign of each difference.
    req = decide.payload
    # (1) A = avg(NVCT) * kv_len and B = now * freq_ratio as carry-save rows: a full-adder
    # tree of the partial products each; the pending thermometer.
    s1_valid = Signal()
    s1_rows = {}
    for name, value, factor in (("npu", averages["nvct"], req.kv_len),
                                ("now", req.now, freq_ratio)):
        width = len(value) + len(factor)
        rows = csa_tree(m, [Mux(factor[i], value, 0) << i for i in range(len(factor))],
                        width)
        s1_rows[name] = [Signal(width, name=f"s1_{name}_{row}") for row in "sc"]
        m.d.sync += [r.eq(v) for r, v in zip(s1_rows[name], rows)]
    s1_pending = Signal(p.max_preverify_len)
    m.d.sync += [
        s1_valid.eq(decide.valid & decide.ready),
        s1_pending.eq(Cat(req.pending >= length for length in lengths)),
    ]
    # (2) C_left = floor(A / 256) - floor(B / 2**14) as two rows of `width` bits (two's
    # complement, wide enough for C_left * 256 - threshold). A row pair's floor: the rows
    # shifted, plus the carry out of their low bits (a comparison).
    width = max(p.c_left_bits + RATIO_FRAC_BITS, len(thresholds[-1])) + 1
    s2_valid = Signal()
    s2_left = [Signal(width, name=f"s2_left_{row}") for row in "sc"]
    s2_pending = Signal(p.max_preverify_len)
    floors = {name: floor_rows(s1_rows[name], shift)
              for name, shift in (("npu", RATIO_FRAC_BITS), ("now", FREQ_FRAC_BITS))}
    (npu_s, npu_c, npu_carry), (now_s, now_c, now_carry) = floors["npu"], floors["now"]
    # -x = ~x + 1: the two +1 and -now_carry are (npu_carry + 1) + ~now_carry.
    left = csa_tree(m, [npu_s, npu_c, ~Cat(now_s, Const(0, width - len(now_s))),
                        ~Cat(now_c, Const(0, width - len(now_c))),
                        Cat(~npu_carry, npu_carry), ~now_carry], width)
    m.d.sync += [
        s2_valid.eq(s1_valid),
        *(r.eq(v) for r, v in zip(s2_left, left)),
        s2_pending.eq(s1_pending),
    ]
    # (3) per length, the sign of C_left * 256 - threshold: one full-adder level of the
    # two rows and ~threshold (its +1 in the carry row's free bit 0), then the sign as a
    # comparison. With `pending >= L` a thermometer code (both conditions are monotone in
    # L: avg(PVCT) >= 0), whose count is min(largest L, pending).
    rows = [(r << RATIO_FRAC_BITS)[:width] for r in s2_left]
    fits = Signal(p.max_preverify_len)
    below = []
    for th in thresholds:
        x, y, z = rows[0], rows[1], ~Cat(th, Const(0, width - len(th)))
        total = (x ^ y ^ z)[:width]
        carry = Cat(Const(1, 1), ((x & y) | (x & z) | (y & z))[:width - 1])
        below.append(sign_of_sum(total, carry, width))
    m.d.comb += fits.eq(~Cat(*below) & s2_pending)
    m.d.sync += [
        result.valid.eq(s2_valid),
        result.payload.insert.eq(fits[0]),
        result.payload.length.eq(thermometer_count(fits)),
    ]
