"""Build the C firmware (``ahasd_driver.c``, ``ahasd_control.c``): host test programs and a
freestanding 32-bit RISC-V object set with its code size.

The firmware is C11 and must compile with :data:`STRICT` everywhere. Host builds use the system
``gcc`` (tests add AddressSanitizer / UndefinedBehaviorSanitizer); the RISC-V build uses
``zig cc`` from the PyPI ``ziglang`` package (``-target riscv32-freestanding``), so no cross
toolchain needs installing. ``python -m ahasd.firmware.build [OUT]`` builds the RISC-V objects and
prints their section sizes.
"""

import shutil
import struct
import subprocess
import sys
from importlib import resources
from pathlib import Path

__all__ = ["SOURCES", "STRICT", "SANITIZE", "BuildError", "source_dir", "host_build",
           "riscv_build", "elf_sizes", "main"]

#: The firmware's translation units.
SOURCES = ("ahasd_driver.c", "ahasd_control.c")
#: Warnings that every build of the firmware passes.
STRICT = ("-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic")
SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-O1")
RISCV = ("-target", "riscv32-freestanding", "-mcpu=generic_rv32+m+c", "-Os", "-ffreestanding")

#: A freestanding C11 implementation need not provide <assert.h>; the generated header includes
#: it only for static_assert, so the freestanding build gets this one (written into its folder).
_FREESTANDING_ASSERT = ("/* <assert.h> for the freestanding build: static_assert only. */\n"
                        "#define static_assert _Static_assert\n")


class BuildError(RuntimeError):
    """A compiler failed; the message holds its command and output."""


def source_dir():
    """The folder holding the firmware sources and the generated ``ahasd_regs.h``."""
    return Path(str(resources.files("ahasd.firmware")))


def _run(cmd):
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError(f"{' '.join(str(c) for c in cmd)} failed ({result.returncode}):\n"
                         f"{result.stdout}{result.stderr}")
    return result


def host_build(out, extra_sources=(), *, sanitize=True, cc=None, defines=()):
    """Compile the firmware with ``extra_sources`` (e.g. a test ``main``) for the host; return
    the binary's path."""
    cc = cc or shutil.which("gcc") or shutil.which("cc")
    if not cc:
        raise BuildError("no host C compiler (gcc or cc) on PATH")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    src = source_dir()
    cmd = [cc, *STRICT, *(SANITIZE if sanitize else ("-O2",)), *(f"-D{d}" for d in defines),
           f"-I{src}", *(src / s for s in SOURCES), *extra_sources, "-o", out]
    _run(cmd)
    return out


def riscv_build(folder):
    """Compile each firmware source freestanding for RV32IMC and link them without any library
    (so a call the firmware does not define itself, such as a compiler-made ``memcpy``, fails the
    build); return ``(object paths, linked image path)``."""
    folder = Path(folder)
    (folder / "include").mkdir(parents=True, exist_ok=True)
    (folder / "include" / "assert.h").write_text(_FREESTANDING_ASSERT)
    src = source_dir()
    objects = []
    for name in SOURCES:
        obj = folder / name.replace(".c", ".o")
        _run([sys.executable, "-m", "ziglang", "cc", *RISCV, *STRICT, f"-I{src}",
              "-isystem", folder / "include", "-c", src / name, "-o", obj])
        objects.append(obj)
    image = folder / "ahasd_fw.elf"
    _run([sys.executable, "-m", "ziglang", "cc", *RISCV[:2], "-nostdlib", "-Wl,-e,0", *objects,
          "-o", image])
    return objects, image


def elf_sizes(path):
    """``{"text", "rodata", "data", "bss"}`` bytes of the allocated sections of a 32-bit ELF
    file (read from its section headers)."""
    blob = Path(path).read_bytes()
    if blob[:4] != b"\x7fELF" or blob[4] != 1:
        raise BuildError(f"{path} is not a 32-bit ELF file")
    endian = "<" if blob[5] == 1 else ">"
    shoff, = struct.unpack_from(endian + "I", blob, 0x20)
    shentsize, shnum = struct.unpack_from(endian + "HH", blob, 0x2E)
    headers = [struct.unpack_from(endian + "IIIIIIIIII", blob, shoff + i * shentsize)
               for i in range(shnum)]
    sizes = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    SHF_ALLOC, SHF_WRITE, SHF_EXEC, SHT_NOBITS = 0x2, 0x1, 0x4, 8
    for _, kind, flags, _, _, size, *_ in headers:  # the flags classify a section
        if not flags & SHF_ALLOC or size == 0:
            continue
        if kind == SHT_NOBITS:
            sizes["bss"] += size
        elif flags & SHF_EXEC:
            sizes["text"] += size
        elif flags & SHF_WRITE:
            sizes["data"] += size
        else:
            sizes["rodata"] += size
    return sizes


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    folder = Path(argv[0] if argv else "build/firmware-riscv32")
    total = ("text", "rodata", "data", "bss")
    print(f"{'riscv32 (RV32IMC, -Os)':28} {'text':>6} {'rodata':>6} {'data':>6} {'bss':>6}")
    objects, image = riscv_build(folder)
    for path in (*objects, image):
        sizes = elf_sizes(path)
        print(f"{path.name:28} " + " ".join(f"{sizes[k]:6d}" for k in total))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
