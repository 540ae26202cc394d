"""The EDC and TVC replays on the harness: the same decisions as the golden models, cycle for cycle
the same figures as the Python port driver (ahasd.tb.tvc_driver.drive) stepping the Verilated
block one cycle per round trip, for any iterable of events and across batch boundaries."""

from dataclasses import asdict

import pytest

import ahasd.cosim.edc as cosim_edc
import ahasd.cosim.tvc as cosim_tvc
from ahasd.bench.edc import event_stream
from ahasd.cosim.edc import VerilatedEDC
from ahasd.cosim.model import VerilatedModel
from ahasd.cosim.tvc import iter_replay_rtl, replay_rtl
from ahasd.hw.blocks import port_list, to_verilog
from ahasd.hw.tvc import TVC
from ahasd.sim.blocks.edc import EDC, entropy_to_fx, score_events
from ahasd.sim.blocks.tvc import TVC as GoldenTVC
from ahasd.sim.blocks.tvc import TVCParams
from ahasd.sim.traces.tvc import apply, boundary_trace, random_trace, realistic_trace
from ahasd.tb.tvc_driver import drive

FIGURES = ("decisions", "cycles", "decision_latency", "record_latency", "decide_wait")


def stepped(ops, params, presets):
    """The reference: drive() one cycle per round trip on VerilatedModel.step."""
    dut = TVC(**asdict(params))
    inputs, outputs = port_list(dut)
    names_in, names_out = [n for n, _ in inputs], [n for n, _ in outputs]
    gen = drive(ops, params, presets=presets)
    with VerilatedModel(to_verilog(dut, "tvc"), "tvc", inputs, outputs) as model:
        values = next(gen)
        model.step((1,) + tuple(values.get(n, 0) for n in names_in))
        try:
            while True:
                sampled = model.step((0,) + tuple(values.get(n, 0) for n in names_in))
                values = gen.send(dict(zip(names_out, sampled)))
        except StopIteration as stop:
            return stop.value


@pytest.mark.parametrize("generator", [realistic_trace, random_trace, boundary_trace])
@pytest.mark.parametrize("chunk, stride", [(7, 3), (32768, 2048)])
def test_tvc_replay_matches_the_stepped_driver(monkeypatch, generator, chunk, stride):
    monkeypatch.setattr(cosim_tvc, "CHUNK", chunk)
    monkeypatch.setattr(cosim_tvc, "STRIDE", stride)
    params = TVCParams()
    ops = generator(120, seed=3, params=params)
    presets = {"nvct": 300, "pvct": 5000}
    want = stepped(ops, params, presets)
    got = replay_rtl(iter(ops), params, presets=presets)     # any iterable
    assert {f: getattr(got, f) for f in FIGURES} == {f: getattr(want, f) for f in FIGURES}
    golden = GoldenTVC(presets=presets)
    assert got.decisions == [d for d in (apply(golden, i) for i in ops) if d is not None]
    assert got.final["error_count"] == golden.error_count
    assert all(got.final[f"average__{t}"] == golden.average(t) for t in ("nvct", "pdct", "pvct"))


def test_tvc_streaming_replay_yields_the_same_decisions_batch_by_batch(monkeypatch):
    """``iter_replay_rtl`` (what ``ahasd tvc replay --rtl`` runs, in bounded memory) yields, over
    many small batches, exactly the decisions ``replay_rtl`` keeps."""
    monkeypatch.setattr(cosim_tvc, "CHUNK", 50)
    monkeypatch.setattr(cosim_tvc, "STRIDE", 16)
    params = TVCParams()
    ops = realistic_trace(400, seed=5, params=params)
    consumed = []
    stream = iter_replay_rtl((consumed.append(1) or op for op in ops), params)
    first = next(stream)
    assert len(consumed) < len(ops) / 2      # yielded before the whole trace was read
    assert [first, *stream] == replay_rtl(ops, params).decisions
    assert len(replay_rtl(ops, params).decisions) > 100


def test_tvc_replay_names_a_transaction_it_does_not_know():
    with pytest.raises(ValueError, match=r"unknown TVC transaction 'flush'"):
        replay_rtl([{"op": "flush"}])


def test_edc_replay_across_batches_and_closed_loop_steps(monkeypatch):
    monkeypatch.setattr(cosim_edc, "CHUNK", 333)
    monkeypatch.setattr(cosim_edc, "STRIDE", 50)
    events = event_stream(3000, seed=4)
    golden, _ = score_events(EDC(), events)
    rtl = VerilatedEDC()
    assert rtl.run_events(e for e in events) == golden        # a generator, in 10 batches
    consumed = []
    stream = rtl.iter_events(consumed.append(1) or e for e in events)
    assert next(stream) == golden[0] and len(consumed) < len(events) / 2   # batch by batch
    assert [golden[0], *stream] == golden
    assert rtl.simulator_cpu_s > 0
    model = EDC()
    for n, (op, value) in enumerate(events[:400]):
        draft, verify = (value, None) if op == "draft" else (None, value)
        draft_fx = None if draft is None else entropy_to_fx(draft)
        if n % 7 == 0 and draft_fx is not None:
            verify = n % 2 == 0        # a verify and a draft in the same cycle: verify first
        assert rtl.step(draft_fx, verify) == model.step(draft_fx, verify), f"event {n}"
    with pytest.raises(ValueError, match=r"unknown EDC event 'squash'"):
        rtl.run_events([("squash", 1)])
    rtl.close()

