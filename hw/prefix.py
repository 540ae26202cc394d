"""Parallel-prefix (Kogge-Stone) carry logic written out as gates.

The 28 nm timing flow (:mod:`ahasd.synth.sta`) times the area-oriented mapping, in which Yosys's
``$alu`` cells become ripple carries: a 32-bit incrementer is 32 gates deep, a 32-bit adder
twice that, longer than an 800 MHz cycle. The functions here build the carries as a
Kogge-Stone prefix tree of AND / OR gates (``ceil(log2(width))`` levels). ABC's area-oriented
mapping may still rebuild a chain from them where that is smaller (measured: a counter's
prefix increment behind a late event came back as the ripple chain), so a critical carry is
better kept off the path by a register (a precomputed ``count + 1``); these trees shorten carries
that start and end at registers. On ECP5 they are slower than a carry chain (LUT levels instead
of CCU2C cells; measured on the controller), so the RTL uses them only for a Gray decode.
Levels marked ``keep`` (:func:`gray_difference`'s XOR trees) do survive ABC as written: every
level is then a net of its own, a 2-input gate per bit.

All values are unsigned; results wrap at ``width`` bits (default the wider operand). Each
function takes the module ``m`` and names its levels ``name``: every prefix level is a signal
of its own, so the levels' shared terms stay shared (an expression tree would repeat them).
"""

from amaranth import Cat, Const, Mux, Signal, Value

__all__ = ["add", "sub", "increment", "greater_equal", "gray_to_binary", "split_increment",
           "select_add", "select_sub", "gray_difference"]


def _bits(value, width):
    value = Value.cast(value)
    return [value[i] if i < len(value) else Const(0, 1) for i in range(width)]


def _level(m, name, bits, keep=False):
    signal = Signal(len(bits), name=name, attrs={"keep": 1} if keep else {})
    m.d.comb += signal.eq(Cat(*bits))
    return [signal[i] for i in range(len(bits))]


def _carries(m, name, g, p, carry_in):
    """Carries into bits ``0..n`` for generate ``g`` and propagate ``p`` (Kogge-Stone)."""
    n = len(g)
    g = list(g)
    p = list(p)
    g[0] = g[0] | (p[0] & carry_in)
    g = _level(m, f"{name}_g0", g)
    span, level = 1, 1
    while span < n:
        g, p = (_level(m, f"{name}_g{level}",
                       [g[i] | (p[i] & g[i - span]) if i >= span else g[i] for i in range(n)]),
                _level(m, f"{name}_p{level}",
                       [p[i] & p[i - span] if i >= span else p[i] for i in range(n)]))
        span *= 2
        level += 1
    return [Value.cast(carry_in)] + g


def add(m, a, b, carry_in=0, width=None, name="add"):
    """``(a + b + carry_in) mod 2**width`` with prefix carries."""
    width = width or max(len(Value.cast(a)), len(Value.cast(b)))
    a, b = _bits(a, width), _bits(b, width)
    p = _level(m, f"{name}_p", [x ^ y for x, y in zip(a, b)])
    carries = _carries(m, name, [x & y for x, y in zip(a, b)], p, Value.cast(carry_in))
    return Cat(*(pi ^ ci for pi, ci in zip(p, carries)))


def sub(m, a, b, width=None, name="sub"):
    """``(a - b) mod 2**width`` with prefix carries."""
    width = width or max(len(Value.cast(a)), len(Value.cast(b)))
    return add(m, a, Cat(*(~bit for bit in _bits(b, width))), 1, width, name)


def increment(m, a, carry_in=1, name="inc"):
    """``(a + carry_in) mod 2**len(a)``: the carry into bit ``i`` is the AND of the bits below,
    as a prefix tree."""
    bits = _bits(a, len(Value.cast(a)))
    carries = _carries(m, name, [Const(0, 1)] * len(bits), bits, Value.cast(carry_in))
    return Cat(*(bit ^ carry for bit, carry in zip(bits, carries)))


def greater_equal(m, a, b, name="ge"):
    """``a >= b`` (unsigned): the carry out of ``a + ~b + 1``, as a prefix tree."""
    width = max(len(Value.cast(a)), len(Value.cast(b)))
    a, nb = _bits(a, width), [~bit for bit in _bits(b, width)]
    p = _level(m, f"{name}_p", [x ^ y for x, y in zip(a, nb)])
    return _carries(m, name, [x & y for x, y in zip(a, nb)], p, Const(1, 1))[-1]


def gray_to_binary(m, gray, name="gray"):
    """Binary value of a Gray code: bit ``i`` is the XOR of Gray bits ``i`` and above, as a
    prefix (suffix) tree of XORs."""
    bits = _bits(gray, len(Value.cast(gray)))
    n = len(bits)
    span, level = 1, 0
    while span < n:
        bits = _level(m, f"{name}_x{level}",
                      [bits[i] ^ bits[i + span] if i + span < n else bits[i] for i in range(n)])
        span *= 2
        level += 1
    return Cat(*bits)


def split_increment(m, a, name="split_inc"):
    """``(a + 1) mod 2**len(a)``: the lower half's ``+ 1`` beside the upper half's, the carry
    between them the AND of the lower half's bits (a tree, ready with the lower half)."""
    a = Value.cast(a)
    width = len(a)
    if width < 8:
        return (a + 1)[:width]
    half = width // 2
    low = Signal(half, name=f"{name}_lo")
    high = Signal(width - half, name=f"{name}_hi")
    m.d.comb += [low.eq(a[:half] + 1), high.eq(a[half:] + 1)]
    return Cat(low, Mux(a[:half].all(), high, a[half:]))


def select_add(m, a, b, width=None, name="select_add"):
    """``(a + b) mod 2**width`` (default the wider operand): the lower half's sum and carry
    beside the upper half's two candidates, one selected by the carry (carry select)."""
    width = width or max(len(Value.cast(a)), len(Value.cast(b)))
    a, b = Cat(*_bits(a, width)), Cat(*_bits(b, width))
    if width < 8:
        return (a + b)[:width]
    half = width // 2
    low = Signal(half + 1, name=f"{name}_lo")
    high = Signal(width - half, name=f"{name}_hi")
    high_carry = Signal(width - half, name=f"{name}_hi_c")
    m.d.comb += [
        low.eq(a[:half] + b[:half]),
        high.eq(a[half:] + b[half:]),
        high_carry.eq(a[half:] - ~b[half:]),   # a + b + 1, one adder
    ]
    return Cat(low[:half], Mux(low[half], high_carry, high))


def select_sub(m, a, b, name="select_sub"):
    """``(a - b) mod 2**width`` (``width`` the wider operand): the lower half's difference and
    its borrow beside the upper half's two candidates (with and without the borrow), one
    selected by the borrow (carry select)."""
    width = max(len(Value.cast(a)), len(Value.cast(b)))
    a, b = Cat(*_bits(a, width)), Cat(*_bits(b, width))
    if width < 8:
        return (a - b)[:width]
    half = width // 2
    low = Signal(half + 1, name=f"{name}_lo")          # top bit set: no borrow
    high = Signal(width - half, name=f"{name}_hi")
    high_borrow = Signal(width - half, name=f"{name}_hi_b")
    m.d.comb += [
        low.eq(Cat(a[:half], Const(1, 1)) - b[:half]),
        high.eq(a[half:] - b[half:]),
        high_borrow.eq(a[half:] + ~b[half:]),   # a - b - 1
    ]
    return Cat(low[:half], Mux(low[half], high, high_borrow))


def _suffix_xor(m, bits, name):
    """Bit ``i`` the XOR of ``bits[i:]``: a radix-4 suffix tree of XORs
    (``ceil(log4(len(bits)))`` levels, one LUT4 each on an FPGA, two XOR2 levels at 28 nm),
    each level a signal kept through synthesis, so that the area mapping cannot fold it into a
    chain."""
    n = len(bits)
    span, level = 1, 0
    while span < n:
        terms = [[bits[i + k * span] for k in range(4) if i + k * span < n] for i in range(n)]
        bits = _level(m, f"{name}_x{level}", [_xor(t) for t in terms], keep=True)
        span *= 4
        level += 1
    return Cat(*bits)


def _xor(terms):
    result = terms[0]
    for term in terms[1:]:
        result = result ^ term
    return result


def gray_difference(m, gray, b, name="gray_diff", *, carry_select=True):
    """``(binary(gray) - b) mod 2**width`` and ``binary(gray)`` (``width = len(gray)``), the Gray
    decode overlapped with the subtraction. Returns ``(difference, binary)``.

    Bit ``i`` of the binary value is the XOR of Gray bits ``i`` and above, so the lower half's
    binary bits are the XOR of the lower half's own suffix ``s`` with the parity ``P`` of the
    upper half. The lower half's difference is computed for both parities (``s - b`` and
    ``~s - b = ~(s + b)``) beside the upper half's decode and its two differences (``h - b`` and
    ``h - b - 1 = ~(b - h)``); ``P`` selects the lower one and its borrow the upper one (carry
    select). Each candidate is a carry chain of half the width (ripple gates at 28 nm, a carry
    chain on an FPGA); the inverted forms keep Yosys's ``opt_share`` from merging a pair back
    into one adder behind the multiplexer (the chain with the select as its carry in).

    With ``carry_select=False`` the difference is one subtraction after the whole decode: on an
    FPGA one carry chain, whose outputs a register takes in the chain's own slices, where the
    halves' select would stand between the chains and a register placed by its readers."""
    gray = Value.cast(gray)
    width = len(gray)
    b = Cat(*_bits(b, width))
    bits = _bits(gray, width)
    if width < 8 or not carry_select:
        seen = _suffix_xor(m, bits, f"{name}_dec")
        return (seen - b)[:width], seen
    half = width // 2
    suffix = _suffix_xor(m, bits[:half], f"{name}_lo_dec")
    high = _suffix_xor(m, bits[half:], f"{name}_hi_dec")
    parity = high[0]
    even = Signal(half + 1, name=f"{name}_lo_even")   # s - b; top bit set: no borrow
    odd_sum = Signal(half + 1, name=f"{name}_lo_odd")  # s + b; top bit set: ~s - b borrows
    high_diff = Signal(width - half, name=f"{name}_hi")
    high_rev = Signal(width - half, name=f"{name}_hi_rev")   # b - h = ~(h - b - 1)
    m.d.comb += [
        even.eq(Cat(suffix, Const(1, 1)) - b[:half]),
        odd_sum.eq(suffix + b[:half]),
        high_diff.eq(high - b[half:]),
        high_rev.eq(b[half:] - high),
    ]
    low = Mux(parity, ~odd_sum[:half], even[:half])
    no_borrow = Mux(parity, ~odd_sum[half], even[half])
    seen = Cat(suffix ^ Cat(*[parity] * half), high)
    return Cat(low, Mux(no_borrow, high_diff, ~high_rev)), seen
