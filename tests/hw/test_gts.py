"""GTS RTL against the golden model, cycle by cycle: Amaranth's simulator for a short run of each
parameter set, the Verilated block for a long one. The stimulus (``ahasd.sim.traces.gts_events``) is random task
requests held until accepted, random ``done`` and occasional mask writes."""

import pytest

from ahasd.cosim.model import VerilatedModel
from ahasd.hw.blocks import port_list, to_verilog
from ahasd.hw.gts import GTS, GTSState, Task, TaskKind, cfg_layout
from ahasd.sim.blocks import gts as golden
from ahasd.sim.traces.gts_events import gts_stimulus
from ahasd.tb.amaranth_sim import simulate

PARAM_SETS = {
    "default": {},
    "ranks4_custom": {"ranks": 4, "draft_mask": 0b0011, "preverify_mask": 0b1100},
    "ranks2_overlap": {"ranks": 2, "draft_mask": 0b11, "preverify_mask": 0b10},
}

OUTPUTS = ("ready", "state", "rank_en", "switching", "o_valid", "o_kind", "o_length",
           "switch_count", "busy_count", "stall_count")


def expected_tuple(out):
    return (int(out.ready), int(out.state), out.rank_en, int(out.switching), int(out.o_valid),
            out.o_kind if out.o_valid else None, out.o_length if out.o_valid else None,
            out.switch_count, out.busy_count, out.stall_count)


def task_word(task):
    kind, length = task
    return Task.const({"kind": kind, "length": length}).as_bits()


def cfg_word(ranks, cfg):
    draft, preverify = cfg or (0, 0)
    return cfg_layout(ranks).const({"draft_mask": draft, "preverify_mask": preverify}).as_bits()


def test_enums_match_the_golden_model():
    assert {s.name: s.value for s in GTSState} == {s.name: int(s) for s in golden.State}
    assert {k.name: k.value for k in TaskKind} == {k.name: int(k) for k in golden.TaskKind}


@pytest.mark.parametrize("name", list(PARAM_SETS))
def test_rtl_matches_golden_in_amaranth_sim(name):
    params = PARAM_SETS[name]
    dut = GTS(**params)
    inputs, expected, requested, started, model = gts_stimulus(5, 4000, **params)
    assert started == requested[:len(started)] and len(requested) - len(started) <= 1

    async def tb(ctx):
        for n, ((task, done, cfg), out) in enumerate(zip(inputs, expected)):
            ctx.set(dut.i_task.valid, task is not None)
            kind, length = task or (0, 0)
            ctx.set(dut.i_task.payload, {"kind": kind, "length": length})
            ctx.set(dut.done, done)
            ctx.set(dut.cfg.valid, cfg is not None)
            draft, preverify = cfg or (0, 0)
            ctx.set(dut.cfg.payload, {"draft_mask": draft, "preverify_mask": preverify})
            start = ctx.get(dut.o_task.valid)
            task = ctx.get(dut.o_task.payload)
            got = (ctx.get(dut.i_task.ready), ctx.get(dut.state.as_value()), ctx.get(dut.rank_en),
                   ctx.get(dut.switching), start,
                   task.kind.value if start else None, task.length if start else None,
                   ctx.get(dut.switch_count), ctx.get(dut.busy_count), ctx.get(dut.stall_count))
            assert got == expected_tuple(out), f"cycle {n}: RTL {got}, golden {out}"
            await ctx.tick()

    simulate(dut, tb)
    assert model.switch_count > 10 and model.stall_count > 100


@pytest.mark.slow
def test_rtl_matches_golden_verilated_200k_cycles():
    dut = GTS()
    inputs, outputs = port_list(dut)
    model = VerilatedModel(to_verilog(dut, "gts"), "gts", inputs, outputs)
    names = [name for name, _ in outputs]
    stim, expected, requested, started, golden_model = gts_stimulus(11, 200_000)
    rows = []
    for task, done, cfg in stim:
        values = {"i_task__valid": task is not None, "i_task__payload": task_word(task) if task else 0,
                  "done": done, "cfg__valid": cfg is not None,
                  "cfg__payload": cfg_word(dut.params.ranks, cfg)}
        rows.append((0,) + tuple(int(values[name]) for name, _ in inputs))
    results = model.run([(1,) + (0,) * len(inputs)] + rows)[1:]   # one reset cycle first
    assert len(results) == len(expected)
    for n, (row, out) in enumerate(zip(results, expected)):
        r = dict(zip(names, row))
        start = r["o_task__valid"]
        task = Task.from_bits(r["o_task__payload"])
        got = (r["i_task__ready"], r["state"], r["rank_en"], r["switching"], start,
               task.kind.value if start else None, task.length if start else None,
               r["switch_count"], r["busy_count"], r["stall_count"])
        assert got == expected_tuple(out), f"cycle {n}: RTL {got}, golden {out}"
    assert started == requested[:len(started)] and len(requested) - len(started) <= 1
    assert golden_model.switch_count > 1000


def test_bad_parameters_are_rejected():
    with pytest.raises(ValueError, match=r"ranks must be an integer in 2..64, not 1"):
        GTS(ranks=1)
    with pytest.raises(ValueError, match=r"draft_mask must be an integer in 1..15 \(a mask "
                                         r"enabling at least one of 4 ranks\), not 0"):
        GTS(ranks=4, draft_mask=0)
    with pytest.raises(ValueError, match=r"preverify_mask must be an integer in 1..15 \(a mask "
                                         r"enabling at least one of 4 ranks\), not 16"):
        GTS(ranks=4, preverify_mask=16)


def test_verilog_is_lint_clean(tmp_path):
    from ahasd.synth.export import write_verilog
    text = write_verilog("gts", tmp_path).read_text()  # raises VerilatorError on any warning
    for port in ("i_task__ready", "o_task__valid", "rank_en", "switch_count", "busy_count"):
        assert port in text, port
