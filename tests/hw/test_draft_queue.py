"""Unit tests of the unverified-draft queue in Amaranth's simulator (two clocks), scored by the
golden model :class:`ahasd.sim.blocks.queues.SquashQueueModel`. The long runs are in
``test_hw_queues_cocotb.py``."""

import random

import pytest
from amaranth.hdl import Fragment

from ahasd.hw.descriptors import DraftDescriptor as DraftLayout
from ahasd.hw.draft_queue import DraftQueue, epoch_bits_for
from ahasd.sim.blocks.queues import SquashQueueModel
from ahasd.spec.descriptors import DraftDescriptor
from ahasd.tb.amaranth_sim import fields_of, simulate, to_payload

NS = 1e-9


def random_descriptor(rng, serial):
    return DraftDescriptor(batch_id=serial & 0xFFFF, length=rng.randrange(256),
                           kv_base=rng.randrange(1 << 16), mean_entropy=rng.randrange(1 << 16))


def run_two_clocks(dut, *, npu_ns, pim_ns, testbenches, deadline_ns):
    # A phase offset so that the two clocks' edges do not coincide at equal periods.
    simulate(dut, *testbenches, until=deadline_ns * NS,
             clocks={"npu": npu_ns * NS, "pim": (pim_ns * NS, 0.37 * pim_ns * NS)})


def run_scoreboard(*, npu_ns, pim_ns, count, seed, depth=8, p_push=0.7, p_pop=0.7,
                   p_squash=0.01):
    """Random producer / consumer / squash traffic; return (golden, dut_discarded, squashes_seen).

    Pushes respect the stream rule (valid held with a stable payload until ready); every
    delivered descriptor is checked against the golden model as it comes out.
    """
    dut = DraftQueue(depth=depth)
    golden = SquashQueueModel()
    rng = random.Random(seed)
    items = [random_descriptor(rng, i) for i in range(count)]
    done = {"producer": False, "consumer": False}
    seen = {"w_squash": 0}

    async def producer(ctx):
        prng = random.Random(seed + 1)
        index = 0
        valid = False
        while index < count:
            if not valid and prng.random() < p_push:
                valid = True
                ctx.set(dut.i_stream.payload, to_payload(DraftLayout, items[index]))
            ctx.set(dut.i_stream.valid, valid)
            *_, w_squash, ready = await ctx.tick("pim").sample(dut.w_squash, dut.i_stream.ready)
            if w_squash:
                golden.w_squash()
                seen["w_squash"] += 1
            if valid and ready:
                golden.push(items[index])
                index += 1
                valid = False
        ctx.set(dut.i_stream.valid, 0)
        # Keep watching for squash pulses until the consumer has finished.
        while not done["consumer"]:
            *_, w_squash = await ctx.tick("pim").sample(dut.w_squash)
            if w_squash:
                golden.w_squash()
                seen["w_squash"] += 1
        done["producer"] = True

    async def consumer(ctx):
        crng = random.Random(seed + 2)
        squash = False
        idle = 0
        while True:
            draining = golden.pushed == count
            ready = draining or crng.random() < p_pop
            if not squash and not draining and crng.random() < p_squash:
                squash = True
            ctx.set(dut.o_stream.ready, ready)
            ctx.set(dut.squash, squash)
            *_, valid, payload, squash_ready, level = await ctx.tick("npu").sample(
                dut.o_stream.valid, dut.o_stream.payload, dut.squash_ready,
                dut.r_level)
            if valid and ready:
                golden.pop(fields_of(payload, DraftDescriptor))
            if squash and squash_ready:
                golden.squash()
                squash = False
            idle = idle + 1 if draining and level == 0 and not valid else 0
            if idle > 16:  # nothing in flight for longer than the synchronisers' latency
                break
        ctx.set(dut.o_stream.ready, 0)
        done["consumer"] = True

    result = {}

    async def finish(ctx):
        while not done["producer"]:
            await ctx.tick("npu")
        result["discarded"] = ctx.get(dut.discarded)

    run_two_clocks(dut, npu_ns=npu_ns, pim_ns=pim_ns, testbenches=[producer, consumer, finish],
             deadline_ns=count * 40 * max(npu_ns, pim_ns))
    assert done["producer"] and done["consumer"], "simulation deadline reached"
    return golden, result["discarded"], seen["w_squash"]


# (npu period, pim period) in ns: the default 1 GHz / 800 MHz, equal clocks, and either side
# three or 2.3 times faster.
RATIOS = [(1.0, 1.25), (1.0, 1.0), (1.0, 3.0), (3.0, 1.0), (2.3, 1.0), (1.0, 2.3)]


@pytest.mark.parametrize("npu_ns,pim_ns", RATIOS)
def test_random_traffic_with_squashes_matches_golden(npu_ns, pim_ns):
    golden, discarded, w_squashes = run_scoreboard(npu_ns=npu_ns, pim_ns=pim_ns, count=1000,
                                                   seed=int(npu_ns * 10 + pim_ns))
    assert golden.drain() == []          # every live descriptor was delivered
    assert discarded == golden.discarded  # and the RTL counted exactly the predicted stale ones
    assert golden.pushed == 1000
    assert golden.delivered + golden.discarded == golden.pushed
    assert golden.squashes > 3 and w_squashes == golden.squashes
    assert golden.discarded > 0


def test_no_squash_delivers_everything_in_order():
    golden, discarded, _ = run_scoreboard(npu_ns=1.0, pim_ns=1.25, count=600, seed=5,
                                          p_squash=0.0)
    assert golden.delivered == 600 and discarded == 0


def test_squash_storm_with_stalled_consumer_never_wraps_the_epoch():
    # Small queue (4-bit epochs), the consumer rarely ready and squashing often: stale entries sit
    # in the FIFO while many squashes happen; the golden model's unbounded epochs must agree.
    golden, discarded, _ = run_scoreboard(npu_ns=1.0, pim_ns=3.0, count=800, seed=9, depth=4,
                                          p_push=0.9, p_pop=0.05, p_squash=0.5)
    assert golden.drain() == [] and discarded == golden.discarded
    assert golden.squashes > 1 << epoch_bits_for(4)


def test_full_queue_pushes_back_then_delivers_in_order():
    dut = DraftQueue(depth=16)
    items = [DraftDescriptor(batch_id=i, length=i, kv_base=3 * i, mean_entropy=7 * i)
             for i in range(40)]
    accepted = []

    async def producer(ctx):
        for item in items:
            ctx.set(dut.i_stream.payload, to_payload(DraftLayout, item))
            ctx.set(dut.i_stream.valid, 1)
            await ctx.tick("pim").until(dut.i_stream.ready)
            accepted.append(item)
        ctx.set(dut.i_stream.valid, 0)

    async def consumer(ctx):
        await ctx.tick("npu").repeat(200)
        # Stalled for 200 cycles: exactly `depth` descriptors entered, the producer waits.
        assert len(accepted) == 16
        assert ctx.get(dut.w_level) == 16 and ctx.get(dut.i_stream.ready) == 0
        ctx.set(dut.o_stream.ready, 1)
        got = []
        while len(got) < len(items):
            *_, valid, payload = await ctx.tick("npu").sample(dut.o_stream.valid,
                                                             dut.o_stream.payload)
            if valid:
                got.append(fields_of(payload, DraftDescriptor))
        assert got == items

    run_two_clocks(dut, npu_ns=1.0, pim_ns=1.25, testbenches=[producer, consumer], deadline_ns=2000)
    assert len(accepted) == 40


def test_squash_removes_queued_entries_atomically():
    dut = DraftQueue(depth=16)
    first = [DraftDescriptor(batch_id=i, length=1, kv_base=i, mean_entropy=0) for i in range(10)]
    later = [DraftDescriptor(batch_id=100 + i, length=2, kv_base=i, mean_entropy=1)
             for i in range(3)]
    log = {}

    async def producer(ctx):
        for item in first:
            ctx.set(dut.i_stream.payload, to_payload(DraftLayout, item))
            ctx.set(dut.i_stream.valid, 1)
            await ctx.tick("pim").until(dut.i_stream.ready)
        ctx.set(dut.i_stream.valid, 0)
        # Wait for the squash to reach the producer, then push the re-drafted batches.
        cycles = None
        while True:
            *_, w_squash = await ctx.tick("pim").sample(dut.w_squash)
            if "squashed" in log:
                cycles = 1 if cycles is None else cycles + 1
            if w_squash:
                break
        log["squash_to_producer_cycles"] = cycles
        for item in later:
            ctx.set(dut.i_stream.payload, to_payload(DraftLayout, item))
            ctx.set(dut.i_stream.valid, 1)
            await ctx.tick("pim").until(dut.i_stream.ready)
        ctx.set(dut.i_stream.valid, 0)

    async def consumer(ctx):
        # Take two entries, then squash while the other eight are queued.
        await ctx.tick("npu").repeat(40)
        assert ctx.get(dut.r_level) == 10
        ctx.set(dut.o_stream.ready, 1)
        got = []
        while len(got) < 2:
            *_, valid, payload = await ctx.tick("npu").sample(dut.o_stream.valid,
                                                             dut.o_stream.payload)
            if valid:
                got.append(fields_of(payload, DraftDescriptor))
        ctx.set(dut.o_stream.ready, 0)
        assert ctx.get(dut.squash_ready) == 1
        ctx.set(dut.squash, 1)
        await ctx.tick("npu")
        log["squashed"] = True
        ctx.set(dut.squash, 0)
        # From the first cycle after the squash no stale entry is ever offered, even with the
        # consumer not ready; the eight are discarded one per cycle.
        ctx.set(dut.o_stream.ready, 1)
        while len(got) < 5:
            *_, valid, payload = await ctx.tick("npu").sample(dut.o_stream.valid,
                                                             dut.o_stream.payload)
            if valid:
                got.append(fields_of(payload, DraftDescriptor))
        assert got == first[:2] + later
        assert ctx.get(dut.discarded) == 8

    run_two_clocks(dut, npu_ns=1.0, pim_ns=1.25, testbenches=[producer, consumer], deadline_ns=400)
    assert 2 <= log["squash_to_producer_cycles"] <= 5


@pytest.mark.parametrize("depth", [0, 1, 6, 48, "64", True])
def test_bad_depth_is_rejected(depth):
    with pytest.raises(ValueError, match=r"depth must be a power of two >= 2, not"):
        DraftQueue(depth=depth)


def test_same_domains_are_rejected():
    with pytest.raises(ValueError, match=r"w_domain and r_domain must differ, both are 'npu'"):
        DraftQueue(w_domain="npu", r_domain="npu")
    with pytest.raises(ValueError, match=r"r_domain must be a clock domain name, not 'a b'"):
        DraftQueue(r_domain="a b")


def test_epoch_width_follows_depth():
    assert epoch_bits_for(64) == 8 and epoch_bits_for(2) == 3
    dut = DraftQueue(depth=16)
    assert dut.epoch_bits == 6
    Fragment.get(dut, None)  # elaborated, so no "created but never used" warning


@pytest.mark.parametrize("npu_ns,pim_ns", [(1.0, 1.25), (1.0, 3.0)])
def test_discarding_is_the_cycle_before_discarded_steps(npu_ns, pim_ns):
    """``discarding`` is high exactly in the read cycles after which ``discarded`` steps: the
    controller's SQUASH_DISCARDED counts its registered copy instead of comparing ``discarded``
    with its value one cycle earlier. Random traffic with frequent squashes."""
    dut = DraftQueue(depth=4)
    rng = random.Random(int(npu_ns * 10 + pim_ns))
    seen = {"cycles": 0, "discarding": 0, "steps": 0}

    async def producer(ctx):
        prng = random.Random(rng.random())
        serial, valid = 0, False
        while seen["cycles"] < 1500:
            if not valid and prng.random() < 0.7:
                valid = True
                ctx.set(dut.i_stream.payload,
                        to_payload(DraftLayout, random_descriptor(prng, serial)))
            ctx.set(dut.i_stream.valid, valid)
            *_, ready = await ctx.tick("pim").sample(dut.i_stream.ready)
            if valid and ready:
                serial, valid = serial + 1, False

    async def consumer(ctx):
        crng = random.Random(rng.random())
        squash = False
        for _ in range(1500):
            squash = squash or crng.random() < 0.1
            ctx.set(dut.o_stream.ready, crng.random() < 0.3)
            ctx.set(dut.squash, squash)
            *_, squash_ready = await ctx.tick("npu").sample(dut.squash_ready)
            squash = squash and not squash_ready

    async def monitor(ctx):
        before = ctx.get(dut.discarded)
        for _ in range(1500):
            *_, discarding = await ctx.tick("npu").sample(dut.discarding)
            after = ctx.get(dut.discarded)
            assert discarding == (after != before), (seen["cycles"], before, after)
            seen["cycles"] += 1
            seen["discarding"] += discarding
            seen["steps"] += after != before
            before = after

    run_two_clocks(dut, npu_ns=npu_ns, pim_ns=pim_ns, testbenches=[producer, consumer, monitor],
                   deadline_ns=2000 * max(npu_ns, pim_ns))
    assert seen["cycles"] == 1500
    assert seen["discarding"] == seen["steps"] > 20


@pytest.mark.parametrize("seed", range(3))
def test_registered_tag_check_equals_the_comparison_every_cycle(seed):
    """The precomputed ``tag == r_epoch`` register equals the comparison of the read data's
    tag with the epoch in every read cycle (random traffic, squashes, clock ratios, and resets
    of both domains together after squashes moved the epoch off 0)."""
    from amaranth import ClockDomain, Elaboratable, Module, ResetSignal, Signal

    rng = random.Random(f"tag {seed}")
    npu_ns, pim_ns = rng.uniform(3, 12), rng.uniform(3, 12)
    queue = DraftQueue(depth=4)

    class Top(Elaboratable):
        def __init__(self):
            self.rst = Signal()

        def elaborate(self, platform):
            m = Module()
            m.domains.pim, m.domains.npu = ClockDomain("pim"), ClockDomain("npu")
            m.submodules.queue = queue
            m.d.comb += [ResetSignal("pim").eq(self.rst), ResetSignal("npu").eq(self.rst)]
            return m

    top = Top()
    seen = {"cycles": 0, "stale": 0, "resets": 0}

    async def producer(ctx):
        prng = random.Random(f"p {seed}")
        while True:
            ctx.set(queue.i_stream.valid, prng.random() < 0.8)
            ctx.set(queue.i_stream.payload, to_payload(DraftLayout, random_descriptor(prng, 0)))
            await ctx.tick("pim")

    async def consumer(ctx):
        crng = random.Random(f"c {seed}")
        for cycle in range(1500):
            ctx.set(queue.o_stream.ready, crng.random() < 0.5)
            ctx.set(queue.squash, crng.random() < 0.15)
            reset = cycle % 400 == 399
            ctx.set(top.rst, reset)
            seen["resets"] += reset
            *_, register, comparison, stale = await ctx.tick("npu").sample(
                *queue._tag_check, queue.discarding)
            assert register == comparison, cycle
            seen["cycles"] += 1
            seen["stale"] += stale

    simulate(top, consumer, background=[producer],
             clocks={"npu": npu_ns * NS, "pim": (pim_ns * NS, 0.37 * pim_ns * NS)})
    assert seen["stale"] > 10 and seen["resets"] == 3, seen
