"""The C firmware (firmware/ahasd_driver.c, ahasd_control.c): strict C11 host build, its unit
tests (tests/firmware/c/test_ahasd_driver.c) under AddressSanitizer + UndefinedBehaviorSanitizer,
and the freestanding 32-bit RISC-V build with its code size."""

import subprocess
from pathlib import Path

from ahasd.firmware.build import elf_sizes, host_build, riscv_build
from ahasd.firmware.driver import EDC_MODES
from ahasd.hw.regmap import load
from ahasd.sim.blocks.gts import State

TEST_MAIN = Path(__file__).parent / "c" / "test_ahasd_driver.c"


def _run_unit_tests(tmp_path, sanitize):
    binary = host_build(tmp_path / "test_driver", [TEST_MAIN], sanitize=sanitize)
    result = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == "", result.stderr      # a sanitizer report goes to stderr
    return result.stdout.splitlines()


def test_unit_tests_clean_under_sanitizers(tmp_path):
    out = _run_unit_tests(tmp_path, sanitize=True)
    assert out[0] == "ok (0 failures)"


def test_unit_tests_optimised(tmp_path):
    assert _run_unit_tests(tmp_path, sanitize=False)[0] == "ok (0 failures)"


def test_c_enums_and_register_list_match_the_python_side(tmp_path):
    out = _run_unit_tests(tmp_path, sanitize=False)
    fields = {line.split()[1]: dict(kv.split("=") for kv in line.split()[2:])
              for line in out if line.startswith("enum ")}
    # The Python driver's modes are checked against the controller in test_driver_runners.py.
    assert fields["EDC_MODE"] == {name.upper(): str(value) for name, value in EDC_MODES.items()}
    assert fields["GTS_STATE"] == {s.name: str(int(s)) for s in State}
    registers = next(line for line in out if line.startswith("registers ")).split()[1:]
    assert [int(a) for a in registers] == sorted(r.address for r in load().registers)


def test_c_defaults_are_the_register_map_s_reset_values(tmp_path):
    """ahasd_config_defaults against the reset values that systemrdl-compiler reads from
    hw/regs.rdl (not the generated header the C code uses)."""
    out = _run_unit_tests(tmp_path, sanitize=False)
    assert out[0] == "ok (0 failures)"
    line = next(line for line in out if line.startswith("defaults "))
    got = {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
    regs = {r.ident: {f.name: f.reset for f in r.fields} for r in load().registers}
    def reset(reg, field):
        return regs[reg][field]
    assert got["edc_mode"] == reset("EDC_CTRL", "mode")
    assert got["freq_ratio"] == reset("TVC_FREQ_RATIO", "ratio")
    assert [got["nvct"], got["pdct"], got["pvct"]] == [
        reset("TVC_NVCT_PRESET", "ratio"), reset("TVC_PDCT_PRESET", "ratio"),
        reset("TVC_PVCT_PRESET", "ratio")]
    assert got["max_len"] == reset("TVC_CTRL", "max_len")
    assert got["tvc_enable"] == 1 - reset("TVC_CTRL", "disable")
    assert got["draft_mask"] == reset("GTS_DRAFT_MASK", "mask")
    assert got["preverify_mask"] == reset("GTS_PREVERIFY_MASK", "mask")


def test_riscv32_freestanding_build(tmp_path):
    objects, image = riscv_build(tmp_path)
    sizes = elf_sizes(image)
    print(f"firmware code size (riscv32, RV32IMC -Os): {sizes}")
    assert sizes["data"] == 0 and sizes["bss"] == 0     # no global state: one ahasd_dev per device
    assert 0 < sizes["text"] < 8192, sizes
    assert sum(elf_sizes(o)["text"] for o in objects) == sizes["text"]
