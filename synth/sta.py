"""Static timing of the area flow's mapped netlist at 28 nm: the critical path of a block in ns,
its Fmax and where the path starts and ends.

The netlist is ``mapped.json`` of :func:`ahasd.synth.yosys.area_of_verilog` (cells of
``gates.lib``, SRAM macros as ``$mem_v2`` cells, shared modules as hierarchy, flattened here).
Cell delays are the linear model of ``gates.lib`` (``intrinsic + resistance * load``, the
figures and their sources are in the liberty's header and ``docs/implementation.md``):

* **Load** of a net: the input capacitances of the pins it drives plus a wire term of
  ``wire_pf`` per driven pin (a fanout-based wire-load model: :data:`WIRE_PF_PER_FANOUT`). A
  top-level output also drives one flip-flop input outside the block.
* **High fanout.** The area mapping does not buffer nets; a net whose direct drive would be
  slower is timed as driven through an ideal fanout-4 inverter tree (the driver sees four pins,
  then ``ceil(log4(pins / 4))`` inverter levels each driving four pins), which is what buffering
  in synthesis or placement builds. The tree's cells are not added to the area.
* **Start points**: flip-flop outputs (clock-to-Q into their load), SRAM macro read data and
  top-level inputs (both as if a flip-flop of ``gates.lib`` drove them). **End points**:
  flip-flop data and asynchronous reset/set inputs, macro address/data/enable inputs and
  top-level outputs, each with the flip-flop's setup time. So every path is register to register,
  the macros' own access time is not modelled (their ports count as registered, as in the
  delay-oriented depth of the area flow), and clocks are ideal (no skew, no clock tree).
* Paths are timed within a clock domain; a path between two domains is a clock-domain
  crossing (the synchronisers' business) and is not timed.
* Rise and fall are one delay; input slew does not change a delay.

The longest path is a topological sweep over the combinational cells (:func:`analyse`).
"""

import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["WIRE_PF_PER_FANOUT", "TARGET_MHZ", "Library", "read_liberty", "Netlist",
           "read_netlist", "TimingReport", "analyse", "TimingError"]

#: Wire capacitance per driven pin: 0.5 fF, half a unit-inverter input (assumption: a few um of
#: local wire at about 0.2 fF/um per fanout branch; a pre-layout fanout wire-load model).
WIRE_PF_PER_FANOUT = 0.0005
#: The paper's PIM clock, the goal each block is checked against.
TARGET_MHZ = 800.0


class TimingError(ValueError):
    """The netlist or the liberty cannot be timed (unknown cell, combinational loop, ...)."""


# --- liberty -----------------------------------------------------------------------------------

_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([{}();:,])|([^\s{}();:,"]+))')


def _parse_groups(text):
    """The liberty ``text`` as nested ``(name, args, attributes, groups)`` tuples."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S).replace("\\\n", " ")
    tokens = [m.group(1) or m.group(2) or m.group(3) for m in _TOKEN.finditer(text)
              if m.group(0).strip()]
    pos = 0

    def group_body():
        nonlocal pos
        attrs, groups = {}, []
        while pos < len(tokens) and tokens[pos] != "}":
            name = tokens[pos]
            pos += 1
            if tokens[pos] == ":":
                value = tokens[pos + 1].strip('"')
                pos += 2
                if pos < len(tokens) and tokens[pos] == ";":
                    pos += 1
                attrs[name] = value
            elif tokens[pos] == "(":
                args = []
                pos += 1
                while tokens[pos] != ")":
                    if tokens[pos] != ",":
                        args.append(tokens[pos].strip('"'))
                    pos += 1
                pos += 1
                if pos < len(tokens) and tokens[pos] == "{":
                    pos += 1
                    sub_attrs, sub_groups = group_body()
                    pos += 1                                  # "}"
                    groups.append((name, args, sub_attrs, sub_groups))
                elif pos < len(tokens) and tokens[pos] == ";":
                    pos += 1
            else:
                raise TimingError(f"liberty: unexpected {tokens[pos]!r} after {name!r}")
        return attrs, groups
    _, top = group_body()
    return top


@dataclass(frozen=True)
class CellTiming:
    """Timing of one liberty cell (times in ns, capacitances in pF, resistances in kOhm)."""
    name: str
    inputs: dict        # pin -> input capacitance
    outputs: tuple      # output pins
    arcs: dict          # (input pin, output pin) -> (intrinsic, resistance), combinational
    clock: str          # clock pin of a flip-flop, else None
    clock_to_q: dict    # output pin -> (intrinsic, resistance)
    setup: dict         # input pin -> setup (or recovery) time

    @property
    def sequential(self):
        return self.clock is not None


@dataclass(frozen=True)
class Library:
    cells: dict         # name -> CellTiming

    def __getitem__(self, name):
        return self.cells[name]

    def inverter_load(self):
        return self.cells["INV"].inputs["A"]


def read_liberty(path):
    """The cells of liberty ``path`` with their linear-model timing."""
    top = _parse_groups(Path(path).read_text())
    if not top or top[0][0] != "library":
        raise TimingError(f"{path} is not a liberty file")
    cells = {}
    for name, args, _, groups in top[0][3]:
        if name != "cell":
            continue
        inputs, outputs, arcs, cq, setup, clock = {}, [], {}, {}, {}, None
        for kind, pin_args, pin_attrs, pin_groups in groups:
            if kind != "pin":
                continue
            pin = pin_args[0]
            if pin_attrs.get("direction") == "input":
                inputs[pin] = float(pin_attrs.get("capacitance", 0))
                if pin_attrs.get("clock") == "true":
                    clock = pin
            else:
                outputs.append(pin)
            for t_kind, _, t, _ in pin_groups:
                if t_kind != "timing":
                    continue
                kind_of = t.get("timing_type", "combinational")
                delay = max(float(t.get("intrinsic_rise", 0)), float(t.get("intrinsic_fall", 0)))
                res = max(float(t.get("rise_resistance", 0)), float(t.get("fall_resistance", 0)))
                if kind_of in ("setup_rising", "recovery_rising"):
                    setup[pin] = delay
                elif kind_of == "rising_edge":
                    cq[pin] = (delay, res)
                else:
                    arcs[(t["related_pin"], pin)] = (delay, res)
        cells[args[0]] = CellTiming(args[0], inputs, tuple(outputs), arcs, clock, cq, setup)
    if "INV" not in cells or "DFF" not in cells:
        raise TimingError(f"{path} needs an INV and a DFF cell")
    return Library(cells)


# --- netlist -----------------------------------------------------------------------------------

@dataclass
class Netlist:
    """A flattened netlist: nets are integers.

    ``cells`` holds ``(name, type, inputs, outputs)`` with ``[(pin, net)]`` lists (``type`` is
    a liberty cell or ``"$mem_v2"``); ``inputs``/``outputs`` are the top-level port bits as
    ``[(label, net)]``; ``names`` maps a net to a readable name where the netlist has one."""
    cells: list
    inputs: list
    outputs: list
    names: dict
    nets: int


_CLOCK_PORTS = ("RD_CLK", "WR_CLK", "CLK")


def read_netlist(path, top):
    """Flatten module ``top`` of yosys JSON ``path`` into a :class:`Netlist`."""
    design = json.loads(Path(path).read_text())
    modules = design["modules"]
    if top not in modules:
        raise TimingError(f"{path} has no module {top!r}")
    cells, names = [], {}
    counter = [0]

    def fresh():
        counter[0] += 1
        return counter[0]

    def net_of(mapping, bit):
        if isinstance(bit, str):          # constant "0", "1", "x", "z"
            return None
        if bit not in mapping:
            mapping[bit] = fresh()
        return mapping[bit]

    def bit_label(name, i, width):
        return name if width == 1 else f"{name}[{i}]"

    def visit(module_name, prefix, mapping):
        module = modules[module_name]
        # A register that drives a port directly is named by the register, not the port.
        ports = set(module.get("ports", {})) if not prefix else set()
        netnames = sorted(module.get("netnames", {}).items(), key=lambda kv: kv[0] in ports)
        for net_name, net in netnames:
            if net.get("hide_name"):
                continue
            for i, bit in enumerate(net["bits"]):
                n = net_of(mapping, bit)
                if n is None:
                    continue
                # The first name wins, but a name of the RTL beats one Amaranth made up (x$21).
                name = prefix + bit_label(net_name.lstrip("\\"), i, len(net["bits"]))
                if n not in names or ("$" in names[n] and "$" not in name):
                    names[n] = name
        for cell_name, cell in module.get("cells", {}).items():
            kind = cell["type"]
            if kind == "$scopeinfo":
                continue
            label = prefix + cell_name.lstrip("\\")
            if kind in modules and not modules[kind].get("attributes", {}).get("blackbox"):
                sub = modules[kind]
                inner = {}
                for port, conn in cell["connections"].items():
                    for own, outer in zip(sub["ports"][port]["bits"], conn):
                        n = net_of(mapping, outer)
                        if n is None:             # a constant into the instance
                            n = fresh()
                        inner[own] = n
                visit(kind, label + "/", inner)
                continue
            directions = cell.get("port_directions", {})
            ins, outs = [], []
            for port, conn in cell["connections"].items():
                direction = directions.get(port)
                if direction is None:
                    raise TimingError(f"cell {label} ({kind}) has no direction for port {port}")
                for i, bit in enumerate(conn):
                    n = net_of(mapping, bit)
                    pin = port if len(conn) == 1 else f"{port}[{i}]"
                    (outs if direction == "output" else ins).append((pin, n))
            params = cell.get("parameters", {})
            if kind.startswith("$mem"):
                label = prefix + params.get("MEMID", cell_name).lstrip("\\")
            cells.append((label, kind, ins, outs))

    top_map = {}
    visit(top, "", top_map)
    inputs, outputs = [], []
    for port, info in modules[top]["ports"].items():
        for i, bit in enumerate(info["bits"]):
            n = net_of(top_map, bit)
            if n is None:
                continue
            entry = (bit_label(port, i, len(info["bits"])), n)
            (inputs if info["direction"] == "input" else outputs).append(entry)
    return Netlist(cells, inputs, outputs, names, counter[0] + 1)


# --- analysis ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class TimingReport:
    """Critical path of one block (times in ns)."""
    block: str
    critical_ns: float
    fmax_mhz: float
    start: str               # "reg NAME", "input PORT", "sram NAME"
    end: str
    logic_depth: int         # combinational cells on the critical path
    path: list               # [{"cell", "type", "net", "arrival_ns"}] from start to end
    target_mhz: float
    meets_target: bool
    failing_endpoints: int   # end points later than the target period
    endpoints: int
    cells: int
    wire_pf_per_fanout: float
    critical_ns_by_clock: dict   # {clock net: critical path within that domain}

    def as_dict(self):
        return asdict(self)


def _is_clock(kind, pin, cell):
    if kind.startswith("$mem"):
        return pin.split("[")[0] in _CLOCK_PORTS
    return cell is not None and pin == cell.clock


def analyse(netlist, library, *, block="", wire_pf=WIRE_PF_PER_FANOUT, target_mhz=TARGET_MHZ):
    """Longest register-to-register path of ``netlist`` with ``library``'s delays; see the
    module docstring for the model. Paths are timed within each clock domain (a flip-flop's
    domain is the net on its clock pin; top-level ports and asynchronous macro ports belong to
    every domain): a path from one domain into another is a clock-domain crossing, which the
    synchronisers handle, and is not timed. Returns a :class:`TimingReport`."""
    from ahasd.spec.params import check_positive, check_real
    check_positive("target_mhz", target_mhz)
    wire_pf = check_real("wire_pf", wire_pf, 0)
    flop = library["DFF"]
    ((cq_delay, cq_res),) = flop.clock_to_q.values()
    flop_setup = flop.setup["D"]
    flop_cap = flop.inputs["D"]
    size = netlist.nets
    load = [0.0] * size
    comb, starts, ends = [], [], []     # starts: (net, d, r, label, clocks); ends: (net, setup,
    driver = [None] * size              # label, clocks); clocks None: every domain
    for index, (name, kind, ins, outs) in enumerate(netlist.cells):
        cell = None
        if not kind.startswith("$mem"):
            cell = library.cells.get(kind)
            if cell is None:
                raise TimingError(f"cell {name} has type {kind!r}, which is not in the liberty")
        clocks = None
        if cell is None or cell.sequential:
            clocks = frozenset(net for pin, net in ins
                               if net is not None and _is_clock(kind, pin, cell)) or None
        for pin, net in ins:
            if net is None or _is_clock(kind, pin, cell):
                continue
            load[net] += (flop_cap if cell is None else cell.inputs[pin]) + wire_pf
            if cell is None:
                ends.append((net, flop_setup, f"sram {name} {pin}", clocks))
            elif cell.sequential:
                ends.append((net, cell.setup.get(pin, flop_setup), f"reg {name}", clocks))
        for pin, net in outs:
            if net is None:
                continue
            if driver[net] is not None:
                raise TimingError(f"net {netlist.names.get(net, net)} has two drivers "
                                  f"({netlist.cells[driver[net]][0]} and {name})")
            driver[net] = index
            if cell is None:
                starts.append((net, cq_delay, cq_res, f"sram {name} {pin}", clocks))
            elif cell.sequential:
                d, r = cell.clock_to_q[pin]
                starts.append((net, d, r, f"reg {name}", clocks))
        if cell is not None and not cell.sequential:
            comb.append(index)
    for label, net in netlist.outputs:
        load[net] += flop_cap + wire_pf
        ends.append((net, flop_setup, f"output {label}", None))
    for label, net in netlist.inputs:
        if driver[net] is None:
            starts.append((net, cq_delay, cq_res, f"input {label}", None))

    inverter = library["INV"]
    unit = inverter.inputs["A"] + wire_pf            # one driven pin with its wire
    inv_delay, inv_res = inverter.arcs[("A", "Y")]
    level = inv_delay + inv_res * 4 * unit           # an inverter driving four pins

    def drive(res, cap):
        """Load-dependent part of a delay: the direct drive of ``cap``, or, when that is
        faster, an ideal fanout-4 inverter tree in front of it (what synthesis's buffering
        would build): the driver sees four pins, then ceil(log4(pins / 4)) levels."""
        direct = res * cap
        pins = cap / unit
        if pins <= 8:
            return direct
        levels = max(1, math.ceil(math.log(pins / 4, 4) - 1e-9))
        return min(direct, res * 4 * unit + levels * level)

    order = _topological(netlist, comb, driver)
    # Per combinational cell: its output nets with, per input, the arc delay into that load.
    timed_cells = []
    for index in order:
        _, kind, ins, outs = netlist.cells[index]
        cell = library.cells[kind]
        for out_pin, out_net in outs:
            if out_net is None:
                continue
            arcs = []
            for pin, net in ins:
                if net is not None:
                    d, r = cell.arcs[(pin, out_pin)]
                    arcs.append((net, d + drive(r, load[out_net])))
            timed_cells.append((index, out_net, arcs))

    domains = sorted({c for *_, clocks in starts + ends if clocks for c in clocks}) or [None]
    period = 1e3 / target_mhz
    worst, best_path, by_clock, latest = None, None, {}, {}
    for domain in domains:
        def mine(clocks, domain=domain):
            return clocks is None or domain is None or domain in clocks
        arrival = [None] * size
        came_from = [None] * size       # net -> (cell index, input net) of the latest input
        start_of = {}
        for net, d, r, label, clocks in starts:
            if mine(clocks):
                arrival[net] = d + drive(r, load[net])
                start_of[net] = label
        for index, out_net, arcs in timed_cells:
            best, best_in = None, None
            for net, delay in arcs:
                t = arrival[net]
                if t is not None and (best is None or t + delay > best):
                    best, best_in = t + delay, net
            arrival[out_net] = best
            came_from[out_net] = None if best is None else (index, best_in)
        domain_worst = None
        for k, (net, setup, label, clocks) in enumerate(ends):
            if not mine(clocks) or arrival[net] is None:
                continue
            t = arrival[net] + setup
            latest[k] = max(latest.get(k, t), t)
            if domain_worst is None or t > domain_worst[0]:
                domain_worst = (t, net, label)
        if domain_worst is None:
            continue
        name = "-" if domain is None else netlist.names.get(domain, str(domain))
        by_clock[name] = round(domain_worst[0], 4)
        if worst is None or domain_worst[0] > worst[0]:
            worst = domain_worst
            best_path = _trace(netlist, worst[1], arrival, came_from, start_of)
    if worst is None:
        return TimingReport(block, 0.0, None, "-", "-", 0, [], target_mhz, True, 0, 0,
                            len(netlist.cells), wire_pf, {})
    t, end_net, end_label = worst
    path, start_label, start_net = best_path
    return TimingReport(
        block=block, critical_ns=round(t, 4), fmax_mhz=round(1e3 / t, 1),
        start=_readable(start_label, netlist, start_net),
        end=_readable_end(end_label, netlist, end_net),
        logic_depth=len(path) - 1, path=path, target_mhz=target_mhz,
        meets_target=t <= period, failing_endpoints=sum(v > period for v in latest.values()),
        endpoints=len(latest), cells=len(netlist.cells), wire_pf_per_fanout=wire_pf,
        critical_ns_by_clock=by_clock)


def _topological(netlist, comb, driver):
    """The combinational cells in an order where each comes after the drivers of its inputs
    (Kahn's algorithm); a loop is a :class:`TimingError`."""
    comb_driver = set(comb)
    waiting, users = {}, {}
    for index in comb:
        pending = 0
        for _, net in netlist.cells[index][2]:
            if net is not None and driver[net] in comb_driver:
                pending += 1
                users.setdefault(net, []).append(index)
        waiting[index] = pending
    ready = [i for i in comb if waiting[i] == 0]
    order = []
    while ready:
        index = ready.pop()
        order.append(index)
        for _, out_net in netlist.cells[index][3]:
            for user in users.get(out_net, ()):
                waiting[user] -= 1
                if waiting[user] == 0:
                    ready.append(user)
    if len(order) != len(comb):
        stuck = next(netlist.cells[i][0] for i in comb if waiting[i] > 0)
        raise TimingError(f"combinational loop through cell {stuck}")
    return order


def _trace(netlist, net, arrival, came_from, start_of):
    """``(path, start label, start net)`` of the latest arrival at ``net``."""
    path = []
    while came_from[net] is not None:
        index, previous = came_from[net]
        name, kind, _, _ = netlist.cells[index]
        path.append({"cell": name, "type": kind, "net": netlist.names.get(net, str(net)),
                     "arrival_ns": round(arrival[net], 4)})
        net = previous
    path.append({"cell": start_of[net], "type": "start", "net": netlist.names.get(net, str(net)),
                 "arrival_ns": round(arrival[net], 4)})
    path.reverse()
    return path, start_of[net], net


def _readable(label, netlist, net):
    """A start point by the name of the net it drives (a register's name survives mapping;
    its cell's name is yosys's)."""
    if label.startswith("reg ") and net in netlist.names:
        return f"reg {netlist.names[net]}"
    return label


def _readable_end(label, netlist, net):
    if not label.startswith("reg "):
        return label
    # The register an end point belongs to: the name of its flip-flop's output.
    cell_name = label[4:]
    for name, _, _, outs in netlist.cells:
        if name == cell_name:
            for _, q in outs:
                if q in netlist.names:
                    return f"reg {netlist.names[q]}"
    return f"reg {netlist.names.get(net, cell_name)} (D)"
