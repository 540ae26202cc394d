"""Run a cocotb test module against the Verilated Verilog of an Amaranth component.

Used by the ``test_*_cocotb.py`` files: the pytest function builds the RTL with the parameters
under test, calls :func:`run_cocotb`, and the cocotb module (``cocotb_*.py`` beside the calling test
file) runs inside the simulator with the parameters in ``AHASD_PARAMS`` (JSON). A failing cocotb
test fails the pytest test that ran it. Builds go under ``build/cocotb`` of the checkout (the
folder holding ``pyproject.toml`` above the test), one folder per design and parameter set.

With ``AHASD_COVERAGE`` set to a folder (``make coverage``), the designs are built with
Verilator's line and toggle coverage (in build folders of their own) and every run writes its
counts there as ``<top>-<key>-<pid>-<run>.dat``; :mod:`ahasd.synth.coverage` summarises them.

With ``AHASD_WAVES=1`` the designs are built with Verilator's VCD tracing (in build folders of
their own) and each run writes ``build/waves/<test>.vcd``, named after the pytest test that ran it
(``PYTEST_CURRENT_TEST``) or the cocotb module and top; open it with GTKWave (Debian package
``gtkwave``, `apt-get install gtkwave`), see the README.
"""

import hashlib
import inspect
import itertools
import json
import os
import re
import sys
from pathlib import Path

from ahasd.tb.paths import build_root

__all__ = ["COVERAGE_ENV", "WAVES_ENV", "waves_name", "run_cocotb", "params"]

#: Names the folder that collects coverage counts; unset or empty: no coverage.
COVERAGE_ENV = "AHASD_COVERAGE"
#: ``1``: write a VCD per cocotb run under ``build/waves/``.
WAVES_ENV = "AHASD_WAVES"
_RUNS = itertools.count()


def run_cocotb(component, top, test_module, params=None, extra_env=None, testcase=None,
               test_dir=None):
    """Build ``component`` as ``top`` with Verilator (one build folder per parameter set) and run
    the cocotb module ``test_module`` (a module name in ``test_dir``, by default the folder of the
    calling test file)."""
    from cocotb_tools.runner import get_runner

    from ahasd.hw.blocks import to_verilog
    from ahasd.synth.verilator import LINT_WAIVERS, use_tool_env

    if test_dir is None:
        test_dir = Path(inspect.stack()[1].filename).resolve().parent
    test_dir = Path(test_dir)
    use_tool_env()
    params = dict(params or {})
    verilog = to_verilog(component, top)
    coverage = os.environ.get(COVERAGE_ENV, "")
    cov_args = ["--coverage-line", "--coverage-toggle"] if coverage else []
    waves = os.environ.get(WAVES_ENV, "") not in ("", "0")
    key_text = verilog + test_module + " ".join(cov_args) + (" waves" if waves else "")
    key = hashlib.sha256(key_text.encode()).hexdigest()[:12]
    build_dir = build_root(test_dir) / "cocotb" / f"{top}-{key}"
    build_dir.mkdir(parents=True, exist_ok=True)
    source = build_dir / f"{top}.v"
    if not source.exists() or source.read_text() != verilog:
        source.write_text(verilog)
    runner = get_runner("verilator")
    runner.build(sources=[source], hdl_toplevel=top, build_dir=build_dir, always=False,
                 build_args=[f"-Wno-{w}" for w in LINT_WAIVERS] + ["-Wno-fatal"] + cov_args,
                 waves=waves,
                 log_file=build_dir / "build.log")
    env = {"AHASD_PARAMS": json.dumps(params)}
    env.update(extra_env or {})
    log = build_dir / f"test-{os.getpid()}.log"
    plusargs = []
    if coverage:
        out = Path(coverage).resolve()
        out.mkdir(parents=True, exist_ok=True)
        # One file per run: runs of the same build in one process must not overwrite each other.
        run = f"{top}-{key}-{os.getpid()}-{next(_RUNS)}.dat"
        plusargs.append(f"+verilator+coverage+file+{out / run}")
    run_dir = test_dir
    if waves:
        # Each run in a folder of its own (the simulator writes dump.vcd into its working
        # folder); the cocotb module is found through the path the runner passes on.
        name = waves_name(top, test_module)
        run_dir = build_root(test_dir) / "waves" / name
        run_dir.mkdir(parents=True, exist_ok=True)
        if str(test_dir) not in sys.path:
            sys.path.insert(0, str(test_dir))
    try:
        return runner.test(hdl_toplevel=top, test_module=test_module, test_dir=run_dir,
                           build_dir=build_dir, extra_env=env, testcase=testcase,
                           results_xml=str(build_dir / f"results-{os.getpid()}.xml"),
                           log_file=log, plusargs=plusargs, waves=waves)
    except SystemExit as exit:
        # The runner exits on a failed cocotb test; report the failure itself, not SystemExit.
        raise AssertionError(f"cocotb {test_module} failed on {top} (exit {exit.code}); "
                             f"log {log}:\n{_failure_excerpt(log)}") from None
    finally:
        if waves and (run_dir / "dump.vcd").exists():
            (run_dir / "dump.vcd").replace(run_dir.parent / f"{run_dir.name}.vcd")


def waves_name(top, test_module):
    """File name (no suffix) of a run's VCD: the pytest test's node id made a file name
    (``test_edc_cocotb-test_edc_default``), or ``<test_module>-<top>`` outside pytest."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    if current:
        node = current.rsplit(" ", 1)[0]                     # drop " (call)"
        path, _, test = node.partition("::")
        text = f"{Path(path).stem}-{test}"
    else:
        text = f"{test_module}-{top}"
    return re.sub(r"[^\w.-]+", "_", text).strip("_") or top


def _failure_excerpt(log, context=12):
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    hits = [i for i, line in enumerate(lines) if "Error" in line or "FAIL" in line]
    if not hits:
        return "\n".join(lines[-2 * context:])
    first = hits[0]
    return "\n".join(lines[max(0, first - 3):first + 2 * context])


def params():
    """Inside a cocotb module: the parameters passed by :func:`run_cocotb`."""
    return json.loads(os.environ.get("AHASD_PARAMS", "{}"))
