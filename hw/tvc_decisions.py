"""The TVC's decision pipeline (:class:`ahasd.hw.tvc.TVC`, docs/architecture.md 4.2): what
decisions compare against (the per-length bounds, formed from the tables of a decide's accept
cycle) and the three register stages from an accepted decide to its result."""

from amaranth import Cat, Const, Mux, Signal

from ahasd.hw.carry_save import csa_tree
from ahasd.hw.tvc_arith import (
    floor_pieces,
    minus_times_terms,
    packed_rows,
    pieces,
    thermometer_count,
)
from ahasd.spec.tvc import FREQ_FRAC_BITS, RATIO_FRAC_BITS

__all__ = ["decisions"]


def decisions(m, p, *, averages, decide, freq_ratio, result):
    """Add the decision pipeline for :class:`ahasd.spec.tvc.TVCParams` ``p`` to module ``m``:
    ``averages`` (the tables' averages by name, registers written with their tables), the
    ``decide`` stream (its ``ready`` is set by the caller), ``freq_ratio``, and the ``result``
    stream, valid exactly three cycles after each accepted decide (see
    :class:`ahasd.hw.tvc.TVC`, Timing).

    The decision for length L is ``D >= ceil(threshold(L) / 256)`` with ``D = floor(A / 256) -
    floor(B / 2**14)``, ``A = avg(NVCT) * kv_len``, ``B = now * freq_ratio`` and ``threshold(L)
    = L * avg(PVCT) + (avg(PDCT) >> 8) * 256`` (the same as ``L * avg(PVCT) <= C_left * 256``
    for integer ``D``). All of it is sums of nonnegative rows, exact as integers (no row
    wraps), and no word adder is wider than half a bound's."""
    rb = p.ratio_bits
    lengths = range(1, p.max_preverify_len + 1)
    req = decide.payload

    # -- (1) the products as 8 x 16 pieces into registers; the pending thermometer ------------
    # Each piece maps to an FPGA multiplier (ECP5: MULT18X18D) and to an 8 x 16 array at 28 nm.
    s1_valid = Signal()
    s1_pending = Signal(p.max_preverify_len)
    m.d.sync += [
        s1_valid.eq(decide.valid & decide.ready),
        s1_pending.eq(Cat(req.pending >= length for length in lengths)),
    ]
    # The floors of the pieces: floor(A / 256) is the pieces shifted (every piece but the first
    # lies on a multiple of 256); floor(B / 2**14) needs the carry out of the two lowest pieces'
    # bits below 2**14, one comparison.
    npu_terms, npu_carry = floor_pieces(
        pieces(m, averages["nvct"], req.kv_len, "s1_npu"), RATIO_FRAC_BITS)
    now_terms, now_carry = floor_pieces(pieces(m, req.now, freq_ratio, "s1_now"), FREQ_FRAC_BITS)
    plus = [value for _, value in packed_rows(npu_terms)]
    minus = [value for _, value in packed_rows(now_terms)]
    # S = sum(plus) + npu_carry + sum(~r) + ~now_carry, each ~r the complement of r in its own
    # width (2**len(r) - 1 - r): every operand nonnegative, S = D + offset.
    operands = [*plus, *(~r for r in minus)]
    bits = [b for b in (npu_carry, None if now_carry is None else ~now_carry) if b is not None]
    offset = sum((1 << len(r)) - 1 for r in minus) + (now_carry is not None)
    # S < 2**(width - 1): no row of S's tree wraps, and stage 2's carry rows have no bit
    # `width`. The bounds' low parts take t bits (the most for the longest length), their high
    # part at least two. An even width: an ECP5 comparison of even width ends in its carry
    # chain's own carry out, without a LUT for the top bit.
    t_max = rb + p.max_preverify_len.bit_length() - RATIO_FRAC_BITS
    width = max(((1 << p.c_npu_bits) - 1 + offset).bit_length() + 1, t_max + 2)
    width += width % 2

    # -- what decisions compare against: the bound of each length ----------------------------
    # fits(L) <=> S >= offset + ceil(threshold(L) / 256) <=> S + bound(L) >= 2**width - 1, with
    # bound(L) = K + floor(-threshold(L) / 256), K = 2**width - 1 - offset (>= 2**(width - 1)).
    # z = 256 * (K mod 2**t) - threshold(L) as a full-adder tree of the non-adjacent form's
    # negated avg(PVCT) terms and the negated PDCT term, registered in the accept cycle as its
    # low half (resolved, with its carry out) and its high half's rows; stage 2 adds the high
    # half (a decide reads the tables in its accept cycle, stage 2 is the cycle after it). Then
    # bound = (K >> t) * 2**t + (z >> 8): the high part K >> t, or one less where z < 0.
    big = (1 << width) - 1 - offset
    bounds = []
    for length in lengths:
        # threshold(L) < (L + 1) * 2**rb <= 2**(zw - 1) and 256 * (K mod 2**t) < 2**(zw - 1):
        # z is a `zw`-bit signed value.
        zw = rb + length.bit_length() + 1
        t = zw - 1 - RATIO_FRAC_BITS
        low_k, high_k = big % (1 << t), big >> t
        terms = minus_times_terms(averages["pvct"], length, zw)
        pdct_term = Cat(Const(0, RATIO_FRAC_BITS), averages["pdct"][RATIO_FRAC_BITS:],
                        Const(0, zw - rb))
        constant = sum(term for term in terms if isinstance(term, int)) + 1 + (low_k << 8)
        rows = csa_tree(m, [term for term in terms if not isinstance(term, int)] +
                        [~pdct_term, constant], zw)
        half = (zw + 1) // 2
        low = Signal(half + 1, name=f"threshold_{length}_lo")
        high = [Signal(zw - half, name=f"threshold_{length}_hi_{row}") for row in "sc"]
        m.d.sync += [low.eq(rows[0][:half] + rows[1][:half]),
                     *(h.eq(r[half:]) for h, r in zip(high, rows))]
        z = Signal(zw, name=f"bound_{length}_z")
        m.d.comb += z.eq(Cat(low[:half], high[0] + high[1] + low[half]))
        negative = z[-1]
        bounds.append(Cat(z[RATIO_FRAC_BITS:RATIO_FRAC_BITS + t],
                          Mux(negative, Const(high_k - 1, width - t), Const(high_k, width - t))))

    # -- (2) per length, S + bound(L) as two rows -------------------------------------------
    # A full-adder tree of the operands (the bits in its carry row's free bit 0), then per
    # length one full-adder level against the bound: (x, y) = (s ^ c ^ bound, maj(s, c, bound)
    # << 1), x + y = S + bound exactly (S < 2**(width - 1): y has no bit `width`). `pending < L`:
    # bound 0, which nothing reaches.
    if bits and len(operands) >= 3:   # a full-adder level: its carry row's bit 0 is free
        s, c = csa_tree(m, operands + bits[1:], width)
        c = Cat(bits[0], c[1:])
    else:
        s, c = csa_tree(m, operands + bits, width)
    s2_valid = Signal()
    s2_x = [Signal(width, name=f"s2_x_{length}") for length in lengths]
    s2_y = [Signal(width, name=f"s2_y_{length}") for length in lengths]
    m.d.sync += s2_valid.eq(s1_valid)
    for i, bound in enumerate(bounds):
        b = Signal(width, name=f"bound_{i + 1}")   # 0 where pending < L
        m.d.comb += b.eq(Mux(s1_pending[i], bound, 0))
        m.d.sync += [s2_x[i].eq(s ^ c ^ b),
                     s2_y[i].eq(Cat(Const(0, 1), ((s & c) | (b & (s ^ c)))[:width - 1]))]

    # -- (3) per length, S + bound(L) >= 2**width - 1; a thermometer code, counted -------------
    # x + y >= 2**width - 1 <=> x >= ~y: one comparison of registers, a carry chain and nothing
    # before it. (As `>=` with an even width: yosys maps `a > b` with an equality tree beside
    # the chain and an odd width with a LUT for the top bit.) Both conditions of a length are
    # monotone in L (avg(PVCT) >= 0), so `fits` is a thermometer code whose count is
    # min(largest L, pending).
    fits = Cat(x >= ~y for x, y in zip(s2_x, s2_y))
    # The payload registers have no reset (a result is read with `valid` only), so that the
    # longest length, which forces the low count bits to 0, is their synchronous reset.
    payload = Signal.like(result.payload.as_value(), reset_less=True, name="result_payload")
    m.d.sync += [
        result.valid.eq(s2_valid),
        payload.eq(Cat(fits[0], thermometer_count(fits))),
    ]
    m.d.comb += result.payload.eq(payload)
