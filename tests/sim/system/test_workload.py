"""ahasd.sim.system.workload term by term on a small shape, each figure worked out by hand from
the module's rules (weights once, K and V per cached and new token, projections plus attention
MACs, the nonlinear element counts)."""

from types import SimpleNamespace

from ahasd.sim.system.workload import Work, head_work, layer_work, pass_work

SHAPE = SimpleNamespace(layer_params=1000, heads=4, kv_heads=2, hd=8, ffn=64, d_model=32,
                        head_params=500, layers=3)


def test_one_layer():
    # n = 3 new tokens after 10 cached, 2-byte KV elements: K and V of 2 heads x 8 = 64 bytes
    # a token; attention over 13 positions.
    w = layer_work(SHAPE, 3, 10, kv_elem_bytes=2)
    assert w == Work(macs=3 * 1000 + 2 * 4 * 8 * 3 * 13, weight_bytes=1000,
                     kv_read_bytes=640, kv_write_bytes=192, softmax_elems=156,
                     act_elems=192, norm_elems=192)
    assert w.macs == 5496 and w.bytes == 1832 and w.nonlinear_elems == 540


def test_a_draft_step_and_int8_kv():
    w = layer_work(SHAPE, 1, 0)
    assert (w.macs, w.kv_read_bytes, w.kv_write_bytes, w.softmax_elems) == (1064, 0, 32, 4)


def test_the_whole_pass():
    p = pass_work(SHAPE, 3, 10, kv_elem_bytes=2)
    assert p == Work(macs=3 * 5496 + 1500, weight_bytes=3 * 1000 + 500, kv_read_bytes=1920,
                     kv_write_bytes=576, softmax_elems=468, act_elems=576,
                     norm_elems=3 * 192 + 96)
    assert head_work(SHAPE, 2) == Work(macs=1000, weight_bytes=500, norm_elems=64)
    assert Work(1.0, 2.0).scaled(3) == Work(3.0, 6.0)
    assert Work(1.0, 2.0, act_elems=4.0) + Work(0.5, 1.0) == Work(1.5, 3.0, act_elems=4.0)
