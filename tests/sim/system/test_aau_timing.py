"""ahasd.sim.system.hardware.AauTiming at the edges: no elements cost no cycles (not even the
base), one element costs one whole 16-lane request, and the units split the vectors."""

from ahasd.sim.system.hardware import AauTiming

T = AauTiming(16, 4, 1e6, {"softmax": (2.0, 1.625), "act": (3.0, 0.5), "norm": (1.0, 4.375)})


def test_no_elements_no_cycles():
    assert T.cycles("softmax", 0) == 0.0 and T.cycles("act", 0) == 0.0
    assert T.cycles("norm", -5) == 0.0


def test_whole_requests_per_unit():
    assert T.cycles("softmax", 1) == 2.0 + 1.625 * 16          # one request on one AAU
    assert T.cycles("softmax", 64) == 2.0 + 1.625 * 16         # one request on each of four
    assert T.cycles("softmax", 65) == 2.0 + 1.625 * 32         # the 65th: a second round
    assert T.cycles("act", 128) == 3.0 + 0.5 * 32
