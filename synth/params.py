"""Constructor parameters of the blocks on the command line (``--param NAME=VALUE``).

:func:`param_specs` lists a block's parameters: its constructor's keyword arguments, and in dotted
form those of a nested parameter set (``edc.history_depth`` for the controller's EDC, a dict
passed to ``EDC``; ``config.n_banks`` for a :class:`ahasd.spec.dram.DRAMConfig`), each with its
type, default and the range its validator enforces (read from the ``check_*`` calls of the block's
own code). :func:`parse_params` turns ``NAME=VALUE`` strings into constructor keyword arguments
and :func:`validate` builds the block once, so that the block's own rules reject a bad value
before any work, as a one-line ValueError naming it. :func:`variant_name` is the module and file
name of a non-default build (``edc_history_depth16``).
"""

import dataclasses
import importlib
import inspect
import re
from dataclasses import dataclass

from ahasd.hw.blocks import BLOCKS, block_names, make_block
from ahasd.hw.compat import silence_unused

__all__ = ["ParamSpec", "param_specs", "parse_params", "validate", "variant_name", "NESTED"]

#: (block, keyword) -> block whose constructor parameters a dict-valued keyword holds
NESTED = {("controller", "edc"): "edc", ("controller", "tvc"): "tvc"}
#: keywords a nested dict may not set (the enclosing block sets them itself)
_NESTED_FIXED = {("controller", "edc"): {"stats_bits"}}
#: keywords that are not numbers/flags/names on a command line
_SKIP = {("csr", "regmap"), ("gts", "draft_mask"), ("gts", "preverify_mask")}

_CHECK = re.compile(r"check_(int|power_of_two|real|positive)\(\s*[\"'](\w+)[\"']\s*,\s*[^,()]+"
                    r"(?:\([^()]*\))?\s*(?:,\s*([^,()]+))?(?:,\s*([^,()]+))?")


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: dotted ``name``, ``type`` (int, float, bool, str), ``default``, ``range``."""
    name: str
    type: str
    default: object
    range: str


def _class(block):
    module, _, name = BLOCKS[block].partition(":")
    return getattr(importlib.import_module(module), name)


def _ranges(*objects):
    """{parameter: range text} from the check_* calls in the source of ``objects``' modules
    (a module object or anything defined in one); a bound that is an expression reads
    ``checked by the block``."""
    found = {}
    for obj in objects:
        try:
            module = obj if inspect.ismodule(obj) else inspect.getmodule(obj)
            source = inspect.getsource(module)
        except (OSError, TypeError):
            continue
        for kind, name, lo, hi in _CHECK.findall(source):
            lo, hi = lo.strip(), hi.strip()
            if not all(re.fullmatch(r"-?[\w.]+", x) for x in (lo, hi) if x):
                found.setdefault(name, "checked by the block")
                continue
            text = {"int": f"integer {lo}..{hi}" if lo and hi else "integer",
                    "power_of_two": f"power of two {lo}..{hi}" if lo and hi else "power of two",
                    "real": f"real in ({lo}, {hi})" if lo and hi else "real",
                    "positive": "positive"}[kind]
            found.setdefault(name, text)
    return found


def _spec_modules(block):
    """The spec module of ``block`` (``ahasd.spec.edc`` for edc), where its parameter set is
    validated, if there is one."""
    try:
        return [importlib.import_module(f"ahasd.spec.{block}")]
    except ImportError:
        return []


def _type(value):
    return type(value).__name__ if value is not None else "int"


def _block_specs(block, prefix="", skip=()):
    cls = _class(block)
    ranges = _ranges(cls, *_spec_modules(block))
    specs = []
    for name, p in inspect.signature(cls).parameters.items():
        if p.kind is not p.KEYWORD_ONLY or (block, name) in _SKIP or name in skip:
            continue
        if (block, name) in NESTED:
            specs += _block_specs(NESTED[(block, name)], f"{prefix}{name}.",
                                  _NESTED_FIXED.get((block, name), ()))
        elif dataclasses.is_dataclass(p.default):
            sub = _ranges(type(p.default))
            for field in dataclasses.fields(p.default):
                value = getattr(p.default, field.name)
                specs.append(ParamSpec(f"{prefix}{name}.{field.name}", _type(value), value,
                                       sub.get(field.name, "-")))
        else:
            specs.append(ParamSpec(prefix + name, _type(p.default), p.default,
                                   ranges.get(name, "-")))
    return specs


def param_specs(block):
    """The :class:`ParamSpec` list of block ``block`` (see the module docstring)."""
    if block not in BLOCKS:
        raise ValueError(f"unknown block {block!r}; known blocks: {', '.join(block_names())}")
    return _block_specs(block)


def _value(spec, text):
    what = f"--param {spec.name}={text}"
    if spec.type == "bool":
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"{what}: not true or false")
        return text.lower() in ("true", "1")
    if spec.type == "int":
        if text.lower() == "none" and spec.default is None:
            return None
        try:
            return int(text, 0)
        except ValueError:
            raise ValueError(f"{what}: not an integer") from None
    if spec.type == "float":
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{what}: not a number") from None
    return text


def parse_params(block, assignments):
    """Constructor keyword arguments of ``block`` from ``NAME=VALUE`` strings (dotted names for
    nested parameters); raise ValueError naming a malformed or unknown assignment."""
    specs = {s.name: s for s in param_specs(block)}
    cls = _class(block)
    kwargs = {}
    for item in assignments:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValueError(f"--param {item!r}: expected NAME=VALUE")
        if name not in specs:
            raise ValueError(f"--param {name}: {block} has no such parameter (known: "
                             f"{', '.join(specs)}; see --list-params)")
        value = _value(specs[name], text.strip())
        head, dot, rest = name.partition(".")
        if not dot:
            kwargs[head] = value
        elif (block, head) in NESTED:
            kwargs.setdefault(head, {})[rest] = value
        else:
            base = kwargs.get(head, inspect.signature(cls).parameters[head].default)
            kwargs[head] = dataclasses.replace(base, **{rest: value})
    return kwargs


def validate(block, params):
    """Build ``block`` with ``params`` once (its own rules check them; ValueError / TypeError
    name the value) and drop it; return ``params``."""
    _silence(make_block(block, **params))      # built to check, never elaborated
    return params


def _silence(obj, seen=None):
    """Mark ``obj`` and the elaboratables it holds as used (no UnusedElaboratable warning)."""
    from amaranth.hdl import Elaboratable
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, Elaboratable):
        silence_unused(obj)
        children = vars(obj).values()
    elif isinstance(obj, (list, tuple)):
        children = obj
    elif isinstance(obj, dict):
        children = obj.values()
    else:
        return
    for child in children:
        _silence(child, seen)


def variant_name(block, assignments):
    """The module and file name of a build of ``block`` with ``assignments``: ``block`` for
    none, else ``block_`` and each ``NAME VALUE`` in order (``edc_history_depth16``)."""
    parts = [block]
    for item in assignments:
        name, _, text = item.partition("=")
        parts.append(re.sub(r"\W+", "_", f"{name.strip()}{text.strip()}").strip("_"))
    return "_".join(parts)
