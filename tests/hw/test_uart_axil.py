"""UART-to-AXI4-Lite bridge against the real CSR block (Amaranth simulator): reads, writes,
error responses and a bad command byte, bit-level UART on both sides."""

import pytest
from amaranth.hdl import Elaboratable, Module
from amaranth.sim import Simulator

from ahasd.hw.csr import CSR
from ahasd.hw.regmap import load
from ahasd.hw.uart_axil import CMD_READ, CMD_WRITE, REPLY_BAD_COMMAND, UARTAXILiteBridge

DIVISOR = 6
AXI = ("awaddr", "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bresp", "bvalid",
       "bready", "araddr", "arvalid", "arready", "rdata", "rresp", "rvalid", "rready")
MASTER_OUT = {"awaddr", "awvalid", "wdata", "wstrb", "wvalid", "bready", "araddr", "arvalid",
              "rready"}


class BridgeAndCSR(Elaboratable):
    def __init__(self):
        self.bridge = UARTAXILiteBridge(divisor=DIVISOR, addr_width=8)
        self.csr = CSR(addr_width=8)

    def elaborate(self, platform):
        m = Module()
        m.submodules.bridge, m.submodules.csr = self.bridge, self.csr
        for name in AXI:
            master = getattr(self.bridge.m_axil, name)
            slave = getattr(self.csr.s_axil, name)
            m.d.comb += (slave.eq(master) if name in MASTER_OUT else master.eq(slave))
        return m


def transact(requests):
    """Send each request (bytes) and collect its reply bytes; a monitor decodes ``tx`` all the
    time (a reply may start before the request's stop bit has ended)."""
    dut = BridgeAndCSR()
    heard = []
    replies = []

    total = sum(n for _, n in requests)

    async def monitor(ctx):
        for _ in range(total):
            await ctx.tick().until(~dut.bridge.tx)             # start bit
            await ctx.tick().repeat(DIVISOR // 2)
            bits = []
            for _ in range(9):
                bits.append(ctx.get(dut.bridge.tx))
                await ctx.tick().repeat(DIVISOR)
            bits.append(ctx.get(dut.bridge.tx))
            assert bits[0] == 0 and bits[9] == 1, f"bad frame {bits}"
            heard.append(sum(b << i for i, b in enumerate(bits[1:9])))
        for _ in range(20 * DIVISOR):                       # and not a byte more
            await ctx.tick()
            assert ctx.get(dut.bridge.tx) == 1, "a reply byte too many"

    async def bench(ctx):
        ctx.set(dut.bridge.rx, 1)
        await ctx.tick().repeat(5)
        for request, reply_len in requests:
            expected = len(heard) + reply_len
            for byte in request:
                for bit in [0] + [(byte >> i) & 1 for i in range(8)] + [1]:
                    ctx.set(dut.bridge.rx, bit)
                    await ctx.tick().repeat(DIVISOR)
            waited = 0
            while len(heard) < expected:
                await ctx.tick()
                waited += 1
                assert waited < 100 * DIVISOR * reply_len, "no reply"
            replies.append(heard[expected - reply_len:expected])

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(monitor)
    sim.add_testbench(bench)
    sim.run()
    assert len(replies) == len(requests), "the bench did not finish"
    return replies


def read(addr):
    return bytes([CMD_READ, addr >> 8, addr & 0xFF]), 5


def write(addr, value):
    return bytes([CMD_WRITE, addr >> 8, addr & 0xFF]) + value.to_bytes(4, "big"), 1


def test_reads_writes_and_errors_over_uart():
    regmap = load()
    used = {reg.address for reg in regmap.registers}
    hole = next(a for a in range(0, 256, 4) if a not in used)
    enable = next(r for r in regmap.registers if r.path == ("INT_ENABLE",)).address
    replies = transact([read(0x00), write(enable, 0x2A), read(enable), write(enable, 0x15),
                        read(enable), (bytes([0x41]), 1), read(hole), write(hole, 1)])
    magic, w_ok, r1, w_ok2, r2, bad, unmapped, w_bad = replies
    assert magic == [0, 0x41, 0x48, 0x53, 0x44]          # OKAY, 'AHSD'
    assert w_ok == [0] and w_ok2 == [0]
    assert r1 == [0, 0, 0, 0, 0x2A] and r2 == [0, 0, 0, 0, 0x15]
    assert bad == [REPLY_BAD_COMMAND]
    assert unmapped[0] == 2 and w_bad == [2]             # SLVERR


@pytest.mark.parametrize("kwargs, message", [
    ({"divisor": 3}, r"divisor must be an integer >= 4, not 3"),
    ({"addr_width": 17}, r"addr_width must be an integer in 1\.\.16, not 17"),
])
def test_parameter_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        UARTAXILiteBridge(**kwargs)


def test_verilog_lints_clean(tmp_path):
    from ahasd.hw.blocks import to_verilog
    from ahasd.synth.verilator import lint
    path = tmp_path / "uart_axil.v"
    path.write_text(to_verilog(UARTAXILiteBridge(), "uart_axil"))
    lint(path, "uart_axil")
