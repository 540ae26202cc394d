"""Hierarchical synthesis: find the modules of a generated Verilog file that are the same circuit
under different names (the 16 lanes of the AAU, the FIFOs of the task queues), keep one of each
and point every instance at it.

Amaranth writes one Verilog module per submodule *instance* (``aau.lane0`` ... ``aau.lane15``),
so a repeated lane is 16 modules with identical bodies. After :func:`share_modules` the file
holds one module per distinct circuit; synthesis keeps the shared ones as hierarchy
(``keep_hierarchy``), maps each once, and ``stat`` counts it once per instance.
"""

import re
from dataclasses import dataclass

__all__ = ["SharedDesign", "share_modules", "split_modules"]

# `module NAME(` ... `endmodule`; Amaranth escapes names with dots as `\a.b ` (a trailing space).
_MODULE = re.compile(r"^module (\\\S+ |\w+)\s*\(.*?^endmodule\n?", re.S | re.M)


_AUTO = re.compile(r"\$auto\$[\w.:]+\$\d+")


def _bare(name):
    return name[1:].rstrip() if name.startswith("\\") else name


def split_modules(text):
    """``{name: module text}`` of every module in ``text``, in file order."""
    return {_bare(m.group(1)): m.group(0) for m in _MODULE.finditer(text)}


def _escaped(name):
    return name if re.fullmatch(r"[A-Za-z_]\w*", name) else f"\\{name} "


@dataclass(frozen=True)
class SharedDesign:
    """A design after :func:`share_modules`.

    Attributes
    ----------
    text : str
        The Verilog, one module per distinct circuit.
    instances : dict
        ``{kept module: number of instances it replaced}`` for every module that more than one
        instance now shares.
    """
    text: str
    instances: dict


def share_modules(text, *, min_lines=24):
    """Merge modules of ``text`` with identical bodies (module names aside), bottom-up so that
    parents whose children were merged can merge in turn. Modules shorter than ``min_lines``
    lines (flip-flop synchronisers) are left alone: flattening them costs nothing and keeps
    cross-boundary optimisation."""
    modules = split_modules(text)
    uses = {name: 1 for name in modules}
    while True:
        groups = {}
        for name, body in modules.items():
            if body.count("\n") < min_lines:
                continue
            # yosys's Verilog writer numbers its helper registers across the file
            # (`$auto$verilog_backend.cc:2355:dump_module$3`); the number is no part of the
            # circuit.
            key = _AUTO.sub("$auto$", body.replace(_escaped(name), "\0", 1))
            groups.setdefault(key, []).append(name)
        merges = {dup: names[0] for names in groups.values() if len(names) > 1
                  for dup in names[1:]}
        if not merges:
            break
        for dup, kept in merges.items():
            uses[kept] += uses.pop(dup)
            del modules[dup]
        pattern = re.compile("|".join(re.escape(_escaped(d)) for d in merges))
        lookup = {_escaped(d): _escaped(k) for d, k in merges.items()}
        modules = {name: pattern.sub(lambda m, lookup=lookup: lookup[m.group(0)], body)
                   for name, body in modules.items()}
    header = text[:text.find("module ")] if "module " in text else ""
    shared = {name: n for name, n in uses.items() if n > 1}
    return SharedDesign(text=header + "\n".join(modules.values()), instances=shared)
