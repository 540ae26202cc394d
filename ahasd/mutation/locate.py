"""Find the one place a mutant changes, by syntax-tree scope and a unique source pattern.

A mutant names its place without line numbers, so that it still applies after code moves: the
``scope`` is the qualified name of a function or class (``TVC.elaborate``, ``tvc_requests``;
empty for the whole module), found in the module's syntax tree, and ``find`` is a piece of one
source line that must occur exactly once inside that scope. Zero or several matches are an error
that names the mutant, the pattern and the lines it matched, never a guess.
"""

import ast
from dataclasses import dataclass, field

from ahasd.mutation.c_source import c_scopes, strip_c

__all__ = ["Mutant", "LocateError", "is_c", "scope_lines", "locate", "apply"]


class LocateError(ValueError):
    """A mutant's place cannot be found exactly once (the message says why)."""


@dataclass(frozen=True)
class Mutant:
    """One single-line change of one source file.

    Parameters
    ----------
    id : str
        Unique name in the catalogue.
    file : str
        Repository-relative path of the module (``hw/tvc.py``).
    find, replace : str
        The text to change (one line's worth, occurring once within ``scope``) and its
        replacement.
    scope : str
        Qualified name of the enclosing function or class; ``""`` is the whole module.
    operator : str
        What kind of bug it models (``cmp_flip``, ``off_by_one``, ``swap_operands``,
        ``drop_saturation``, ``wrong_index``, ``missing_reset``, ``drop_term``, ``behaviour``).
    behaviour : str
        The documented behaviour the change breaks (one line).
    tests : tuple of str
        Test paths (repository-relative) to run; empty means the module's entry of the test map.
    equivalent : str
        Non-empty when the mutant cannot change any observable behaviour: the reason. Equivalent
        mutants are applied and reported but not scored.
    origin : str
        ``issue`` (a behaviour named in issue 14), ``drawn`` (mechanical, seeded) or ``manual``.
    """

    id: str
    file: str
    find: str
    replace: str
    scope: str = ""
    operator: str = "behaviour"
    behaviour: str = ""
    tests: tuple = field(default_factory=tuple)
    equivalent: str = ""
    origin: str = "manual"

    def __post_init__(self):
        for name in ("find", "replace"):
            value = getattr(self, name)
            if not isinstance(value, str) or "\n" in value:
                raise ValueError(f"mutant {self.id}: {name} must be a single-line string, "
                                 f"not {value!r}")
        if not self.find:
            raise ValueError(f"mutant {self.id}: find must not be empty")
        if self.find == self.replace:
            raise ValueError(f"mutant {self.id}: replace equals find ({self.find!r}), "
                             "so nothing would change")


def _scopes(tree):
    """Yield (qualified name, node) for every function and class of a module."""
    stack = [("", tree)]
    while stack:
        prefix, node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}" if prefix else child.name
                yield name, child
                stack.append((name, child))
            else:
                stack.append((prefix, child))


def is_c(where):
    """A C source or header (located and checked as C, not as Python)?"""
    return str(where).endswith((".c", ".h"))


def scope_lines(source, scope, *, where="<source>"):
    """The 1-based inclusive line range of ``scope`` in ``source`` (all lines for ``""``); a
    C file's scopes are its function definitions (:func:`ahasd.mutation.c_source.c_scopes`)."""
    lines = source.count("\n") + 1
    if not scope:
        return 1, lines
    if is_c(where):
        spans = c_scopes(source).get(scope, [])
        if len(spans) != 1:
            raise LocateError(f"{where}: scope {scope!r} names {len(spans)} C functions, "
                              "not exactly one")
        return spans[0]
    tree = ast.parse(source, filename=where)
    found = [node for name, node in _scopes(tree) if name == scope]
    if len(found) != 1:
        raise LocateError(f"{where}: scope {scope!r} names {len(found)} functions or classes, "
                          "not exactly one")
    node = found[0]
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return first, node.end_lineno


def locate(source, mutant):
    """Character offset of ``mutant.find`` in ``source``; it must occur once in the scope."""
    where = mutant.file
    first, last = scope_lines(source, mutant.scope, where=where)
    line_starts = [0]
    for line in source.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    lo = line_starts[first - 1]
    hi = line_starts[min(last, len(line_starts) - 1)]
    hits = []
    start = source.find(mutant.find, lo, hi)
    while start != -1 and start + len(mutant.find) <= hi:
        hits.append(start)
        start = source.find(mutant.find, start + 1, hi)
    scope = f" (scope {mutant.scope})" if mutant.scope else ""
    if len(hits) != 1:
        lines = [source.count("\n", 0, h) + 1 for h in hits]
        at = f" at lines {', '.join(map(str, lines))}" if lines else ""
        raise LocateError(f"mutant {mutant.id}: pattern {mutant.find!r} matches {len(hits)} "
                          f"places in {where}{scope}{at}, not exactly one")
    return hits[0]


def apply(source, mutant):
    """``source`` with the mutant's change; the result must still be valid Python (a C file:
    its braces and parentheses still balance; the compiler in the tests checks the rest)."""
    at = locate(source, mutant)
    mutated = source[:at] + mutant.replace + source[at + len(mutant.find):]
    if is_c(mutant.file):
        code = strip_c(mutated)
        if code.count("{") != code.count("}") or code.count("(") != code.count(")"):
            raise LocateError(f"mutant {mutant.id}: the change unbalances the braces or "
                              f"parentheses of {mutant.file}")
        return mutated
    try:
        ast.parse(mutated, filename=mutant.file)
    except SyntaxError as err:
        raise LocateError(f"mutant {mutant.id}: the change makes {mutant.file} invalid Python "
                          f"at line {err.lineno}: {err.msg}") from None
    return mutated
