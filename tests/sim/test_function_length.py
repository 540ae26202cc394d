"""Short functions in ``sim/``: none over 80 lines; 61-80 lines only with a reason in the docstring.

A function's length is the lines from its ``def`` to its last line, docstring included. One of
61..80 lines must say in its docstring that it is long and why (the word "long" followed by more
words); one over 80 lines is split, whatever its docstring says.
"""

import ast
import re
from pathlib import Path

import pytest

SIM = Path(__file__).resolve().parents[2] / "sim"
LIMIT = 60          # longer needs a reason in the docstring
HARD_LIMIT = 80     # longer is never accepted

_REASON = re.compile(r"\blong\b\W+\w+(\W+\w+){2,}", re.IGNORECASE)


def function_length_problems(source, name="<source>"):
    """Every function of ``source`` that breaks the rule, as ``"name:line func: N lines ..."``."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        n = node.end_lineno - node.lineno + 1
        where = f"{name}:{node.lineno} {node.name}: {n} lines"
        if n > HARD_LIMIT:
            problems.append(f"{where} (over {HARD_LIMIT}: split it)")
        elif n > LIMIT and not _REASON.search(ast.get_docstring(node) or ""):
            problems.append(f"{where} (over {LIMIT}: its docstring must say it is long and why)")
    return problems


def _function(lines, docstring):
    body = [f"    x{i} = {i}" for i in range(lines - 2)]
    return "\n".join(["def f():", f'    """{docstring}"""', *body]) + "\n"


@pytest.mark.parametrize("lines, docstring, bad", [
    (60, "Short.", False),
    (61, "Short.", True),
    (61, "Long.", True),                                          # the word alone is no reason
    (61, "Long: one pass over the table keeps the state local.", False),
    (80, "Long because the cases share every local.", False),
    (81, "Long because the cases share every local.", True),
])
def test_the_rule_itself(lines, docstring, bad):
    src = _function(lines, docstring)
    assert len(src.splitlines()) == lines
    assert bool(function_length_problems(src)) is bad


def test_nested_functions_and_methods_count():
    src = "class A:\n    def m(self):\n" + "".join(f"        y = {i}\n" for i in range(90))
    assert function_length_problems(src) == ["<source>:2 m: 91 lines (over 80: split it)"]


def test_no_long_functions_in_sim():
    files = sorted(SIM.rglob("*.py"))
    assert len(files) > 20, f"found only {len(files)} files under {SIM}"
    problems = [p for f in files
                for p in function_length_problems(f.read_text(), str(f.relative_to(SIM.parent)))]
    assert not problems, "\n".join(problems)
