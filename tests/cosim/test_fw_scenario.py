"""ahasd.cosim.fw_golden.scenario on the hand-written tiny trace: each draft becomes a GTS
request, the descriptor (its batch id, length, the KV length of the last verification and mean
entropy) and a PDCT record; a faulty PVCT record follows every ``fault_every``-th draft; a
rejection with batches drafted on top squashes them; every step is followed by a service."""

from ahasd.cosim.fw_golden import scenario
from ahasd.spec.descriptors import DraftDescriptor
from ahasd.tb.trace_examples import tiny_trace


def test_the_tiny_trace_as_operations():
    ops = scenario(tiny_trace(), fault_every=2, snap_every=1000)
    kinds = [op[0] for op in ops if op[0] != "service"]
    assert kinds == ["init",
                     "request", "draft", "record",                 # batch 0
                     "request", "draft", "record", "record",       # batch 1, then the fault
                     "verify", "hsquash",                          # batch 0 rejected
                     "request", "draft", "record",                 # batch 3
                     "verify", "snap"]
    drafts = [DraftDescriptor.unpack(op[1]) for op in ops if op[0] == "draft"]
    assert [(d.batch_id, d.length, d.kv_base) for d in drafts] == [(0, 2, 2), (1, 1, 2),
                                                                   (3, 1, 2)]
    records = [op for op in ops if op[0] == "record"]
    assert [r[3] for r in records] == [2, 1, 0, 1]      # the fault: 100 cycles, 0 tokens
    assert records[2][2] == 100
    assert [op[0] for op in ops].count("service") == 13
