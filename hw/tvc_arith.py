"""Arithmetic shared by the TVC's record side (:mod:`ahasd.hw.tvc`) and its decision pipeline
(:mod:`ahasd.hw.tvc_decisions`): products registered as pieces, their rows, floors of carry-save
rows, constant multiples as terms, and the count of a thermometer code."""

from amaranth import Cat, Const, Signal

from ahasd.hw.carry_save import csa_tree, sign_of_sum

__all__ = ["PIECE_BITS", "pieces", "packed_rows", "at_least", "product_rows",
           "floor_rows", "thermometer_count", "minus_times_terms", "floor_pieces"]


#: Width of the pieces of ``cycles`` whose products with ``freq_ratio`` a record registers
#: (8 x 16 bits each: at 28 nm a 16 x 16 product with its carry is longer than a cycle; an ECP5
#: MULT18X18D each).
PIECE_BITS = 8


def pieces(m, value, factor, name):
    """Register ``value * factor`` as the products of ``value``'s ``PIECE_BITS``-bit pieces:
    a list of ``(offset, product)``."""
    products = []
    for offset in range(0, len(value), PIECE_BITS):
        piece = value[offset:offset + PIECE_BITS] * factor
        product = Signal(len(piece), name=f"{name}_{offset}")
        m.d.sync += product.eq(piece)
        products.append((offset, product))
    return products


def packed_rows(products):
    """The shifted ``(offset, product)`` terms packed into as few rows as do not overlap: a
    product starts a row of its own only where it would overlap every row so far (the
    8 x 16 pieces: three rows, each a concatenation)."""
    rows = []     # [(top, value)]
    for offset, product in sorted(products, key=lambda item: item[0]):
        for i, (row_top, value) in enumerate(rows):
            if row_top <= offset:
                rows[i] = (offset + len(product),
                           Cat(value, Const(0, offset - row_top), product))
                break
        else:
            rows.append((offset + len(product), Cat(Const(0, offset), product)))
    return rows


def at_least(m, products, minus, shift):
    """``sum(product << offset) >= value << shift`` as one carry chain, for ``minus`` the
    ``len(minus)``-bit ``-value`` and the sum below ``2**(shift + len(minus) - 1)``: the sign of
    the sum of the products' rows (:func:`packed_rows`) and ``minus << shift`` (placed in a row that
    ends below ``shift`` where there is one) after a full-adder tree, the sign as a comparison
    (:func:`ahasd.hw.carry_save.sign_of_sum`)."""
    width = shift + len(minus)
    rows = packed_rows(products)
    for i, (row_top, value) in enumerate(rows):
        if row_top <= shift:
            rows[i] = (width, Cat(value, Const(0, shift - row_top), minus))
            break
    else:
        rows.append((width, Cat(Const(0, shift), minus)))
    s, c = csa_tree(m, [value for _, value in rows], width)
    return ~sign_of_sum(s, c, width)


def product_rows(m, products):
    """Two rows whose sum is ``sum(product << offset)`` exactly (a full-adder tree of the
    products' rows, :func:`packed_rows`)."""
    width = max(offset + len(product) for offset, product in products)
    return csa_tree(m, [value for _, value in packed_rows(products)], width)


def floor_rows(rows, shift):
    """``(s >> shift, c >> shift, carry)`` for carry-save rows ``(s, c)``: ``floor((s + c) /
    2**shift)`` is the sum of the three, ``carry`` the carry out of the low ``shift`` bits
    (``s + c`` below ``2**shift`` overflows exactly when ``s > ~c`` there)."""
    s, c = rows
    return s[shift:], c[shift:], (~c[:shift])[:shift] < s[:shift]   # `<`: see sign_of_sum


def thermometer_count(bits):
    """The number of ones of a thermometer code (``bits[i]`` set for every ``i`` below the
    count): bit ``k`` of the count is set where a run of ``2**k`` ones ends above a multiple
    of ``2**(k + 1)``, two-level logic instead of an adder tree."""
    n = len(bits)

    def bit(i):
        return bits[i] if i < n else Const(0, 1)

    out = []
    for k in range(n.bit_length()):
        step = 1 << (k + 1)
        out.append(Cat(bit(j + (1 << k) - 1) & ~bit(j + step - 1)
                       for j in range(0, n, step)).any())
    return Cat(*out)


def minus_times_terms(value, factor, width):
    """Operands whose sum is ``-value * factor`` modulo ``2**width`` for a constant ``factor >=
    1``: the non-adjacent form of ``factor``, each digit's shifted ``value`` term with its sign
    turned (a positive digit's term as its complement plus one, the ones as one constant
    operand), so that synthesis spends no multiplier on it."""
    terms, ones = [], 0
    shift = 0
    while factor:
        if factor & 1:
            digit = 2 - (factor & 3)
            term = Cat(Const(0, shift), value, Const(0, max(width - shift - len(value), 0)))
            if digit > 0:
                terms.append(~term[:width])
                ones += 1
            else:
                terms.append(term[:width])
            factor -= digit
        factor >>= 1
        shift += 1
    return terms + ([ones] if ones else [])


def floor_pieces(products, shift):
    """``floor(sum(product << offset) / 2**shift)`` for ``(offset, product)`` pieces (as
    :func:`pieces` gives them): ``(terms, carry)``, the sum of the ``(offset, value)`` terms plus
    the bit ``carry`` (``None`` where there is none). A piece at or above ``shift`` moves down
    whole, one below it loses its low bits; at most two pieces may have bits below ``shift``, and
    then the carry out of those bits is one comparison: of the upper piece's low bits with the
    lower piece's bits beside them (the lower piece's bits below the upper one's offset meet
    zeros and cannot carry)."""
    terms, low = [], []
    for offset, product in products:
        if offset >= shift:
            terms.append((offset - shift, product))
        else:
            if len(product) > shift - offset:
                terms.append((0, product[shift - offset:]))
            low.append((offset, product[:shift - offset]))
    if len(low) > 2:
        raise ValueError(f"at most two pieces may lie below bit {shift}, not {len(low)}")
    if len(low) < 2:
        return terms, None
    (lo_offset, lo_bits), (hi_offset, hi_bits) = sorted(low, key=lambda item: item[0])
    width = shift - hi_offset
    part = Cat(lo_bits[hi_offset - lo_offset:], Const(0, width))[:width]
    other = Cat(hi_bits, Const(0, width))[:width]
    return terms, ~other < part
