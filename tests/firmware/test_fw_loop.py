"""Firmware in the loop (cosim/fw_loop.cpp): the C firmware drives the Verilated controller over
AXI4-Lite while the PIM and NPU sides replay a golden-model decode trace on their two clocks.
Every EDC decision, queue transfer, GTS task and service pass, and every register at each
quiescent point, must equal the golden models' (ahasd.cosim.fw_golden)."""

import numpy as np
import pytest

from ahasd.cosim import fw_loop
from ahasd.cosim.fw_golden import Golden, scenario
from ahasd.firmware.c_api import ACTIONS, STATUS, status_name
from ahasd.hw.regmap import load
from ahasd.sim.blocks.edc import EDC
from ahasd.sim.decoding.lookahead import decode
from ahasd.sim.decoding.ngram import load_pair
from ahasd.sim.decoding.policies import SVIPPolicy

# Depth-2 EDC FIFO: with up to four unverified batches, EDC drops pending entries (an event the
# firmware watches). The draft queue is deep enough never to push back.
PARAMS = {"draft_depth": 8, "feedback_depth": 4, "preverify_depth": 4,
          "edc": {"fifo_depth_log2": 1}}
THRESHOLDS = {"draft_q": 3, "feedback_q": 1, "preverify_q": 1, "max_len": 5}


@pytest.fixture(scope="module")
def trace():
    pair = load_pair(max_files=40)
    prompt = pair.tokenizer.encode("def main():\n    ")
    return decode(pair.draft, pair.target, prompt, n_tokens=400, policy=SVIPPolicy(),
                  rng=np.random.default_rng(11), edc=EDC("committed"), max_unverified=4,
                  meta={"edc": "committed", "seed": 11}).records


@pytest.fixture(scope="module")
def binary():
    return fw_loop.build(PARAMS)


def _replay(binary, ops):
    result = fw_loop.run(binary, ops)
    golden = Golden(PARAMS)
    services = iter(result.services)
    for op in ops:
        writes = result.init[1] if op[0] == "init" else \
            next(services)[3] if op[0] == "service" else ()
        golden.op(op, writes)
    assert result.init[0] == 0
    assert result.decisions == golden.decisions
    assert result.draft_out == golden.draft_out
    assert result.feedback_out == golden.feedback_out
    assert result.tasks == golden.tasks
    assert [s[1] for s in result.services] == golden.pending
    regmap = load()
    compared = 0
    for k, ((rc, words), expected) in enumerate(zip(result.snaps, golden.snaps, strict=True)):
        assert rc == 0, f"snapshot {k}: {status_name(rc)}"
        for reg in regmap.registers:
            got, want = words[reg.address // 4], expected[reg.address // 4]
            assert got == want, f"snapshot {k}: {reg.ident} 0x{got:08X}, golden 0x{want:08X}"
            compared += 1
    counts = {"decisions": len(golden.decisions), "stops": golden.decisions.count(0),
              "draft transfers": len(golden.draft_out), "squashed": len(golden.discarded),
              "results": len(golden.feedback_out),
              "draft tasks": sum(1 for t in golden.tasks if not t & 1),
              "withheld requests": golden.withheld,
              "pre-verify tasks": sum(t & 1 for t in golden.tasks), "services": len(result.services),
              "interrupts": sum(map(bool, golden.pending)), "snapshots": len(result.snaps),
              "registers compared": compared}
    print(counts)
    return result, golden, counts


@pytest.mark.slow
def test_firmware_in_the_loop_matches_the_golden_models(binary, trace):
    ops = scenario(trace, fault_every=7, config=THRESHOLDS)
    result, golden, counts = _replay(binary, ops)
    assert counts["stops"] > 5 and counts["pre-verify tasks"] > 3 and counts["snapshots"] > 5
    assert counts["squashed"] > 10 and counts["withheld requests"] > 3
    actions = 0
    for rc, _, act, _ in result.services:
        assert rc == 0
        actions |= act
    for name in ("EDC_STOP", "TVC_INSERT", "TVC_ERROR", "EDC_DROP"):
        assert actions & ACTIONS[name], name
    assert golden.edc.fifo_drops > 0 and golden.tvc.error_count > 0


@pytest.mark.slow
def test_firmware_limit_actions_in_the_loop(binary, trace):
    """With limits, the firmware disables TVC after its record errors and overrides EDC after
    its FIFO drops; the golden side follows those writes, and the decisions after them."""
    config = {**THRESHOLDS, "tvc_error_limit": 2, "edc_drop_limit": 25}
    result, golden, _ = _replay(binary, scenario(trace, fault_every=5, config=config))
    codes = [rc for rc, *_ in result.services if rc]
    assert sorted(codes) == sorted([STATUS["AHASD_ERR_TVC_RECORD"], STATUS["AHASD_ERR_EDC_DROPS"]])
    assert golden.field("EDC_CTRL", "mode") == 1 and golden.field("TVC_CTRL", "disable") == 1


@pytest.mark.slow
def test_firmware_sees_bus_errors_on_the_real_bus(binary):
    """The firmware's accessor reports the AXI4-Lite SLVERR of a hole, and an address the bus
    cannot carry, as AHASD_ERR_BUS (the harness refuses the transfer), without stopping."""
    regmap = load()
    hole = next(a for a in range(0, 256, 4) if regmap.at(a) is None)
    ops = [("init",), ("probe", hole), ("probe", 0x100), ("probe", regmap["ID"].address)]
    result = fw_loop.run(binary, ops)
    assert result.probes == [(STATUS["AHASD_ERR_BUS"], 0), (STATUS["AHASD_ERR_BUS"], 0),
                             (0, regmap["ID"].field("magic").reset)]
