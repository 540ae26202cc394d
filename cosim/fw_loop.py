"""Firmware in the loop: the C firmware and the Verilated controller top in one binary.

:func:`build` compiles the firmware (``firmware/*.c``, strict C11) and links it with the
controller's Verilog, the harness core (``harness.cpp``, C API ``harness.h``, the same core as
:mod:`ahasd.cosim.harness`) and ``fw_loop.cpp``, whose ``main`` reads a scenario of PIM/NPU
operations and firmware calls (protocol at the top of ``fw_loop.cpp``). :func:`run` feeds a
scenario (e.g. from :func:`ahasd.cosim.fw_golden.scenario`) and parses the answers into a
:class:`LoopResult`. Builds are cached by content like the harness's.
"""

import shutil
import subprocess
from dataclasses import dataclass, field
from importlib import resources

from ahasd.cosim.build import SOURCES as HARNESS_SOURCES
from ahasd.cosim.build import cached_build, port_table, verilate
from ahasd.firmware.build import SOURCES as FIRMWARE_SOURCES
from ahasd.firmware.build import STRICT, source_dir

__all__ = ["LoopError", "LoopResult", "build", "run"]

TOP = "controller"
#: The harness core without its text-protocol main (fw_loop.cpp has its own).
CORE = tuple(name for name in HARNESS_SOURCES if name != "harness_main.cpp")


class LoopError(RuntimeError):
    """The firmware-in-the-loop binary failed (the message is its own)."""


@dataclass
class LoopResult:
    """What the loop answered: ``init`` = ``(rc, [(address, data) written])``; per ``service``,
    ``(rc, pending, actions, [(address, data) written])``; per ``snap``, ``(rc, words)``; per
    ``probe``, ``(rc, value)``; and
    the collected streams in order."""
    init: tuple = None
    services: list = field(default_factory=list)
    snaps: list = field(default_factory=list)
    probes: list = field(default_factory=list)
    decisions: list = field(default_factory=list)
    draft_out: list = field(default_factory=list)
    feedback_out: list = field(default_factory=list)
    tasks: list = field(default_factory=list)


def _controller(params):
    from ahasd.hw.blocks import port_list, to_verilog
    from ahasd.hw.controller import Controller
    component = Controller(**params)
    inputs, outputs = port_list(component)
    ports = [(p, 1, True) for p in ("clk", "rst", "npu_clk", "npu_rst")] + \
        [(n, w, True) for n, w in inputs] + [(n, w, False) for n, w in outputs]
    return to_verilog(component, TOP), ports


def build(params):
    """The loop binary for ``Controller(**params)`` (cached by content)."""
    verilog, ports = _controller(params)
    cosim = resources.files("ahasd.cosim")
    fw = source_dir()
    texts = {f"{TOP}.v": verilog, "ports.cpp": port_table(TOP, ports),
             **{name: (cosim / name).read_text() for name in (*CORE, "fw_loop.cpp")},
             **{name: (fw / name).read_text()
                for name in (*FIRMWARE_SOURCES, "ahasd_driver.h", "ahasd_regs.h")}}
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        raise LoopError("no host C compiler (gcc or cc) on PATH for the firmware")

    def make(tmp):
        objects = []
        for name in FIRMWARE_SOURCES:   # C, strict, compiled as C (not as C++ by verilator)
            obj = tmp / name.replace(".c", ".o")
            result = subprocess.run([cc, *STRICT, "-O2", "-c", str(tmp / name), "-o", str(obj)],
                                    capture_output=True, text=True)
            if result.returncode:
                raise LoopError(f"firmware build failed:\n{result.stderr}")
            objects.append(str(obj))
        verilate(tmp, TOP, "fw_loop",
                 [f"{TOP}.v", "ports.cpp", *(name for name in CORE if name.endswith(".cpp")),
                  "fw_loop.cpp", *objects], what="the firmware loop")

    return cached_build("fw_loop", "fw_loop", texts, make)


def _line(op):
    name, *args = op
    if name == "cfg":
        return f"cfg {args[0]} {int(args[1])}"
    return " ".join([name, *(format(int(a), "x") for a in args)])


def run(binary, ops, *, timeout=600):
    """Run the scenario ``ops`` (tuples such as ``("draft", payload, kv, now, pending)``)."""
    text = "".join(_line(op) + "\n" for op in ops)
    proc = subprocess.run([str(binary)], input=text, capture_output=True, text=True,
                          timeout=timeout)
    lines = proc.stdout.splitlines()
    if proc.returncode or not lines or lines[-1] != ".":
        tail = "\n".join(lines[-5:])
        raise LoopError(f"the firmware loop failed ({proc.returncode}): {tail}{proc.stderr}")
    out = LoopResult()
    writes = None
    for line in lines[:-1]:
        kind, *fields = line.split()
        if kind == "init":
            out.init = (int(fields[0]), [])
            writes = out.init[1]
        elif kind == "service":
            out.services.append((int(fields[0]), int(fields[1], 16), int(fields[2], 16), []))
            writes = out.services[-1][3]
        elif kind == "w":
            writes.append((int(fields[0], 16), int(fields[1], 16)))
        elif kind == "probe":
            out.probes.append((int(fields[0]), int(fields[1], 16)))
        elif kind == "snap":
            out.snaps.append((int(fields[0]), [int(f, 16) for f in fields[1:]]))
        elif kind == "decision":
            out.decisions.append(int(fields[0], 16))
        else:
            getattr(out, kind if kind != "task" else "tasks").append(int(fields[0], 16))
    return out
