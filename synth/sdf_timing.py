"""Every endpoint's arrival time from nextpnr's SDF: how many register inputs miss the target.

nextpnr reports one critical path per clock and a slack histogram in its log. To see where a
block stands, the FPGA flow also writes the routed design's delays (``--sdf``) and this module
walks them: the longest path from any register output to every register input (setup
included), per clock. A block's timing is then the list of its late endpoints, grouped by the
register that launches the path and the register that captures it, not one path.

Delay model: the SDF's maximum delays (the third value of each ``(min:typ:max)``) of the cells'
``IOPATH`` arcs and of the ``INTERCONNECT`` arcs (the routed wires), a register's clock-to-Q as
its ``IOPATH CLK Q`` (a block RAM's ``CLKA`` / ``CLKB`` to its data outputs likewise), and the
largest ``SETUPHOLD`` setup time of the captured pin. Paths start at register and block RAM
outputs only: the block's input ports carry no constraint in the flow's out-of-context builds,
as in nextpnr's own report. Clock skew is taken as zero (the clocks run on the global network).
With these the worst arrival of a clock is nextpnr's critical path
(``tests/synth/test_sdf_timing.py`` checks both on a routed block).

Only ECP5 is supported: its packed flip-flops, LUT RAMs and block RAMs keep the names synthesis
gave them (``TRELLIS_FF``, ``TRELLIS_DPR16X4``, ``DP16KD``), so each endpoint's clock comes from
the synthesised netlist.
"""

import collections
import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CLOCKED", "Endpoint", "endpoints", "late_counts", "worst_groups", "register_group",
           "clocks_of_flip_flops"]

_TRIPLE = r"\((-?[\d.]*):(-?[\d.]*):(-?[\d.]*)\)"
_IOPATH = re.compile(r"\(IOPATH\s+(\S+)\s+(\S+)\s+" + _TRIPLE)
_INTERCONNECT = re.compile(r"\(INTERCONNECT\s+(\S+)\s+(\S+)\s+" + _TRIPLE)
_SETUPHOLD = re.compile(r"\(SETUPHOLD\s+\((?:posedge|negedge)\s+(\S+)\)\s+\(posedge\s+(\S+)\)\s+"
                        + _TRIPLE)
_HEADER = re.compile(r'\(CELLTYPE\s+"([^"]*)"\)\s*\(INSTANCE\s*([^)\n]*)\)')
_TIMESCALE = re.compile(r"\(TIMESCALE\s+(\d+)\s*(ps|ns)\)")
#: A cell's clock pins, whose ``IOPATH`` arcs are clock-to-output delays (paths start there):
#: a flip-flop's ``CLK``, a block RAM's ``CLKA`` / ``CLKB``, a DSP's ``CLK0``-``CLK3``.
_CLOCK_PIN = re.compile(r"CLK[A-D0-3]?")


@dataclass(frozen=True)
class Endpoint:
    """A register input and the longest path into it."""
    clock: str          # the capturing register's clock net (None when unknown)
    cell: str           # the capturing cell
    pin: str
    arrival_ns: float   # clock-to-Q, logic and wires, and the pin's setup time
    start: str          # the register cell that launches that longest path


def _unescape(name):
    return name.replace("\\", "")


def _pin(text):
    """``"cell/pin"`` (the SDF's divider is ``/``; cell names may hold escaped ``/``)."""
    name = _unescape(text)
    cell, _, pin = name.rpartition("/")
    return cell, pin


def _max(triple):
    return float(triple[2] or triple[1] or triple[0] or 0)


def endpoints(sdf_text, clock_of=None):
    """Every register input of the SDF design with its longest path, as :class:`Endpoint`
    (``clock_of``: a mapping of cell name to clock net; cells it does not hold get ``None``).

    Raises ``ValueError`` for a text that is not a routed design's SDF, or for combinational
    loops (nextpnr's own analysis breaks them; none is expected in the project's blocks)."""
    clock_of = clock_of or {}
    scale = _TIMESCALE.search(sdf_text)
    if not sdf_text.lstrip().startswith("(DELAYFILE") or scale is None:
        raise ValueError("not an SDF file (no DELAYFILE header with a TIMESCALE)")
    unit_ns = float(scale.group(1)) * (1e-3 if scale.group(2) == "ps" else 1.0)

    arcs = collections.defaultdict(list)     # (cell, pin) -> [((cell, pin), delay)]
    launch = {}                              # (cell, Q pin) -> clock-to-Q
    setup = {}                               # (cell, pin) -> setup time
    for chunk in re.split(r"\n\s*\(CELL\b", sdf_text)[1:]:
        header = _HEADER.search(chunk)
        if header is None:
            continue
        cell = _unescape(header.group(2).strip())
        if not cell:                         # the top cell: the routed wires
            for src, dst, *triple in _INTERCONNECT.findall(chunk):
                arcs[_pin(src)].append((_pin(dst), _max(triple)))
            continue
        for src, dst, *triple in _IOPATH.findall(chunk):
            if _CLOCK_PIN.fullmatch(src):
                launch[(cell, dst)] = max(launch.get((cell, dst), 0.0), _max(triple))
            else:
                arcs[(cell, src)].append(((cell, dst), _max(triple)))
        for pin, clk, *triple in _SETUPHOLD.findall(chunk):
            if pin != clk:
                setup[(cell, pin)] = max(setup.get((cell, pin), 0.0), _max(triple))

    # Longest arrival by a topological walk from the register outputs.
    indegree = collections.Counter(dst for outs in arcs.values() for dst, _ in outs)
    nodes = set(arcs) | set(indegree) | set(launch)
    arrival = {node: delay for node, delay in launch.items()}
    start = {node: node[0] for node in launch}
    ready = [node for node in nodes if indegree[node] == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for dst, delay in arcs.get(node, ()):
            if node in arrival and arrival[node] + delay > arrival.get(dst, -1.0):
                arrival[dst] = arrival[node] + delay
                start[dst] = start[node]
            indegree[dst] -= 1
            if indegree[dst] == 0:
                ready.append(dst)
    if seen != len(nodes):
        raise ValueError(f"{len(nodes) - seen} SDF pins lie on combinational loops")

    def clock(cell, pin):
        # A block RAM's pin belongs to port A or B (the letter before its bit number: DIA3,
        # ADB9, WEA); a packed part of a cell (LUT RAM) is named <cell>$<part>.
        side = (cell, pin.rstrip("0123456789")[-1:])
        if side in clock_of:
            return clock_of[side]
        return clock_of.get(cell, clock_of.get(cell.rsplit("$", 1)[0]))

    return [Endpoint(clock(cell, pin), cell, pin,
                     round((arrival[(cell, pin)] + delay) * unit_ns, 4), start[(cell, pin)])
            for (cell, pin), delay in setup.items() if (cell, pin) in arrival]


#: ECP5 cells with a clock, and the clock's port: flip-flops, LUT RAM (whose write port
#: nextpnr splits into cells named ``<cell>$DPRAM_COMB<i>`` / ``<cell>$RAMW_SLICE``) and block
#: RAM (a clock per port: its entries are keyed ``(cell, "A")`` and ``(cell, "B")``).
CLOCKED = {"TRELLIS_FF": "CLK", "TRELLIS_DPR16X4": "WCK", "DP16KD": ("CLKA", "CLKB")}


def clocks_of_flip_flops(netlist_path):
    """``{cell: clock net}`` of the ECP5 flip-flops, LUT RAMs and block RAMs (:data:`CLOCKED`)
    of a yosys JSON netlist. A clock net is named by the top-level port that drives it where there is one
    (the name nextpnr reports the clock by), else by its shortest shown name. Cells are named
    as the SDF names them: yosys writes a name that began with ``$`` in the Verilog it read
    (an escaped identifier) with a leading backslash, which the SDF does not have."""
    design = json.loads(Path(netlist_path).read_text())
    modules = design["modules"]
    top = next((m for m in modules.values() if m.get("attributes", {}).get("top")),
               next(iter(modules.values())))
    ports = set(top.get("ports", {}))

    def rank(name, net):     # lower is better: a port, then a shown name, then a short one
        return (name not in ports, bool(net.get("hide_name", 0)), len(name), name)

    best = {}
    for name, net in top["netnames"].items():
        for bit in net["bits"]:
            if isinstance(bit, int):
                key = rank(name, net)
                if bit not in best or key < best[bit]:
                    best[bit] = key
    clocks = {}
    for cell, spec in top["cells"].items():
        ports = CLOCKED.get(spec["type"])
        for port in (ports,) if isinstance(ports, str) else ports or ():
            bit = spec["connections"].get(port, [None])[0]
            key = cell.removeprefix("\\")
            clocks[key if isinstance(ports, str) else (key, port[-1])] = (
                best[bit][-1] if bit in best else None)
    return clocks


def late_counts(found, period_ns):
    """``{clock: (late, total)}``: endpoints whose arrival exceeds ``period_ns``, and all."""
    counts = {}
    for e in found:
        late, total = counts.get(e.clock, (0, 0))
        counts[e.clock] = (late + (e.arrival_ns > period_ns), total + 1)
    return counts


def register_group(cell):
    """A register cell's name without what synthesis appended for its bits
    (``tvc.avg_nvct_TRELLIS_FF_Q_12`` -> ``tvc.avg_nvct``)."""
    return re.sub(r"_TRELLIS_FF_Q(_\d+)?$", "", cell)


def worst_groups(found, period_ns, limit=10):
    """The late endpoints grouped by launching and capturing register (:func:`register_group`)
    and pin: ``[(start, end, pin, worst_ns, count)]``, worst first, at most ``limit``."""
    groups = {}
    for e in found:
        if e.arrival_ns > period_ns:
            key = (register_group(e.start), register_group(e.cell), e.pin)
            worst, count = groups.get(key, (0.0, 0))
            groups[key] = (max(worst, e.arrival_ns), count + 1)
    ranked = sorted(groups.items(), key=lambda item: -item[1][0])
    return [(s, e, pin, worst, count) for (s, e, pin), (worst, count) in ranked[:limit]]
