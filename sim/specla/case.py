"""The JSON case of ``ahasd specla verify``: a strict reader, the three modes, the writer.

Input, one JSON object::

    {"S": [[d_v numbers] x d_k],
     "nodes": [{"parent": int, "k": [d_k], "v": [d_v], "q": [d_k], "beta": num, "g": num}, ...],
     "accept": [node indices]}

``parent`` is -1 (the committed state ``S``) or an earlier node; ``g`` is a log decay (<= 0);
``accept`` is a root path in order (possibly empty). Output::

    {"outputs": [[d_v numbers] per node, in node order], "state": [[d_v numbers] x d_k]}

where output n is ``S_n^T q_n`` (``S_n`` = the state after node n's own update along its root
path; q as given, no ``1/sqrt(d_k)``) and ``state`` is ``S`` after committing ``accept``.

Reading is strict: exactly these keys (no unknown or duplicate ones), numbers are JSON numbers
(not booleans, strings or null; NaN and Infinity are refused), every shape must agree with ``S``.
Every problem raises ``ValueError`` naming where it is and the bad value.
"""

import json
import math

import numpy as np

from . import verify

__all__ = ["Case", "parse_case", "read_case", "run_case", "format_result", "CASE_MODES"]

CASE_MODES = ("replay", "factor", "deferred")
_NODE_KEYS = ("parent", "k", "v", "q", "beta", "g")


class Case:
    """A parsed case: ``S`` (d_k, d_v), node arrays, ``parents`` and ``accept`` tuples."""

    def __init__(self, S, parents, q, k, v, beta, g, accept):
        self.S, self.parents, self.accept = S, parents, accept
        self.q, self.k, self.v, self.beta, self.g = q, k, v, beta, g

    @property
    def nodes(self):
        return (self.q, self.k, self.v, self.beta, self.g)


def _reject_constant(name):
    raise ValueError(f"{name} is not a number this format accepts (finite JSON numbers only)")


def _unique_object(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where} must be a number, not {json.dumps(value)}")
    value = float(value)
    if not math.isfinite(value):   # e.g. 1e999 overflows to inf
        raise ValueError(f"{where} must be finite, not {value}")
    return value


def _vector(value, n, where, what):
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list of {n} numbers, not {json.dumps(value)[:40]}")
    if len(value) != n:
        raise ValueError(f"{where} has {len(value)} numbers; {what} is {n}")
    return [_number(x, f"{where}[{i}]") for i, x in enumerate(value)]


def _keys(obj, want, where):
    if not isinstance(obj, dict):
        raise ValueError(f"{where} must be a JSON object, not {json.dumps(obj)[:40]}")
    missing = [k for k in want if k not in obj]
    if missing:
        raise ValueError(f"{where} lacks key {missing[0]!r}")
    extra = sorted(k for k in obj if k not in want)
    if extra:
        raise ValueError(f"{where} has unknown key {extra[0]!r} (keys: {', '.join(want)})")


def parse_case(text):
    """A :class:`Case` from JSON ``text``; ``ValueError`` on anything malformed."""
    try:
        obj = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_object)
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    _keys(obj, ("S", "nodes", "accept"), "the case")
    S = obj["S"]
    if not isinstance(S, list) or not S or not isinstance(S[0], list) or not S[0]:
        raise ValueError("S must be a non-empty list of non-empty rows (d_k rows of d_v numbers)")
    d_k, d_v = len(S), len(S[0])
    S = np.array([_vector(row, d_v, f"S[{i}]", "d_v (the length of S[0])")
                  for i, row in enumerate(S)])
    nodes = obj["nodes"]
    if not isinstance(nodes, list):
        raise ValueError(f"nodes must be a list, not {json.dumps(nodes)[:40]}")
    parents: list[int] = []
    cols: dict[str, list] = {key: [] for key in _NODE_KEYS[1:]}
    for n, node in enumerate(nodes):
        where = f"nodes[{n}]"
        _keys(node, _NODE_KEYS, where)
        p = node["parent"]
        if isinstance(p, bool) or not isinstance(p, int):
            raise ValueError(f"{where}.parent must be an integer, not {json.dumps(p)}")
        parents.append(p)
        for key, size, what in (("k", d_k, "d_k"), ("v", d_v, "d_v"), ("q", d_k, "d_k")):
            cols[key].append(_vector(node[key], size, f"{where}.{key}", f"{what} (from S)"))
        cols["beta"].append(_number(node["beta"], f"{where}.beta"))
        g = _number(node["g"], f"{where}.g")
        if g > 0:
            raise ValueError(f"{where}.g is a log decay and must be <= 0, not {g}")
        cols["g"].append(g)
    try:
        parents = verify.check_parents(parents)
    except ValueError as e:
        raise ValueError(f"nodes: {e} (parents come before children)") from None
    accept = obj["accept"]
    if not isinstance(accept, list):
        raise ValueError(f"accept must be a list of node indices, not {json.dumps(accept)[:40]}")
    accept = verify.check_path(parents, accept)
    arrays = {key: np.array(val, dtype=float) for key, val in cols.items()}
    for key, size in (("k", d_k), ("v", d_v), ("q", d_k)):
        arrays[key] = arrays[key].reshape(len(nodes), size)
    return Case(S, parents, arrays["q"], arrays["k"], arrays["v"], arrays["beta"], arrays["g"],
                accept)


def read_case(path):
    """:func:`parse_case` of a file, or of standard input for ``-`` (``OSError`` if it cannot be
    read; ``ValueError`` with the line of the first byte that is not UTF-8)."""
    import sys
    if str(path) == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise ValueError(f"line {line}: not UTF-8 text (byte 0x{data[error.start]:02x} at "
                         f"column {column})") from None
    if not text.strip():
        raise ValueError("line 1: empty case (one JSON object expected)")
    return parse_case(text)


def run_case(case, mode="factor"):
    """``(outputs (N, d_v), state (d_k, d_v))`` of ``case`` in ``mode``."""
    if mode == "replay":
        outputs, _, _ = verify.replay_verify(case.S, case.parents, *case.nodes)
        state = verify.replay_commit(case.S, case.accept, *case.nodes)
    elif mode == "factor":
        outputs, factors = verify.factor_verify(case.S, case.parents, *case.nodes)
        state = verify.factor_commit(case.S, factors, case.accept)
    elif mode == "deferred":
        # The committed state is held pending, as the next verification would see it.
        pending = verify.PendingState.plain(case.S)
        outputs, factors = verify.factor_verify(pending, case.parents, *case.nodes)
        state = verify.deferred_commit(pending, factors, case.accept).materialise()
    else:
        raise ValueError(f"mode must be one of {', '.join(CASE_MODES)}, not {mode!r}")
    return outputs.reshape(len(case.parents), case.S.shape[1]), state


def format_result(outputs, state):
    """The output JSON object (one line; floats written to round-trip exactly)."""
    return json.dumps({"outputs": np.asarray(outputs).tolist(),
                       "state": np.asarray(state).tolist()})
