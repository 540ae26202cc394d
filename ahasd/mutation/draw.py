"""Mechanical mutants: every operator site of a module's syntax tree, drawn with a fixed seed.

The operators model the single-line bugs that slip into RTL and golden models:

``cmp_flip``         ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=`` (one comparison)
``off_by_one``       an integer constant ``n`` -> ``n + 1`` or ``n - 1`` (not an index)
``wrong_index``      a constant subscript or slice bound ``n`` -> ``n + 1`` / ``n - 1``
``swap_operands``    the operands of ``-``, ``//``, ``/``, ``%``, ``<<``, ``>>``, and the two
                     choices of ``Mux(c, a, b)``
``drop_saturation``  ``min(a, b)`` / ``max(a, b)`` -> ``a`` (or ``b``)
``drop_term``        ``a & b`` / ``a and b`` -> one operand (a dropped guard or enable)
``missing_reset``    ``init=`` of a ``Signal`` dropped; a statement of ``reset`` / ``begin`` /
                     ``clear`` replaced by ``pass``

Each site becomes a :class:`~ahasd.mutation.locate.Mutant` located by its enclosing scope and a
pattern that is unique there (the node's source text, widened to its whole line when the text
is short or repeats; a site whose line repeats too is left out). :func:`draw` picks from the sites with
``random.Random(seed)``, round-robin over the operators so that each is represented. The
catalogue keeps the drawn mutants as data, so a review (equivalent or not) stays attached to them.
"""

import ast
import random

from ahasd.mutation.c_source import c_candidates
from ahasd.mutation.locate import LocateError, Mutant, apply, is_c, locate

__all__ = ["OPERATORS", "sites", "c_sites", "draw"]

OPERATORS = ("cmp_flip", "off_by_one", "wrong_index", "swap_operands", "drop_saturation",
             "drop_term", "missing_reset")

_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
         ast.NotEq: ast.Eq}
_SWAP = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift)
#: Calls whose arguments are validation bounds or messages, not behaviour.
_SKIP_CALLS = {"check_int", "check_positive", "check_unit", "check_domain", "check_choice",
               "ValueError", "TypeError", "LocateError", "AssertionError", "print", "range",
               "In", "Out", "unsigned", "signed"}     # and port / shape declarations
_RESET_SCOPES = {"reset", "begin", "clear", "soft_reset"}
_ATOMS = (ast.Name, ast.Constant, ast.Call, ast.Attribute, ast.Subscript)


def _parent_map(tree):
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return parents


def _scope_of(node, parents):
    names = []
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
    return ".".join(reversed(names))


def _skipped(node, parents):
    """Inside a validation call or condition, a raise, an assert, a port declaration, a
    decorator or a default?"""
    while node in parents:
        parent = parents[node]
        if isinstance(parent, (ast.Raise, ast.Assert, ast.JoinedStr)):
            return True
        if isinstance(parent, ast.If) and node is parent.test and \
                all(isinstance(s, ast.Raise) for s in parent.body):
            return True      # the condition of a parameter check
        if isinstance(parent, ast.Call):
            func = parent.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in _SKIP_CALLS:
                return True
        if isinstance(parent, ast.arguments):
            return True      # default values of parameters
        if isinstance(parent, (ast.FunctionDef, ast.ClassDef)) and node in parent.decorator_list:
            return True
        node = parent
    return False


def _text(node):
    text = ast.unparse(node)
    return text if isinstance(node, _ATOMS) else f"({text})"


def _candidates(tree, parents):
    """Yield (operator, node, replacement node text) for every site."""
    for node in ast.walk(tree):
        if _skipped(node, parents):
            continue
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
            new = ast.Compare(node.left, [_FLIP[type(node.ops[0])]()], node.comparators)
            yield "cmp_flip", node, ast.unparse(new)
        elif (isinstance(node, ast.Constant) and type(node.value) is int
              and not isinstance(parents.get(node), ast.UnaryOp)):
            parent = parents.get(node)
            index = (isinstance(parent, ast.Subscript) and parent.slice is node) or \
                isinstance(parent, ast.Slice)
            for new in (node.value + 1, node.value - 1):
                if new >= 0 or index:
                    yield ("wrong_index" if index else "off_by_one"), node, repr(new)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, _SWAP):
            yield "swap_operands", node, _text(ast.BinOp(node.right, node.op, node.left))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
            yield "drop_term", node, _text(node.left)
            yield "drop_term", node, _text(node.right)
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) and \
                len(node.values) == 2:
            yield "drop_term", node, _text(node.values[0])
            yield "drop_term", node, _text(node.values[1])
        elif isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else \
                getattr(node.func, "attr", "")
            if name in ("min", "max") and len(node.args) == 2 and not node.keywords:
                yield "drop_saturation", node, _text(node.args[0])
                yield "drop_saturation", node, _text(node.args[1])
            elif name == "Mux" and len(node.args) == 3:
                new = ast.Call(node.func, [node.args[0], node.args[2], node.args[1]], [])
                yield "swap_operands", node, ast.unparse(new)
            elif name in ("Signal", "Signal.like") or (name == "like"):
                for kw in node.keywords:
                    if kw.arg == "init":
                        new = ast.Call(node.func, node.args,
                                       [k for k in node.keywords if k is not kw])
                        yield "missing_reset", node, ast.unparse(new)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            scope = _scope_of(node, parents).rsplit(".", 1)[-1]
            if scope in _RESET_SCOPES and node.lineno == node.end_lineno:
                yield "missing_reset", node, "pass"


def c_sites(path, source):
    """Every mechanical mutant of one C source (:func:`ahasd.mutation.c_source.c_candidates`),
    located, unnumbered."""
    out, seen = [], set()
    for operator, scope, _, find, replace in c_candidates(source):
        if (scope, find) in seen:
            continue
        mutant = Mutant(id="?", file=path, find=find, replace=replace, scope=scope,
                        operator=operator, origin="drawn", behaviour=f"{operator} in `{find}`")
        try:
            apply(source, mutant)
        except LocateError:
            continue
        seen.add((scope, find))
        out.append(mutant)
    return out


def sites(path, source):
    """Every mechanical mutant of one module, as located :class:`Mutant` objects (unnumbered);
    a C source goes through :func:`c_sites`."""
    if is_c(path):
        return c_sites(path, source)
    tree = ast.parse(source, filename=path)
    parents = _parent_map(tree)
    lines = source.splitlines()
    out = []
    seen = set()
    for operator, node, replacement in _candidates(tree, parents):
        if node.lineno != node.end_lineno:
            continue
        segment = ast.get_source_segment(source, node)
        scope = _scope_of(node, parents)
        line = lines[node.lineno - 1]
        col, end = node.col_offset, node.end_col_offset
        # Byte columns: the sources are ASCII where code is (non-ASCII only in comments/strings).
        options = [(segment, replacement),
                   (line.strip(), (line[:col] + replacement + line[end:]).strip())]
        if len(segment) < 8:    # "1" or "a < b" alone is unique only by chance: use the line
            options = options[1:]
        for find, replace in options:
            key = (scope, find, replace)
            if find == replace or key in seen:
                continue
            mutant = Mutant(id="?", file=path, find=find, replace=replace, scope=scope,
                            operator=operator, origin="drawn",
                            behaviour=f"{operator} at `{segment}`")
            try:
                locate(source, mutant)
            except LocateError:
                continue
            seen.add(key)
            out.append(mutant)
            break
    return out


def draw(modules, count, seed, *, read=None):
    """``count`` mutants drawn from the sites of ``modules`` (paths) with ``random.Random(seed)``.

    ``read(path)`` returns a module's source (default: read the file). Operators take turns
    (in :data:`OPERATORS` order, skipping any with no site left), and within an operator the
    module is drawn first, then the site, so that large modules do not crowd out small ones; a
site is changed by one mutant at most.
    """
    read = read or (lambda p: open(p, encoding="utf-8").read())
    rng = random.Random(seed)
    pools = {op: {} for op in OPERATORS}
    for path in sorted(modules):
        for mutant in sites(path, read(path)):
            pools[mutant.operator].setdefault(path, []).append(mutant)
    picked = []
    while len(picked) < count and any(pools.values()):
        for op in OPERATORS:
            if len(picked) >= count or not pools[op]:
                continue
            path = rng.choice(sorted(pools[op]))
            bucket = pools[op][path]
            mutant = bucket.pop(rng.randrange(len(bucket)))
            picked.append(mutant)
            # One mutant per site: drop the other changes of the same text.
            for pool in pools.values():
                for other in list(pool):
                    pool[other] = [m for m in pool[other]
                                   if (m.file, m.scope, m.find) != (path, mutant.scope, mutant.find)]
                    if not pool[other]:
                        del pool[other]
    return picked
