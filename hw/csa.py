"""Carry-save arithmetic for pipelined multiply-accumulate: partial products, a Wallace tree of
full adders, a chunked adder.

A product written with ``*`` maps (in the area flow: yosys's array multiplier with ripple-carry
adders) to about 63 cells of depth for 16 x 16 bits and a 40-bit addition to 78, so a sum of
products is not one cycle at 800 MHz. These helpers build the same sums from gates whose depth
grows with the logarithm of the operand count and width:

* :func:`product_columns`: the partial products of ``a * b << shift`` (signed or unsigned
  operands, modified Baugh-Wooley: a negative partial product ``-x 2^k`` is ``~x 2^k - 2^k``, the
  ``- 2^k`` folded into one constant), as columns of bits by weight, modulo ``2^width``;
* :func:`reduce_columns`: Dadda's reduction, full adders (3:2 counters) and half adders level
  by level until every column holds at most two bits (``log_1.5(rows / 2)`` levels: 272 rows in
  13, 16 in 6); each level's bits are named signals, so that no expression is shared between
  levels;
* :func:`pipelined_add`: the two remaining rows added in chunks, one per cycle, each
  chunk's carry registered into the next.

Sums are modulo ``2^width``: exact when the true result fits in ``width`` signed bits.
"""

from amaranth.hdl import Cat, Const, Signal

__all__ = ["product_columns", "product_counts", "add_constant", "reduce_columns",
           "reduction_levels",
           "pipelined_add"]


def _partial_products(n, m, *, a_signed, b_signed, width, shift):
    """``(i, j, weight, negative)`` of the partial products ``a_i b_j`` of an ``n`` x ``m``-bit
    product below ``2^width``."""
    for i in range(n):
        for j in range(m):
            k = i + j + shift
            if k < width:
                yield i, j, k, (a_signed and i == n - 1) != (b_signed and j == m - 1)


def product_columns(m, columns, a, b, *, a_signed, b_signed, width, shift=0, name):
    """Add the partial products of ``a * b << shift`` to ``columns`` (a list of ``width`` lists
    of 1-bit values, index = weight); returns the constant (an int) to add as well
    (:func:`add_constant`): the columns plus the constant are the product modulo ``2^width``,
    whatever ``a`` and ``b`` are (a product to leave out is one with a zeroed operand). Each
    row ``a & b_j`` (its negative partial products inverted) is one signal
    ``{name}_r{j}``."""
    n, m_bits = len(a), len(b)
    const = 0
    rows = {}
    for i, j, k, negative in _partial_products(n, m_bits, a_signed=a_signed, b_signed=b_signed,
                                               width=width, shift=shift):
        rows.setdefault(j, []).append((i, k, negative))
    for j, bits in rows.items():
        invert = sum(1 << i for i, _, negative in bits if negative)
        row = Signal(n, name=f"{name}_r{j}")
        m.d.comb += row.eq((a & b[j].replicate(n)) ^ invert)
        for i, k, negative in bits:
            columns[k].append(row[i])          # -x 2^k = (1 - x) 2^k - 2^k
            const -= (1 << k) if negative else 0
    return const


def product_counts(counts, n, m, *, a_signed, b_signed, width, shift=0):
    """:func:`product_columns` on bit counts (``counts[k] += ...``) for operands of ``n`` and
    ``m`` bits; returns the same constant."""
    const = 0
    for _, _, k, negative in _partial_products(n, m, a_signed=a_signed, b_signed=b_signed,
                                               width=width, shift=shift):
        counts[k] += 1
        const -= (1 << k) if negative else 0
    return const


def add_constant(columns, const, width):
    """Add ``const`` modulo ``2^width`` to ``columns`` (its one bits; on counts, one each)."""
    const %= 1 << width
    for k in range(width):
        if const >> k & 1:
            if isinstance(columns[k], list):
                columns[k].append(Const(1, 1))
            else:
                columns[k] += 1


def _targets(height):
    """Dadda's column heights below ``height``, largest first: ... 13, 9, 6, 4, 3, 2."""
    d = [2]
    while int(d[-1] * 1.5) < height:
        d.append(int(d[-1] * 1.5))
    return d[::-1] if height > 2 else []


def _level(cols, width, target):
    """One level of Dadda's reduction: full and half adders in each column, low first, until
    its bits and the carries coming from below are at most ``target``. Returns the new columns
    (a full adder's sum and carry as ``("s", 3, n)`` and ``("c", 3, n)``, a half adder's with 2)
    and the operand groups of the full and of the half adders."""
    new = [[] for _ in range(width)]
    adders = {3: [], 2: []}
    for k, column in enumerate(cols):
        bits = list(column)
        height = len(bits) + len(new[k])         # new[k] holds the carries from column k - 1
        while height > target and len(bits) >= 2:
            take = 3 if height - target >= 2 and len(bits) >= 3 else 2
            group, bits = bits[:take], bits[take:]
            adders[take].append(group)
            new[k].append(("s", take, len(adders[take]) - 1))
            if k + 1 < width:
                new[k + 1].append(("c", take, len(adders[take]) - 1))
            height -= take - 1
        new[k].extend(bits)
    return new, adders


def reduction_levels(counts):
    """Full-adder levels :func:`reduce_columns` needs for columns of ``counts`` bits (a list
    of ints)."""
    return len(_targets(max(counts, default=0)))


def reduce_columns(m, columns, width, name, *, stage_levels=None):
    """Full adders until every column has at most two bits; returns the two rows as
    ``width``-bit values. Each level's adders are a few wide ``m.d.comb`` assignments (sums and
    carries, ``{name}_l{level}_s3`` ...); with ``stage_levels``, the columns after every
    ``stage_levels`` levels are registered (``m.d.sync``, ``{name}_l{level}_{k}``), the last
    level's too, so that the rows are
    registered ``ceil(levels / stage_levels)`` cycles after the inputs
    (:func:`reduction_levels`)."""
    cols = [list(c) for c in columns]
    targets = _targets(max((len(c) for c in cols), default=0))
    for level, target in enumerate(targets, 1):
        new, adders = _level(cols, width, target)
        # All adders of a level as a few wide expressions (a signal each), not one per bit.
        outs = {}
        for take, groups in adders.items():
            if not groups:
                continue
            ops = [Cat(*[g[i] for g in groups]) for i in range(take)]
            total = Signal(len(groups), name=f"{name}_l{level}_s{take}")
            carry = Signal(len(groups), name=f"{name}_l{level}_c{take}")
            if take == 3:
                x, y, z = ops
                m.d.comb += [total.eq(x ^ y ^ z), carry.eq((x & y) | (x & z) | (y & z))]
            else:
                x, y = ops
                m.d.comb += [total.eq(x ^ y), carry.eq(x & y)]
            outs["s", take], outs["c", take] = total, carry
        new = [[outs[b[0], b[1]][b[2]] if isinstance(b, tuple) else b for b in col]
               for col in new]
        registered = stage_levels is not None and (level % stage_levels == 0
                                                   or level == len(targets))
        if not registered:
            cols = new
            continue
        cols = []
        for k, bits in enumerate(new):
            if not bits:
                cols.append([])
                continue
            sig = Signal(len(bits), name=f"{name}_l{level}_{k}")
            m.d.sync += sig.eq(Cat(*bits))
            cols.append([sig[i] for i in range(len(bits))])
    rows = []
    for r in range(2):
        rows.append(Cat(*[(c[r] if len(c) > r else Const(0, 1)) for c in cols]))
    return rows


def pipelined_add(m, x, y, width, cuts, name):
    """``x + y`` modulo ``2^width`` in chunks split at the bit positions ``cuts`` (ascending):
    the chunk below each cut is added in its own cycle and registered with its carry, the
    operands above it and the sums below it with it; returns the sum (the last chunk
    combinational from the registers), ``len(cuts)`` cycles after ``x`` and ``y``.

    (A prefix adder is shallower on paper, but the area mapping restructures one into a ripple
    carry of about two cells per bit; chunks bound the depth whatever the mapping does.)"""
    low = []                       # registered sums of the chunks done so far, low first
    carry = Const(0, 1)
    bounds = [0, *cuts, width]
    for n in range(len(bounds) - 1):
        w = bounds[n + 1] - bounds[n]          # x and y hold the bits from bounds[n] up
        part = Signal(w + 1, name=f"{name}_c{n}")
        m.d.comb += part.eq(x[:w] + y[:w] + carry)
        if bounds[n + 1] == width:
            return Cat(*low, part[:w])
        rest = width - bounds[n + 1]
        nx, ny = Signal(rest, name=f"{name}_x{n}"), Signal(rest, name=f"{name}_y{n}")
        nc, sum_reg = Signal(name=f"{name}_carry{n}"), Signal(w, name=f"{name}_s{n}")
        done = [Signal(len(v), name=f"{name}_s{n}_{i}") for i, v in enumerate(low)]
        m.d.sync += [nx.eq(x[w:]), ny.eq(y[w:]), nc.eq(part[w]), sum_reg.eq(part[:w]),
                     *[d.eq(v) for d, v in zip(done, low)]]
        x, y, carry, low = nx, ny, nc, [*done, sum_reg]
    raise AssertionError("cuts must lie inside the width")
