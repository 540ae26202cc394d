"""Drive the Verilator harness (``harness.cpp``): transactions in batches over a pipe.

:func:`ahasd.cosim.build.build` compiles a design with the package's C++ harness and a generated
port table (cached by content). :class:`Harness` runs the binary: commands are queued in Python and sent as one
batch by :meth:`Harness.run`, which fills the :class:`Result` of every command that answers
(collected items, accept logs, register reads). The protocol is described at the top of
``harness_main.cpp``; the C API the protocol sits on is ``harness.h``.
"""

import gc
import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

from ahasd.cosim.build import build

__all__ = ["HarnessError", "Result", "Harness", "paused_gc"]



@contextmanager
def paused_gc():
    """Pause Python's cyclic garbage collector (replays): a replay allocates many small acyclic
    objects (log tuples, decisions), which reference counting frees, and each collection they
    trigger would walk the caller's whole heap (with the CLI loaded, half the replay time)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class HarnessError(RuntimeError):
    """The harness refused a command or timed out; the message is the harness's own."""


class Result:
    """The answer of one queued command, filled by :meth:`Harness.run` (``value``)."""

    __slots__ = ("value", "_parse")

    def __init__(self, parse):
        self.value = None
        self._parse = parse

    def __repr__(self):
        return f"Result({self.value!r})"


def _block(lines):
    """The fields of a counted block ("N" then N lines), all lines' fields in one list."""
    count = int(next(lines))
    return count, " ".join([next(lines) for _ in range(count)]).split()


def _items(lines):
    """``[(cycle, value, ...), ...]``: a decimal cycle and hex values per line."""
    count, fields = _block(lines)
    if not count:
        return []
    k = len(fields) // count
    columns = [list(map(int, fields[0::k]))]
    columns += [[int(v, 16) for v in fields[i::k]] for i in range(1, k)]
    return list(zip(*columns))


def _pairs(lines):
    """``[(cycle, waited), ...]``: two decimal numbers per line."""
    count, fields = _block(lines)
    numbers = list(map(int, fields))
    return list(zip(numbers[0::2], numbers[1::2]))


def _widen(*pipes):
    """Make the pipes hold a whole batch where the system allows it (Linux F_SETPIPE_SZ): each
    time a full pipe blocks one side, both processes wait to be scheduled again."""
    try:
        import fcntl
        limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        for pipe in pipes:
            fcntl.fcntl(pipe.fileno(), 1031, min(limit, 1 << 20))   # F_SETPIPE_SZ
    except (ImportError, OSError, ValueError):
        pass    # other systems: the default pipe size, only slower


class Harness:
    """A running harness binary over one Verilated design.

    Parameters
    ----------
    verilog, top : str
        The design (e.g. from :func:`ahasd.hw.blocks.to_verilog`) and its top module.
    inputs, outputs : list of (str, int)
        The ports (:func:`ahasd.hw.blocks.port_list`), any width.
    domains : dict
        ``{name: (clk, rst or None, period_ps)}``, e.g. ``{"sync": ("clk", "rst", 1250)}``. The
        clock and reset ports are added to the inputs.

    Declarations (:meth:`source`, :meth:`sink`, ...) and transactions are queued and sent with
    the next :meth:`run`; every method that answers returns a :class:`Result`.
    """

    def __init__(self, verilog, top, inputs, outputs, *, domains):
        self._proc = None
        self.cpu_s = None
        declared = {name for name, _ in inputs}
        clock_ports = [(port, 1, True) for clk, rst, _ in domains.values()
                       for port in (clk, rst) if port and port not in declared]
        self.ports = clock_ports + [(n, w, True) for n, w in inputs] + \
            [(n, w, False) for n, w in outputs]
        self.width = {name: width for name, width, _ in self.ports}
        self.binary = build(verilog, top, self.ports)
        self.domains = dict(domains)
        self._lines = []
        self._results = []
        self._counts = {"source": 0, "sink": 0, "watch": 0, "axil": 0}
        self._proc = subprocess.Popen([str(self.binary)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _widen(self._proc.stdin, self._proc.stdout)
        for name, (clk, rst, period) in domains.items():
            self.command(f"domain {name} {clk} {rst or '-'} {int(period)}")

    # ---- plumbing ------------------------------------------------------------------------
    def command(self, line, parse=None):
        """Queue one protocol line; with ``parse`` (a function of the line iterator) return the
        :class:`Result` it will fill."""
        self._lines.append(line)
        if parse is None:
            return None
        result = Result(parse)
        self._results.append(result)
        return result

    def send(self):
        """Send the lines queued so far without ending the batch: the harness runs them while
        Python prepares the rest (it answers only at the end of the batch, so this cannot
        deadlock)."""
        if self._proc is None:
            raise HarnessError("the harness is closed")
        if not self._lines:
            return
        self._lines.append("")
        data = "\n".join(self._lines).encode()
        self._lines.clear()     # the same list: callers may append to it directly
        try:
            self._proc.stdin.write(data)
            self._proc.stdin.flush()
        except BrokenPipeError:
            pass                # the harness died: run() reports how

    def run(self):
        """Send the queued batch, wait for its answers and fill their results; raise
        :class:`HarnessError` if a command failed (the batch stops there)."""
        self._lines.append("end")
        self.send()
        results, self._results = self._results, []
        buf, fd = bytearray(), self._proc.stdout.fileno()
        while not (buf.endswith(b"\n.\n") or buf == b".\n"):
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                err = self._proc.stderr.read().decode(errors="replace")
                raise HarnessError(f"the harness {self.binary.name} exited "
                                   f"({self._proc.wait()}): {err.strip()}")
            buf += chunk
        lines = buf.decode().split("\n")[:-2]
        if lines and lines[-1].startswith("! "):
            raise HarnessError(lines[-1][2:])
        it = iter(lines)
        for result in results:
            result.value = result._parse(it)
        return results

    def close(self):
        """End the harness process; :attr:`cpu_s` is then the CPU time it used."""
        if self._proc is not None:
            try:
                self._proc.stdin.write(b"quit\n")
                self._proc.stdin.close()
            except BrokenPipeError:
                pass
            try:   # wait4: the child's own CPU time (the benchmarks report it)
                _, status, usage = os.wait4(self._proc.pid, 0)
                self._proc.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_s = usage.ru_utime + usage.ru_stime
            except (AttributeError, ChildProcessError):
                self._proc.wait()
            self._proc.stdout.close()
            self._proc.stderr.close()
            self._proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def expect(self, parse):
        """A :class:`Result` for the answers of the lines queued since the last one
        (``parse`` reads them from the line iterator)."""
        result = Result(parse)
        self._results.append(result)
        return result

    def _declare(self, kind, line):
        self.command(line)
        self._counts[kind] += 1
        return self._counts[kind] - 1

    # ---- declarations ----------------------------------------------------------------------
    def source(self, name, domain, valid, ready=None, payload=(), lane=None, *, log=False,
               timeout=None):
        """A stream source; returns its index (for :meth:`push`). Sources with the same
        ``lane`` present their items in push order."""
        line = f"source {name} {domain} {valid} {ready or '-'} {','.join(payload) or '-'}"
        index = self._declare("source", line + (f" {lane}" if lane else ""))
        if log:
            self.command(f"log {index}")
        if timeout is not None:
            self.command(f"timeout {index} {int(timeout)}")
        return index

    def gaps(self, source, p_idle, seed=1):
        """Idle cycles: each cycle the source could present, it waits with probability p_idle."""
        self.command(f"gaps {source} {float(p_idle)!r} {int(seed)}")

    def sink(self, name, domain, valid, ready=None, payload=()):
        return self._declare("sink", f"sink {name} {domain} {valid} {ready or '-'} "
                                     f"{','.join(payload) or '-'}")

    @staticmethod
    def _pattern(pattern):
        if isinstance(pattern, str) and pattern in ("always", "never"):
            return pattern
        if isinstance(pattern, str):
            return f"pattern {pattern}"
        p, seed = pattern
        return f"random {float(p)!r} {int(seed)}"

    def ready(self, sink, pattern):
        """The sink's ready: ``"always"``, ``"never"``, a bit string such as ``"0110"``
        (repeated) or ``(p_high, seed)`` (random)."""
        self.command(f"ready {sink} {self._pattern(pattern)}")

    def drive(self, port, domain, pattern):
        """Drive a 1-bit input after each edge of ``domain`` with ``pattern`` (as :meth:`ready`)."""
        self.command(f"drive {port} {domain} {self._pattern(pattern)}")

    def watch(self, port, domain):
        return self._declare("watch", f"watch {port} {domain}")

    def axil(self, prefix, domain):
        return self._declare("axil", f"axil {prefix} {domain}")

    # ---- transactions ----------------------------------------------------------------------
    def vectors(self, rows, domain="sync"):
        """Vector mode (after :meth:`vports`): for each row of input values, drive the inputs,
        sample the outputs and run one cycle of ``domain``; returns a :class:`Result` with the
        list of output tuples."""
        n = 0
        for row in rows:
            self._lines.append("v " + " ".join(format(int(v), "x") for v in row))
            n += 1
        return self.expect(lambda lines: [tuple(int(f, 16) for f in next(lines).split())
                                          for _ in range(n)])

    def vports(self, domain, inputs, outputs):
        """Declare the port order of :meth:`vectors`."""
        self.command(f"vports {domain} {','.join(inputs) or '-'} {','.join(outputs) or '-'}")

    def push(self, source, *values):
        self._lines.append(f"s {source} " + " ".join(format(v, "x") for v in values))

    def lane_set(self, lane, port, value):
        self._lines.append(f"lset {lane} {port} {value:x}")

    def lane_pulse(self, lane, port, value):
        self._lines.append(f"lpulse {lane} {port} {value:x}")

    def lane_idle(self, lane, cycles):
        self._lines.append(f"lidle {lane} {int(cycles)}")

    def set(self, port, value):
        self._lines.append(f"set {port} {int(value):x}")

    def get(self, port):
        return self.command(f"get {port}", lambda lines: int(next(lines), 16))

    def reset(self, domain, cycles=1):
        self.command(f"reset {domain} {int(cycles)}")

    def wait(self, domain, cycles):
        self.command(f"wait {domain} {int(cycles)}")

    def drain(self, domain, max_cycles):
        self.command(f"drain {domain} {int(max_cycles)}")

    def until(self, port, value, domain, max_cycles):
        self.command(f"until {port} {int(value):x} {domain} {int(max_cycles)}")

    def until_count(self, sink, total, domain, max_cycles):
        self.command(f"count {sink} {int(total)} {domain} {int(max_cycles)}")

    def collect(self, sink):
        """Items collected since the last call: ``[(cycle, value, ...), ...]``."""
        return self.command(f"pop {sink}", _items)

    def accepted(self, source):
        """Accepted items since the last call (``log=True``): ``[(cycle, waited), ...]``."""
        return self.command(f"acc {source}", _pairs)

    def seen(self, watch):
        """Changes of a watched port since the last call: ``[(cycle, value), ...]``."""
        return self.command(f"seen {watch}", _items)

    def pending(self, lane):
        """Items of ``lane`` (a source's name when it has a lane of its own) not yet accepted."""
        return self.command(f"pending {lane}", lambda lines: int(next(lines)))

    def time(self):
        """``(ps, cycles of each domain in declaration order)``."""
        def parse(lines):
            fields = [int(f) for f in next(lines).split()]
            return fields[0], tuple(fields[1:])
        return self.command("time", parse)

    def axil_read(self, bus, address, max_cycles=1000):
        """Blocking AXI4-Lite read: ``(data, resp)``."""
        def parse(lines):
            data, resp = next(lines).split()
            return int(data, 16), int(resp)
        return self.command(f"rd {bus} {int(address)} {int(max_cycles)}", parse)

    def axil_write(self, bus, address, data, strobe=0xF, max_cycles=1000):
        """Blocking AXI4-Lite write: ``resp``."""
        return self.command(f"wr {bus} {int(address)} {int(data)} {int(strobe)} "
                            f"{int(max_cycles)}", lambda lines: int(next(lines)))
