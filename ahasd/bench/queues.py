"""``ahasd bench queues``: measured throughput and latency of the task queues and of the GTS
switch, from the RTL in Amaranth's simulator.

Queues: each queue of the :class:`~ahasd.hw.queues.Queues` block moves a run of descriptors with
an always-valid producer and an always-ready consumer (no stalls); the figures are descriptors per
write-clock and per read-clock cycle over the steady part of the run, and the first descriptor's
push-to-pop latency. Two clock settings: the default NPU 1 GHz / PIM 800 MHz and the reverse.
Squash: PIM cycles until the producer sees a squash, NPU cycles until the next squash is accepted.
GTS: cycles from an accepted request to the new rank-enable mask. Everything printed is measured.
"""

from ahasd.tables import print_table

__all__ = ["bench", "queue_throughput", "squash_latency", "gts_switch_latency", "print_figures"]

NS = 1e-9
#: (name, producer domain, consumer domain) of each queue in the Queues block.
QUEUES = [("draft", "pim", "npu"), ("feedback", "npu", "pim"), ("preverify", "pim", "pim")]


def queue_throughput(name, *, count, npu_ns, pim_ns):
    """Push ``count`` descriptors through queue ``name`` without stalls; return figures."""
    from amaranth.sim import Simulator

    from ahasd.hw.queues import Queues

    dut = Queues()
    port = getattr(dut, name)
    w_domain, r_domain = next((w, r) for n, w, r in QUEUES if n == name)
    period = {"npu": npu_ns, "pim": pim_ns}
    pushes, pops = [], []
    width = len(port.i_stream.payload.as_value())

    async def producer(ctx):
        cycle = 0
        ctx.set(port.i_stream.valid, 1)
        while len(pushes) < count:
            ctx.set(port.i_stream.payload.as_value(), len(pushes) % (1 << width))
            *_, ready = await ctx.tick(w_domain).sample(port.i_stream.ready)
            cycle += 1
            if ready:
                pushes.append(cycle)
        ctx.set(port.i_stream.valid, 0)

    async def consumer(ctx):
        cycle = 0
        ctx.set(port.o_stream.ready, 1)
        while len(pops) < count:
            *_, valid, payload = await ctx.tick(r_domain).sample(
                port.o_stream.valid, port.o_stream.payload.as_value())
            cycle += 1
            if valid:
                if payload != len(pops) % (1 << width):
                    raise AssertionError(f"{name}: descriptor {len(pops)} came out as {payload}")
                pops.append(cycle)

    sim = Simulator(dut)
    sim.add_clock(npu_ns * NS, domain="npu")
    sim.add_clock(pim_ns * NS, domain="pim")
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.run_until((count + 100) * 4 * max(npu_ns, pim_ns) * NS)
    if len(pops) < count:
        raise RuntimeError(f"{name}: only {len(pops)} of {count} descriptors came out")
    # Throughput is what comes out: descriptors delivered per ns over the steady part of the run
    # (the first quarter skipped: synchroniser latency, pipeline fill), then per cycle of each
    # clock. (The push rate alone would overstate a slow consumer while the FIFO fills.)
    skip = count // 4
    per_ns = (count - 1 - skip) / ((pops[-1] - pops[skip]) * period[r_domain])
    first_ns = pops[0] * period[r_domain] - pushes[0] * period[w_domain]
    return {"write_domain": w_domain, "read_domain": r_domain,
            "per_write_cycle": per_ns * period[w_domain],
            "per_read_cycle": per_ns * period[r_domain], "per_ns": per_ns,
            "first_latency_ns": first_ns,
            "first_latency_read_cycles": first_ns / period[r_domain]}


def squash_latency(*, npu_ns, pim_ns):
    """PIM cycles from an accepted squash to ``w_squash``; NPU cycles until ``squash_ready``."""
    from amaranth.sim import Simulator

    from ahasd.hw.draft_queue import DraftQueue

    dut = DraftQueue()
    out = {}

    async def npu(ctx):
        await ctx.tick("npu").repeat(5)
        ctx.set(dut.squash, 1)
        await ctx.tick("npu")
        out["issued"] = True
        ctx.set(dut.squash, 0)
        cycles = 0
        while True:
            *_, ready = await ctx.tick("npu").sample(dut.squash_ready)
            cycles += 1
            if ready:
                break
        out["npu_cycles_to_next_squash"] = cycles

    async def pim(ctx):
        cycles = 0
        while True:
            *_, pulse = await ctx.tick("pim").sample(dut.w_squash)
            if out.get("issued"):
                cycles += 1
            if pulse:
                break
        out["pim_cycles_to_producer"] = cycles

    sim = Simulator(dut)
    sim.add_clock(npu_ns * NS, domain="npu")
    sim.add_clock(pim_ns * NS, domain="pim", phase=0.3 * pim_ns * NS)
    sim.add_testbench(npu)
    sim.add_testbench(pim)
    sim.run_until(200 * max(npu_ns, pim_ns) * NS)
    return {k: v for k, v in out.items() if k != "issued"}


def gts_switch_latency():
    """Cycles from the edge that accepts a task to the new ``rank_en`` (from IDLE, and back to
    back at ``done`` with a change of mode), and the cycles a request offered in a switch cycle
    waits."""
    from amaranth.sim import Simulator

    from ahasd.hw.gts import GTS, TaskKind

    dut = GTS()
    out = {}

    async def wait_mask(ctx, mask):
        cycles = 0
        while ctx.get(dut.rank_en) != mask:
            await ctx.tick()
            cycles += 1
        return cycles

    async def offer(ctx, kind, done=False):
        ctx.set(dut.i_task.payload.kind, kind)
        ctx.set(dut.i_task.payload.length, 4)
        ctx.set(dut.i_task.valid, 1)
        ctx.set(dut.done, done)
        waited = 0
        while not ctx.get(dut.i_task.ready):
            await ctx.tick()
            waited += 1
        await ctx.tick()            # the accepting edge
        ctx.set(dut.i_task.valid, 0)
        ctx.set(dut.done, 0)
        return waited

    async def tb(ctx):
        draft, pre = ctx.get(dut.draft_mask), ctx.get(dut.preverify_mask)
        await offer(ctx, TaskKind.DRAFT)
        out["idle_to_draft_cycles"] = 1 + await wait_mask(ctx, draft)
        await ctx.tick().repeat(3)
        await offer(ctx, TaskKind.PREVERIFY, done=True)
        out["draft_to_preverify_cycles"] = 1 + await wait_mask(ctx, pre)
        # A request offered together with `done` in the switch cycle waits for the next cycle.
        ctx.set(dut.done, 1)
        out["request_in_switch_cycle_waits"] = await offer(ctx, TaskKind.DRAFT, done=True)
        out["switches"] = ctx.get(dut.switch_count)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
    return out


def bench(json_output=False, quick=False):
    count = 400 if quick else 4000
    figures = {"descriptors": count, "clocks": {}}
    for label, npu_ns, pim_ns in [("1000/800", 1.0, 1.25), ("800/1000", 1.25, 1.0)]:
        figures["clocks"][label] = {
            "queues": {name: queue_throughput(name, count=count, npu_ns=npu_ns, pim_ns=pim_ns)
                       for name, _, _ in QUEUES},
            "squash": squash_latency(npu_ns=npu_ns, pim_ns=pim_ns),
        }
    figures["gts"] = gts_switch_latency()
    if not json_output:
        print_figures(figures)
    return figures


def print_figures(figures, console=None):
    """The queue bench's two tables (``figures`` as :func:`bench` returns them)."""
    rows = [(label, name, f"{q['per_write_cycle']:.3f}", f"{q['per_read_cycle']:.3f}", f"{q['per_ns']:.3f}",
             f"{q['first_latency_ns']:.2f}", f"{q['first_latency_read_cycles']:.2f}")
            for label, data in figures["clocks"].items() for name, q in data["queues"].items()]
    print_table(f"Task queues without stalls: descriptors per write-clock, read-clock cycle and ns; first "
                f"push-to-pop latency ({figures['descriptors']:,} descriptors each; clocks npu/pim in MHz; "
                f"draft pim->npu, feedback npu->pim, preverify pim)",
                ("npu/pim [MHz]", "queue", "rate [/w-clk]", "rate [/r-clk]", "rate [/ns]", "latency [ns]",
                 "latency [r-clk]"), rows, console=console, left=("npu/pim [MHz]", "queue"))
    rows = []
    for label, data in figures["clocks"].items():
        rows.append((f"{label}: squash -> producer sees it (PIM)", f"{data['squash']['pim_cycles_to_producer']:,}"))
        rows.append((f"{label}: squash -> next squash accepted (NPU)",
                     f"{data['squash']['npu_cycles_to_next_squash']:,}"))
    g = figures["gts"]
    rows += [("GTS: accept -> draft mask on ranks (from IDLE)", f"{g['idle_to_draft_cycles']:,}"),
             ("GTS: accept at done -> pre-verify mask on ranks", f"{g['draft_to_preverify_cycles']:,}"),
             ("GTS: request offered in a switch cycle waits", f"{g['request_in_switch_cycle_waits']:,}")]
    print_table("Draft-queue squash and GTS switch latency (measured on the RTL)",
                ("figure (clocks npu/pim in MHz)", "latency [cycles]"), rows, console=console,
                left=("figure (clocks npu/pim in MHz)",))
