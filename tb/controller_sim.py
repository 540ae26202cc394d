"""Fast tier of the controller top: its AXI4-Lite bus and stream ports in Amaranth's simulator.

:class:`ControllerSim` wraps one :class:`ahasd.hw.controller.Controller` for
:func:`ahasd.tb.amaranth_sim.simulate`: register access by address or by name from the
controller's own register map (narrowed in a ``counter_bits`` build), and drivers of the
stream ports that hold ``valid`` for a given number of cycles (push-back counts are per cycle).
The clocks are those of the cocotb tier (PIM 800 MHz ``sync``, NPU 1 GHz ``npu``), with a
phase offset so that the edges never coincide.

Every helper is an async function of the simulator context ``ctx``; the bus helpers run in the
``sync`` (PIM) domain, where the CSR lives.
"""

from ahasd.sim.blocks.csr import OKAY
from ahasd.tb.amaranth_sim import simulate, to_payload

__all__ = ["ControllerSim", "PIM_PERIOD", "NPU_PERIOD"]

PIM_PERIOD = 1.25e-9
NPU_PERIOD = 1e-9
#: Longest a bus handshake may wait (PIM cycles) before the test fails.
BUS_TIMEOUT = 64
#: Longest an offer without a cycle count may wait to be taken.
OFFER_TIMEOUT = 2000


class ControllerSim:
    """Bus and stream helpers for ``dut``, a :class:`~ahasd.hw.controller.Controller`.

    :meth:`run` adds two monitors beside the testbenches. On the PIM clock it drives
    ``task_done`` from :attr:`task_done` and ``feedback_out.ready`` from :attr:`feedback_ready`
    and records :attr:`decisions` (the ``draft`` bit of each), :attr:`tasks` (``(kind,
    length)``) and :attr:`feedback_pops`; on the NPU clock it drives ``draft_out.ready`` from
    :attr:`draft_ready` and counts :attr:`draft_pops`. The attributes may change at any time.
    :attr:`draft_credit` / :attr:`feedback_credit` let that many more descriptors out while
    the ``*_ready`` flag is low (:meth:`take` uses them to pop exactly one).
    """

    def __init__(self, dut):
        self.dut = dut
        self.regmap = dut._csr.regmap
        self.task_done = False
        self.feedback_ready = False
        self.draft_ready = False
        self.decisions, self.tasks = [], []
        self.feedback_pops = self.draft_pops = 0
        self.draft_credit = self.feedback_credit = 0
        self.pim_cycle = 0

    def run(self, *testbenches, until=None):
        """Simulate ``dut`` with both clocks and the monitors until the testbenches return."""
        return simulate(self.dut, *testbenches, background=(self._pim, self._npu), until=until,
                        clocks={"sync": PIM_PERIOD, "npu": (NPU_PERIOD, 0.37 * NPU_PERIOD)})

    async def _pim(self, ctx):
        d = self.dut
        while True:
            ctx.set(d.task_done, self.task_done)
            fb_ready = self.feedback_ready or self.feedback_credit > 0
            ctx.set(d.feedback_out.ready, fb_ready)
            *_, dec, draft, task, kind, length, fb = await ctx.tick().sample(
                d.decision.valid, d.decision.payload.draft, d.task.valid,
                d.task.payload.kind, d.task.payload.length,
                d.feedback_out.valid & d.feedback_out.ready)
            self.pim_cycle += 1
            if dec:
                self.decisions.append(draft)
            if task:
                self.tasks.append((int(kind.value), length))
            self.feedback_pops += fb
            if fb and not self.feedback_ready and self.feedback_credit:
                self.feedback_credit -= 1

    async def _npu(self, ctx):
        d = self.dut
        while True:
            ctx.set(d.draft_out.ready, self.draft_ready or self.draft_credit > 0)
            *_, pop = await ctx.tick("npu").sample(d.draft_out.valid & d.draft_out.ready)
            self.draft_pops += pop
            if pop and not self.draft_ready and self.draft_credit:
                self.draft_credit -= 1

    def _ax(self, name):
        return getattr(self.dut.s_axil, name)

    async def _handshake(self, ctx, ready, what):
        for _ in range(BUS_TIMEOUT):
            *_, taken = await ctx.tick().sample(ready)
            if taken:
                return
        raise AssertionError(f"AXI4-Lite {what} not taken within {BUS_TIMEOUT} cycles")

    async def write(self, ctx, address, data, strobe=0xF):
        """One AXI4-Lite write; returns BRESP."""
        ax = self._ax
        ctx.set(ax("awaddr"), address)
        ctx.set(ax("wdata"), data)
        ctx.set(ax("wstrb"), strobe)
        ctx.set(ax("awvalid"), 1)
        ctx.set(ax("wvalid"), 1)
        ctx.set(ax("bready"), 1)
        # The CSR takes AW and W in the same cycle when both are free (it is idle between our
        # accesses), so one handshake covers both.
        *_, aw, w = await ctx.tick().sample(ax("awready"), ax("wready"))
        if not (aw and w):
            raise AssertionError(f"AXI4-Lite write 0x{address:02X}: AW/W not taken at once")
        ctx.set(ax("awvalid"), 0)
        ctx.set(ax("wvalid"), 0)
        for _ in range(BUS_TIMEOUT):
            *_, valid, resp = await ctx.tick().sample(ax("bvalid"), ax("bresp"))
            if valid:
                ctx.set(ax("bready"), 0)
                return resp
        raise AssertionError(f"AXI4-Lite write 0x{address:02X}: no B within {BUS_TIMEOUT} cycles")

    async def read(self, ctx, address):
        """One AXI4-Lite read; returns (RDATA, RRESP)."""
        ax = self._ax
        ctx.set(ax("araddr"), address)
        ctx.set(ax("arvalid"), 1)
        ctx.set(ax("rready"), 1)
        await self._handshake(ctx, ax("arready"), f"read 0x{address:02X} AR")
        ctx.set(ax("arvalid"), 0)
        for _ in range(BUS_TIMEOUT):
            *_, valid, value, resp = await ctx.tick().sample(ax("rvalid"), ax("rdata"),
                                                             ax("rresp"))
            if valid:
                ctx.set(ax("rready"), 0)
                return value, resp
        raise AssertionError(f"AXI4-Lite read 0x{address:02X}: no R within {BUS_TIMEOUT} cycles")

    async def read_reg(self, ctx, ident):
        value, resp = await self.read(ctx, self.regmap[ident].address)
        assert resp == OKAY, f"read {ident}: response {resp}"
        return value

    async def read_field(self, ctx, ident, name):
        return self.regmap[ident].field(name).extract(await self.read_reg(ctx, ident))

    async def write_reg(self, ctx, ident, value):
        resp = await self.write(ctx, self.regmap[ident].address, value)
        assert resp == OKAY, f"write {ident}: response {resp}"

    def word(self, ident, **fields):
        """The register word of ``ident`` with ``fields`` set (others 0)."""
        reg = self.regmap[ident]
        word = 0
        for name, value in fields.items():
            word = reg.field(name).insert(word, value)
        return word

    async def read_counters(self, ctx, counters):
        """``{register ident: value}`` of the ``count`` field of each register of ``counters``
        (``[(register, field), ...]`` as from :func:`ahasd.hw.regmap.counter_fields`)."""
        return {r.ident: f.extract(await self.read_reg(ctx, r.ident)) for r, f in counters}

    # ---- streams -------------------------------------------------------------------------
    async def offer(self, ctx, stream, payload, *, domain="sync", cycles=None):
        """Offer ``payload`` on the design's input ``stream`` until taken, or for exactly
        ``cycles`` cycles (then withdraw it, taken or not); returns whether it was taken.
        Without ``cycles``, an offer not taken within OFFER_TIMEOUT cycles fails the test."""
        shape = stream.signature.members["payload"].shape
        ctx.set(stream.payload, to_payload(shape, payload))
        ctx.set(stream.valid, 1)
        n = 0
        while cycles is None or n < cycles:
            *_, ready = await ctx.tick(domain).sample(stream.ready)
            n += 1
            if ready:
                ctx.set(stream.valid, 0)
                return True
            if cycles is None and n >= OFFER_TIMEOUT:
                raise AssertionError(f"{stream.signature.members['payload'].shape!r} offer "
                                     f"not taken in {OFFER_TIMEOUT} {domain} cycles")
        ctx.set(stream.valid, 0)
        return False

    async def cycles(self, ctx, n, domain="sync"):
        await ctx.tick(domain).repeat(n)

    # ---- controller steps ------------------------------------------------------------------
    def tvc_inputs(self, ctx, kv_len, now, pending):
        ctx.set(self.dut.tvc_inputs.kv_len, kv_len)
        ctx.set(self.dut.tvc_inputs.now, now)
        ctx.set(self.dut.tvc_inputs.pending, pending)

    async def draft(self, ctx, entropy, *, length=4):
        """Push one drafted batch of mean entropy ``entropy`` (UQ4.12); return the decision's
        ``draft`` bit (it comes one cycle after the push)."""
        before = len(self.decisions)
        await self.offer(ctx, self.dut.draft_in, {"batch_id": before & 0xFFFF, "length": length,
                                                  "kv_base": 0, "mean_entropy": entropy})
        for _ in range(4):
            await ctx.tick()
            if len(self.decisions) > before:
                return self.decisions[-1]
        raise AssertionError("no decision after a draft push")

    async def result(self, ctx, *, full, cycles=500, kv_length=100, accepted_length=1,
                     wait=True):
        """The NPU pushes one verification result; with ``wait``, until the PIM took it."""
        before = self.feedback_pops
        ready = self.feedback_ready
        self.feedback_ready = ready or wait
        await self.offer(ctx, self.dut.feedback_in, {"accepted_length": accepted_length,
                                                     "full": full, "cycles": cycles,
                                                     "kv_length": kv_length}, domain="npu")
        if wait:
            for _ in range(200):
                await ctx.tick()
                if self.feedback_pops > before:
                    break
            else:
                raise AssertionError("the PIM never received the verification result")
            self.feedback_ready = ready

    async def take(self, ctx, port):
        """Let exactly one descriptor out of ``port`` (``"draft"`` to the NPU or ``"feedback"``
        to the PIM) while its consumer is otherwise held off."""
        count = f"{port}_pops"
        before = getattr(self, count)
        setattr(self, f"{port}_credit", 1)
        for _ in range(OFFER_TIMEOUT):
            await ctx.tick()
            if getattr(self, count) > before:
                return
        raise AssertionError(f"no {port} descriptor came out in {OFFER_TIMEOUT} cycles")

    async def settle(self, ctx, n=60):
        """Let TVC's divider and the synchronisers finish (``n`` PIM cycles)."""
        await ctx.tick().repeat(n)
