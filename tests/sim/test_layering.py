"""ahasd.sim is pure Python: importing every module under it imports nothing of the RTL side."""

import subprocess
import sys

FORBIDDEN = ("amaranth", "cocotb", "cocotb_tools", "ahasd.hw", "ahasd.synth", "ahasd.cosim",
             "ahasd.tb", "ahasd.bench", "ahasd.commands")

PROBE = f"""
import importlib, pkgutil, sys
import ahasd.sim
names = [m.name for m in pkgutil.walk_packages(ahasd.sim.__path__, "ahasd.sim.")]
for name in names:
    importlib.import_module(name)
bad = sorted(k for k in sys.modules if k.split(".")[0] in {FORBIDDEN!r} or k.startswith({FORBIDDEN!r}))
print(len(names))
print(",".join(bad))
"""


def test_sim_imports_nothing_of_the_rtl_side():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    count, bad = out.stdout.splitlines()
    assert int(count) >= 20, "the walk found too few modules: is ahasd.sim installed?"
    assert bad == "", f"ahasd.sim pulled in: {bad}"
