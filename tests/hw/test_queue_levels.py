"""The fill levels of all three task queues during traffic, on both sides (fast tier).

Each queue has a write-side and a read-side level (``w_level`` / ``r_level``). With random
pushes and pops in both clock domains, checked at every edge of each side:

* each side counts its own handshakes at most ``OWN_LAG_W`` / ``OWN_LAG_R`` cycles late (the FIFOs register
  their levels) and the other side's at most ``LAG`` of its own cycles late (the synchronisers);
  so the write side never counts a pop it cannot have seen and the read side never a push;
* the read side never offers a descriptor while its level reads 0;
* the levels reach the depth under load (push-back happens) and read the exact fill, 0, at
  rest.
"""

import random

from ahasd.hw.queues import Queues
from ahasd.tb.amaranth_sim import simulate

NS = 1e-9
#: Most cycles of the sampling side by which a level may lag the other side's events
#: (Gray pointer register, two synchroniser stages, and a cycle of the slower clock).
LAG = 6
#: Cycles by which a level may lag its own side's handshakes, besides the edge itself: the
#: write side one (AsyncFIFO registers ``w_level`` from its registered write pointer), the
#: read side none.
OWN_LAG_W, OWN_LAG_R = 1, 0
CYCLES = 3000


def test_levels_of_every_queue_during_traffic():
    dut = Queues(draft_depth=8, feedback_depth=4, preverify_depth=4)
    queues = {  # name: (port, write domain, read domain, depth)
        "draft": (dut.draft, "pim", "npu", 8), "feedback": (dut.feedback, "npu", "pim", 4),
        "preverify": (dut.preverify, "pim", "pim", 4)}
    state = {name: {"pushes": 0, "pops": 0, "push_hist": [], "pop_hist": [], "checks": 0,
                    "full_seen": 0, "own_w": [], "own_r": []} for name in queues}
    done = set()

    def producer(name):
        port, w, _, depth = queues[name]
        st = state[name]

        async def testbench(ctx):
            rng = random.Random(f"{name} producer")
            valid = False
            for cycle in range(CYCLES):
                phase = (cycle // 300) % 3          # bursts: fill up, drain, mixed
                if not valid:
                    valid = rng.random() < (0.9, 0.1, 0.5)[phase]
                ctx.set(port.i_stream.valid, valid)
                *_, level, ready = await ctx.tick(w).sample(port.w_level, port.i_stream.ready)
                pops_now = st["pops"]
                st["pop_hist"].append(pops_now)
                lagged = st["pop_hist"][-1 - LAG] if len(st["pop_hist"]) > LAG else 0
                st["own_w"].append(st["pushes"])
                own_prev = st["own_w"][-1 - OWN_LAG_W] if len(st["own_w"]) > OWN_LAG_W else 0
                assert own_prev - pops_now <= level <= st["pushes"] - lagged, \
                    (name, cycle, level)
                assert level <= depth, (name, cycle, level)
                st["full_seen"] += level == depth
                st["checks"] += 1
                # Count the handshake only after every side has checked this edge (one
                # domain for the pre-verify queue: its consumer samples the same edge).
                await ctx.delay(1e-12)
                if valid and ready:
                    st["pushes"] += 1
                    valid = False
            ctx.set(port.i_stream.valid, 0)
            done.add(f"{name} w")
        return testbench

    def consumer(name):
        port, _, r, _ = queues[name]
        st = state[name]

        async def testbench(ctx):
            rng = random.Random(f"{name} consumer")
            cycle = tail = 0
            while tail < 300:     # until 300 cycles after its producer stopped
                cycle += 1
                tail += f"{name} w" in done
                phase = (cycle // 300) % 3
                ready = bool(tail) or rng.random() < (0.1, 0.9, 0.5)[phase]
                ctx.set(port.o_stream.ready, ready)
                *_, level, valid = await ctx.tick(r).sample(port.r_level, port.o_stream.valid)
                pushes_now = st["pushes"]
                st["push_hist"].append(pushes_now)
                lagged = st["push_hist"][-1 - LAG] if len(st["push_hist"]) > LAG else 0
                st["own_r"].append(st["pops"])
                own_prev = st["own_r"][-1 - OWN_LAG_R] if len(st["own_r"]) > OWN_LAG_R else 0
                assert lagged - st["pops"] <= level <= pushes_now - own_prev, \
                    (name, cycle, level)
                assert level > 0 or not valid, (name, cycle, level)
                await ctx.delay(1e-12)
                if valid and ready:
                    st["pops"] += 1
            done.add(f"{name} r")
        return testbench

    async def at_rest(ctx):
        while len(done) < 2 * len(queues):
            await ctx.tick("pim")
        for name, (port, _, _, _) in queues.items():
            fill = state[name]["pushes"] - state[name]["pops"]
            assert ctx.get(port.w_level) == ctx.get(port.r_level) == fill == 0, name

    benches = [producer(n) for n in queues] + [consumer(n) for n in queues]
    simulate(dut, *benches, at_rest, clocks={"npu": NS, "pim": (1.25 * NS, 0.41 * NS)})
    for name, st in state.items():
        assert st["pushes"] > 300 and st["full_seen"] > 20, (name, st["pushes"], st["full_seen"])
