"""Verilog export of the blocks: the ``.v`` files, their lint and the FuseSoC core.

:func:`block_verilog` writes the Verilog of one block (any constructor parameters) to a file,
through a temporary file renamed into place, so that a failure leaves no truncated file;
:func:`write_verilog` does it for a block's default parameters into a folder and lints it with
``verilator --lint-only -Wall`` and the documented waivers (:data:`ahasd.synth.verilator.LINT_WAIVERS`);
:func:`write_core` writes the FuseSoC core of the files written (:mod:`ahasd.synth.fusesoc`).
``ahasd verilog`` is these three; the area and FPGA flows write their Verilog with
:func:`block_verilog`.
"""

from pathlib import Path

from ahasd.hw.blocks import make_block, to_verilog
from ahasd.spec.files import atomic_write_text
from ahasd.synth import verilator

__all__ = ["block_verilog", "write_verilog", "write_core"]


def block_verilog(name, path, params=None, top=None, platform=None):
    """Write the Verilog of block ``name`` (constructor ``params``; top module ``top``, default
    ``name``; elaborated for ``platform``, :func:`ahasd.hw.blocks.to_verilog`) to ``path``;
    return the path."""
    return atomic_write_text(path, to_verilog(make_block(name, **(params or {})), top or name,
                                              platform))


def write_verilog(name, folder, lint=True, params=None, top=None):
    """Write ``folder/TOP.v`` (module ``top``, default ``name``) for block ``name`` with
    constructor ``params``; lint unless ``lint`` is false. Return the path.

    Raises :class:`ahasd.synth.verilator.VerilatorError` when the lint fails."""
    top = top or name
    path = block_verilog(name, Path(folder) / f"{top}.v", params, top)
    if lint:
        verilator.lint(path, top)
    return path


def write_core(names, folder, generated=None):
    """Write the FuseSoC core describing ``folder/<name>.v`` for ``names`` and the blocks the
    folder's core already lists (:func:`ahasd.synth.fusesoc.core_blocks`); return its path.
    ``generated`` maps a non-default build's name to the text of its parameters (kept for the
    builds an earlier core noted)."""
    import re

    from ahasd.synth.fusesoc import CORE_FILE, core_blocks, core_text  # inspect: slow to import
    path = Path(folder) / CORE_FILE
    noted = {}
    if path.is_file():
        noted = dict(re.findall(r"^  # (\w+): generated with (.*)$",
                                path.read_text(encoding="utf-8", errors="replace"), flags=re.M))
    noted.update(generated or {})
    path.write_text(core_text(core_blocks(folder, names), generated=noted))
    return path
