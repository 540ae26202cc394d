"""C sources for the mutation campaign: function scopes and mechanical mutants of the firmware.

The firmware (``firmware/*.c``) is written in one style (docs in ``firmware/ahasd_driver.h``): a
function definition starts at column 0 with its return type, its name and ``(``, and its body is
the brace block that follows. :func:`c_scopes` finds each body by matching braces outside string
and character literals and comments; a scope is the function's name. :func:`c_candidates` yields
the same operators as the Python drawer (:mod:`ahasd.mutation.draw`) where C has them, on one line
each: ``cmp_flip`` (``<`` ``<=`` ``>`` ``>=`` ``==`` ``!=``), ``off_by_one`` (a decimal constant),
``drop_term`` (one side of ``&&``), ``swap_operands`` (the operands of a binary ``-`` between two
names). Lines inside comments, preprocessor lines and ``return AHASD_ERR_*`` guards of argument
checks are left out (validation, not behaviour).
"""

import re

__all__ = ["c_scopes", "c_candidates", "strip_c"]

_DEFINITION = re.compile(r"^(?!static\s+const\b)(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w \t\*]*?"
                         r"\b([A-Za-z_]\w*)\s*\([^;]*$")
_CMP = re.compile(r"(?<![<>=!&|\-])(<=|>=|==|!=|<(?![<=])|>(?![>=]))(?![=<>])")
_FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
_INT = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
_AND = re.compile(r"\(([^()&|]+?)\s*&&\s*([^()&|]+?)\)")


def strip_c(source):
    """``source`` with comments and the insides of string and character literals blanked (same
    length, newlines kept), so that braces and operators are found only in code."""
    out = list(source)
    i, n = 0, len(source)
    while i < n:
        two = source[i:i + 2]
        if two == "//":
            while i < n and source[i] != "\n":
                out[i] = " "
                i += 1
        elif two == "/*":
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                if source[j] != "\n":
                    out[j] = " "
            i = end
        elif source[i] in "\"'":
            quote = source[i]
            j = i + 1
            while j < n and source[j] != quote:
                j += 2 if source[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def c_scopes(source):
    """``{function name: (first line, last line)}`` (1-based, inclusive) of every function
    definition in ``source``; a name defined twice maps to every definition (a list)."""
    code = strip_c(source)
    lines = code.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    scopes = {}
    for number, line in enumerate(lines, start=1):
        match = _DEFINITION.match(line)
        if not match or line.startswith(("#", " ", "\t")):
            continue
        start = code.find("{", offsets[number - 1])
        semi = code.find(";", offsets[number - 1])
        if start < 0 or (0 <= semi < start):
            continue      # a declaration, not a definition
        depth, i = 0, start
        while i < len(code):
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        last = code.count("\n", 0, i) + 1
        scopes.setdefault(match.group(1), []).append((number, last))
    return scopes


def _skipped(line):
    text = line.strip()
    return (not text or text.startswith("#") or "AHASD_ERR_ARG" in text
            or text.startswith(("return AHASD_ERR", "case ")))


def c_candidates(source):
    """Yield ``(operator, scope, line number, find, replace)`` for every site in a function
    body; ``find`` is the whole code line (stripped), so that it is unique or left out."""
    code = strip_c(source).split("\n")
    raw = source.split("\n")
    for scope, spans in c_scopes(source).items():
        for first, last in spans:
            for number in range(first + 1, last + 1):
                line, text = code[number - 1], raw[number - 1]
                if _skipped(line) or line != text:     # a comment or literal on the line
                    continue
                stripped = text.strip()
                for m in _CMP.finditer(stripped):
                    op = m.group(1)
                    new = stripped[:m.start(1)] + _FLIP[op] + stripped[m.end(1):]
                    yield "cmp_flip", scope, number, stripped, new
                for m in _INT.finditer(stripped):
                    value = int(m.group(1))
                    for new_value in (value + 1, value - 1):
                        if new_value >= 0:
                            new = stripped[:m.start(1)] + str(new_value) + stripped[m.end(1):]
                            yield "off_by_one", scope, number, stripped, new
                for m in _AND.finditer(stripped):
                    for keep in (m.group(1), m.group(2)):
                        new = stripped[:m.start()] + f"({keep.strip()})" + stripped[m.end():]
                        yield "drop_term", scope, number, stripped, new
                sub = re.search(r"\b([A-Za-z_][\w.>-]*)\s-\s([A-Za-z_][\w.>-]*)\b", stripped)
                if sub and "->" not in sub.group(0).replace(sub.group(1), "").replace(
                        sub.group(2), ""):
                    new = (stripped[:sub.start()] + f"{sub.group(2)} - {sub.group(1)}"
                           + stripped[sub.end():])
                    yield "swap_operands", scope, number, stripped, new
