"""cocotb + Verilator tier of the task queues: the Queues block with two clocks, random stalls on
both sides and random squashes, scored against the golden models. ``make test`` moves 50k
descriptors per queue at the default 1 GHz / 800 MHz and 10k per queue at four other clock ratios
(both sides faster); ``make regress`` moves 1M per queue at the default ratio, with the PIM side
faster (1 GHz PIM / 588 MHz NPU) and with it much slower (323 MHz PIM / 1 GHz NPU), and prints
what each run moved (the regression summary of ``tests/conftest.py``)."""

import json

import pytest

from ahasd.hw.queues import Queues
from ahasd.spec.clocks import NPU_PERIOD_PS, PIM_PERIOD_PS
from ahasd.tb.cocotb_run import run_cocotb

#: (NPU period, PIM period) in ps.
DEFAULT = (NPU_PERIOD_PS, PIM_PERIOD_PS)
OTHER_RATIOS = [(1000, 1000), (1000, 3100), (3100, 1000), (1700, 1000)]
#: The 1M regression: the default ratio, the PIM side faster, the PIM side much slower.
REGRESS_RATIOS = [DEFAULT, (1700, 1000), (1000, 3100)]


def run(npu_ps, pim_ps, count, seed, summary=None):
    run_cocotb(Queues(), "queues", "cocotb_queues",
               params={"npu_ps": npu_ps, "pim_ps": pim_ps, "count": count, "seed": seed,
                       "draft_depth": 64, "preverify_depth": 16, "p_squash": 0.002,
                       "phase_cycles": 1500, "max_pim_cycles": 40 * count + 10_000,
                       "summary": str(summary) if summary else ""})


@pytest.mark.cocotb
def test_queues_scoreboard_50k_default_clocks():
    run(*DEFAULT, count=50_000, seed=1)


@pytest.mark.cocotb
@pytest.mark.parametrize("npu_ps,pim_ps", OTHER_RATIOS)
def test_queues_scoreboard_other_clock_ratios(npu_ps, pim_ps):
    run(npu_ps, pim_ps, count=10_000, seed=npu_ps + pim_ps)


@pytest.mark.cocotb
@pytest.mark.regress
@pytest.mark.parametrize("npu_ps,pim_ps", REGRESS_RATIOS)
def test_queues_scoreboard_1m(npu_ps, pim_ps, tmp_path, record_property):
    summary = tmp_path / "summary.json"
    run(npu_ps, pim_ps, count=1_000_000, seed=2 + npu_ps + pim_ps, summary=summary)
    done = json.loads(summary.read_text())
    record_property("regress_summary", (
        f"queues NPU {npu_ps} ps / PIM {pim_ps} ps: {done['descriptors']:,} descriptors "
        f"(draft {done['draft_delivered']:,} delivered + {done['draft_discarded']:,} squashed "
        f"in {done['squashes']:,} squashes, feedback {done['feedback']:,}, pre-verify "
        f"{done['preverify']:,}) in {done['pim_cycles']:,} PIM / {done['npu_cycles']:,} NPU "
        f"cycles, push-backs {done['pushbacks']}"))
