"""UART-to-AXI4-Lite bridge, the rules the CSR block cannot show: a frame with a low stop bit is
dropped, and a write waits for both the AW and the W handshake (in either order, with gaps)
before it takes B, against a scripted AXI4-Lite slave (Amaranth simulator, bounded runs)."""

import pytest
from amaranth.sim import Simulator

from ahasd.hw.uart_axil import CMD_READ, CMD_WRITE, UARTAXILiteBridge

DIVISOR = 6


def frame(byte, stop=1):
    """Line levels of one 8N1 frame, one per bit time."""
    return [0] + [(byte >> i) & 1 for i in range(8)] + [stop]


def decode(tx):
    """The bytes of a per-cycle ``tx`` record: each frame sampled in the middle of its bits."""
    out, i = [], 1
    while i < len(tx):
        if tx[i - 1] == 1 and tx[i] == 0:
            mid = [i + DIVISOR // 2 + b * DIVISOR for b in range(10)]
            assert mid[-1] < len(tx), "a frame cut off at the end of the run"
            bits = [tx[j] for j in mid]
            assert bits[0] == 0 and bits[9] == 1, f"bad frame {bits}"
            out.append(sum(b << n for n, b in enumerate(bits[1:9])))
            i = mid[-1]
        i += 1
    return out


def run(line, slave, *, cycles):
    """Drive ``line`` (bit levels, DIVISOR cycles each) into ``rx`` while ``slave(ctx, bus,
    cycle, log)`` serves the AXI side each cycle; return (bytes heard on tx, slave log)."""
    dut = UARTAXILiteBridge(divisor=DIVISOR, addr_width=8)
    levels = [1] * 4 + [bit for bit in line for _ in range(DIVISOR)]
    tx, log = [], []

    async def bench(ctx):
        for cycle in range(cycles):
            ctx.set(dut.rx, levels[cycle] if cycle < len(levels) else 1)
            tx.append(ctx.get(dut.tx))
            slave(ctx, dut.m_axil, cycle, log)
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return decode(tx), log


class ReaderSlave:
    """Answers every read with 0x11223344 (OKAY): AR taken at once, R the cycle after."""

    def __init__(self):
        self.r_pending = False

    def __call__(self, ctx, bus, cycle, log):
        ctx.set(bus.arready, not self.r_pending)
        ctx.set(bus.rvalid, self.r_pending)
        ctx.set(bus.rdata, 0x11223344)
        if self.r_pending and ctx.get(bus.rready):
            self.r_pending = False
        elif not self.r_pending and ctx.get(bus.arvalid):
            log.append(("ar", ctx.get(bus.araddr)))
            self.r_pending = True


def read_request(addr):
    return [bit for byte in (CMD_READ, addr >> 8, addr & 0xFF) for bit in frame(byte)]


def test_a_frame_with_a_low_stop_bit_is_dropped():
    """A command byte whose stop bit is low is not taken (8N1 framing); the next good request
    is answered as if the bad frame had not been sent."""
    line = frame(CMD_READ, stop=0) + [1] * 3 + read_request(0x24)
    heard, log = run(line, ReaderSlave(), cycles=(len(line) + 80) * DIVISOR)
    assert log == [("ar", 0x24)]
    assert heard == [0, 0x11, 0x22, 0x33, 0x44]
    # The same bytes with a good stop bit: 'R' and 0x00 are the address of a read (0x5200, 8
    # bits of it on the bus); 0x24 arrives while the reply goes out and is not a request.
    line = frame(CMD_READ) + [1] * 3 + read_request(0x24)
    heard, log = run(line, ReaderSlave(), cycles=(len(line) + 80) * DIVISOR)
    assert log == [("ar", 0x00)]
    assert heard[:5] == [0, 0x11, 0x22, 0x33, 0x44]


class WriteSlave:
    """Takes AW and W separately: ``order`` "aw" (AW first, W ``gap`` cycles after it), "w"
    (the other way round) or "both" (both at once); B only after both. Logs each handshake and
    any cycle in which the master is ready for B before both were taken."""

    def __init__(self, order, gap):
        self.order, self.gap = order, gap
        self.aw_at = self.w_at = None
        self.b_done = False

    def __call__(self, ctx, bus, cycle, log):
        aw_ok = self.order in ("aw", "both") or (self.w_at is not None
                                                 and cycle >= self.w_at + self.gap)
        w_ok = self.order in ("w", "both") or (self.aw_at is not None
                                               and cycle >= self.aw_at + self.gap)
        aw_ready, w_ready = self.aw_at is None and aw_ok, self.w_at is None and w_ok
        both = self.aw_at is not None and self.w_at is not None
        ctx.set(bus.awready, aw_ready)
        ctx.set(bus.wready, w_ready)
        ctx.set(bus.bvalid, both and not self.b_done)
        ctx.set(bus.bresp, 0)
        if ctx.get(bus.bready) and not both:
            log.append(("bready early", cycle))
        if both and not self.b_done and ctx.get(bus.bready):
            self.b_done = True
            log.append(("b", None))
        if self.b_done and (ctx.get(bus.awvalid) or ctx.get(bus.wvalid)):
            log.append(("again", cycle))
        if aw_ready and ctx.get(bus.awvalid):
            self.aw_at = cycle + 1
            log.append(("aw", ctx.get(bus.awaddr)))
        if w_ready and ctx.get(bus.wvalid):
            self.w_at = cycle + 1
            log.append(("w", (ctx.get(bus.wdata), ctx.get(bus.wstrb))))


@pytest.mark.parametrize("order, gap", [("aw", 0), ("aw", 5), ("w", 0), ("w", 5), ("both", 0)])
def test_a_write_waits_for_both_handshakes(order, gap):
    request = [bit for byte in (CMD_WRITE, 0x00, 0x30, 0xDE, 0xAD, 0xBE, 0xEF)
               for bit in frame(byte)]
    heard, log = run(request, WriteSlave(order, gap), cycles=(len(request) + 40) * DIVISOR)
    kinds = [k for k, _ in log]
    assert "bready early" not in kinds and "again" not in kinds, log
    assert kinds[-1] == "b" and sorted(kinds[:2]) == ["aw", "w"]
    if order != "both":
        assert kinds[0] == order
    assert dict(log[:2]) == {"aw": 0x30, "w": (0xDEADBEEF, 0xF)}
    assert heard == [0]
