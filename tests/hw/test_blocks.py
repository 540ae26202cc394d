"""ahasd.hw.blocks: the Verilog of a block is a function of the design alone."""

import subprocess
import sys

PROBE = """
import hashlib
from ahasd.hw.blocks import make_block, to_verilog
print(hashlib.sha256(to_verilog(make_block("controller"), "controller").encode()).hexdigest())
"""


def test_controller_verilog_is_the_same_under_every_hash_seed():
    # The two-clock controller is the case Amaranth orders by a Python set (see
    # ahasd.hw.blocks._sorted_module_headers); content-keyed build caches depend on this.
    digests = set()
    for seed in ("1", "2", "3"):
        out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                             check=True, env={"PYTHONHASHSEED": seed, "PATH": ""})
        digests.add(out.stdout.strip())
    assert len(digests) == 1
