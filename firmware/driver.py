"""The Python driver for the controller's registers (:class:`ahasd.hw.controller.Controller`).

All addresses and field positions come from the generated :mod:`ahasd.firmware.regs` (from
``hw/regs.rdl``). The operations are written once, in :class:`ControllerOps`, as generators that
yield bus requests (:class:`Read`, :class:`Write`) and receive their answers; two runners drive
them:

* :class:`ControllerDriver` over a synchronous bus (``bus.read32(address) -> int``,
  ``bus.write32(address, value)``), e.g. :class:`ModelBus` on the golden register model;
* :class:`AsyncControllerDriver` over an asynchronous one (the same methods as coroutines), e.g.
  :class:`AxiLiteMasterBus` on cocotbext-axi's ``AxiLiteMaster`` in a cocotb testbench.

Both expose the same methods with the same arguments (the async ones are awaited). A bus reports
an error response by raising :class:`BusError`.
"""

import functools
import inspect
from dataclasses import dataclass

from ahasd.firmware import regs

__all__ = ["BusError", "DriverError", "Read", "Write", "ModelBus", "AxiLiteMasterBus",
           "ControllerOps", "ControllerDriver", "AsyncControllerDriver", "OPERATIONS", "run_sync",
           "run_async",
           "INTERRUPTS", "QUEUES", "EDC_MODES", "GTS_STATES"]

#: Interrupt names, as the fields of INT_STATUS / INT_ENABLE.
INTERRUPTS = tuple(regs.REGISTERS["INT_STATUS"][1])
#: Queue names, the prefixes of their registers.
QUEUES = ("draft_q", "feedback_q", "preverify_q")
#: EDC_CTRL.mode values: the enumeration of the field in hw/regs.rdl.
EDC_MODES = regs.ENUMS["EDC_CTRL"]["mode"]
#: GTS_STATUS.state values: the enumeration of the field in hw/regs.rdl.
GTS_STATES = regs.ENUMS["GTS_STATUS"]["state"]


class BusError(IOError):
    """The bus answered an access with an error response (SLVERR / DECERR)."""


class DriverError(RuntimeError):
    """The device is not what the driver expects (identification or version mismatch)."""


@dataclass(frozen=True)
class Read:
    """A bus request: read the word at byte ``address``; the runner sends back the value."""
    address: int


@dataclass(frozen=True)
class Write:
    """A bus request: write ``value`` to byte ``address``."""
    address: int
    value: int


def run_sync(operation, bus):
    """Run a driver operation (a generator of :class:`Read` / :class:`Write`) on a synchronous
    bus; return its result."""
    answer = None
    try:
        while True:
            request = operation.send(answer)
            if isinstance(request, Read):
                answer = bus.read32(request.address)
            else:
                answer = bus.write32(request.address, request.value)
    except StopIteration as stop:
        return stop.value


async def run_async(operation, bus):
    """As :func:`run_sync` on a bus whose ``read32`` / ``write32`` are coroutines."""
    answer = None
    try:
        while True:
            request = operation.send(answer)
            if isinstance(request, Read):
                answer = await bus.read32(request.address)
            else:
                answer = await bus.write32(request.address, request.value)
    except StopIteration as stop:
        return stop.value


class AxiLiteMasterBus:
    """Adapts cocotbext-axi's ``AxiLiteMaster`` (any object with its ``read(address, length)``
    and ``write(address, data)`` coroutines) to the asynchronous bus interface."""

    def __init__(self, master):
        self.master = master

    async def read32(self, address):
        resp = await self.master.read(address, 4)
        if int(resp.resp):
            raise BusError(f"read of 0x{address:X} answered {int(resp.resp):#04b}")
        return int.from_bytes(resp.data, "little")

    async def write32(self, address, value):
        resp = await self.master.write(address, int(value).to_bytes(4, "little"))
        if int(resp.resp):
            raise BusError(f"write of 0x{address:X} answered {int(resp.resp):#04b}")


class ModelBus:
    """Adapts :class:`ahasd.sim.blocks.csr.CSRModel` (the golden register model) to the
    synchronous bus interface, for driver tests and for host-side code run without hardware."""

    def __init__(self, model):
        self.model = model

    def read32(self, address):
        data, resp = self.model.read(address)
        if resp:
            raise BusError(f"read of 0x{address:X} answered {resp:#04b}")
        return data

    def write32(self, address, value):
        resp = self.model.write(address, value)
        if resp:
            raise BusError(f"write of 0x{address:X} answered {resp:#04b}")


class ControllerOps:
    """The driver's operations, once: each public method is a generator that yields
    :class:`Read` / :class:`Write` requests and returns the operation's result (run it with
    :func:`run_sync` or :func:`run_async`, or use the two driver classes)."""

    def check(self):
        """Read ID and VERSION; raise :class:`DriverError` unless they match the register map
        this driver was generated with (same major version)."""
        magic = yield from self.read("ID")
        if magic != regs.ID_MAGIC_RESET:
            raise DriverError(f"ID reads 0x{magic:08X}, expected 0x{regs.ID_MAGIC_RESET:08X}")
        major = yield from self.field("VERSION", "major")
        if major != regs.VERSION_MAJOR_RESET:
            raise DriverError(f"register map major version {major}, driver expects "
                              f"{regs.VERSION_MAJOR_RESET}")

    # ---- generic access -------------------------------------------------------------------
    @staticmethod
    def _reg(name):
        try:
            return regs.REGISTERS[name]
        except KeyError:
            raise KeyError(f"no register {name!r}") from None

    def read(self, name):
        """The value of register ``name`` (e.g. ``"DRAFT_Q_STATUS"``)."""
        return (yield Read(self._reg(name)[0]))

    def write(self, name, value):
        if not 0 <= value <= 0xFFFF_FFFF:
            raise ValueError(f"value must fit in 32 bits, not {value!r}")
        yield Write(self._reg(name)[0], value)

    def field(self, name, field):
        """The value of ``field`` of register ``name``."""
        lsb, width, _, _ = self._field(name, field)
        return ((yield from self.read(name)) >> lsb) & ((1 << width) - 1)

    def _field(self, name, field):
        try:
            return self._reg(name)[1][field]
        except KeyError:
            raise KeyError(f"register {name} has no field {field!r}") from None

    def set_fields(self, name, **values):
        """Write the fields ``values`` of register ``name``, keeping its other storage fields
        (read-modify-write); pulse and write-1-to-clear fields not named are written 0, which has
        no effect."""
        fields = self._reg(name)[1]
        unknown = sorted(set(values) - set(fields))
        if unknown:
            raise KeyError(f"register {name} has no field {unknown[0]!r}")
        current = None
        word = 0
        for field, (lsb, width, kind, _) in fields.items():
            if field in values:
                value = values[field]
                if isinstance(value, bool) or not isinstance(value, int) or \
                        not 0 <= value < 1 << width:
                    raise ValueError(f"{name}.{field} is {width} bits wide, {value!r} does not fit")
            elif kind in ("config", "storage"):
                if current is None:
                    current = yield from self.read(name)
                value = (current >> lsb) & ((1 << width) - 1)
            else:
                continue
            word |= value << lsb
        yield from self.write(name, word)

    # ---- operations -----------------------------------------------------------------------
    def enable(self, on=True):
        yield from self.set_fields("CTRL", enable=int(on))

    def soft_reset(self):
        """Reset EDC, TVC and GTS state; TVC reloads its presets."""
        yield from self.set_fields("CTRL", soft_reset=1)

    def clear_counters(self):
        yield from self.set_fields("CTRL", clear_counters=1)

    def set_edc_mode(self, mode):
        """``"predict"`` (EDC decides), ``"always"`` (keep drafting) or ``"never"``."""
        if mode not in EDC_MODES:
            raise ValueError(f"mode must be one of {', '.join(EDC_MODES)}, not {mode!r}")
        yield from self.set_fields("EDC_CTRL", mode=EDC_MODES[mode])

    def configure_tvc(self, *, freq_ratio=None, nvct=None, pdct=None, pvct=None, max_len=None,
                      enabled=None, load_presets=True):
        """Program TVC: frequency ratio (UQ2.14), presets (UQ24.8), largest pre-verify length,
        on/off; then load the presets into the tables (unless ``load_presets`` is false)."""
        if freq_ratio is not None:
            yield from self.set_fields("TVC_FREQ_RATIO", ratio=freq_ratio)
        for table, ratio in (("NVCT", nvct), ("PDCT", pdct), ("PVCT", pvct)):
            if ratio is not None:
                yield from self.set_fields(f"TVC_{table}_PRESET", ratio=ratio)
        ctrl = {}
        if max_len is not None:
            if not 1 <= max_len <= 8:
                raise ValueError(f"max_len must be in 1..8, not {max_len!r}")
            ctrl["max_len"] = max_len
        if enabled is not None:
            ctrl["disable"] = int(not enabled)
        if load_presets:
            ctrl["load_presets"] = 1
        if ctrl:
            yield from self.set_fields("TVC_CTRL", **ctrl)

    def set_queue_threshold(self, queue, fill):
        """Raise the queue's interrupt when its fill rises to ``fill`` (0: never)."""
        yield from self.set_fields(f"{self._queue(queue)}_THRESHOLD", threshold=fill)

    def enable_interrupts(self, *names):
        """Enable exactly the interrupts ``names`` (others disabled)."""
        yield from self.write("INT_ENABLE", self._mask(names))

    def pending_interrupts(self):
        """Names of the set INT_STATUS bits."""
        status = yield from self.read("INT_STATUS")
        fields = regs.REGISTERS["INT_STATUS"][1]
        return {n for n in INTERRUPTS if status >> fields[n][0] & 1}

    def acknowledge(self, *names):
        """Clear the interrupts ``names`` (write 1 to clear; others untouched)."""
        yield from self.write("INT_STATUS", self._mask(names))

    def queue_status(self, queue):
        """Fill, empty, full and the push / pop / push-back counters of ``queue``."""
        prefix = self._queue(queue)
        status = yield from self.read(f"{prefix}_STATUS")
        fields = regs.REGISTERS[f"{prefix}_STATUS"][1]
        out = {f: status >> lsb & ((1 << width) - 1) for f, (lsb, width, _, _) in fields.items()}
        for counter in ("PUSHES", "POPS", "PUSHBACKS"):
            out[counter.lower()] = yield from self.read(f"{prefix}_{counter}")
        return out

    def gts_status(self):
        """GTS_STATUS as a dict, ``state`` by name (a key of :data:`GTS_STATES`)."""
        word = yield from self.read("GTS_STATUS")
        fields = regs.REGISTERS["GTS_STATUS"][1]
        out = {f: word >> lsb & ((1 << width) - 1) for f, (lsb, width, _, _) in fields.items()}
        names = {value: name for name, value in GTS_STATES.items()}
        if out["state"] not in names:
            raise DriverError(f"GTS_STATUS.state reads {out['state']}, not one of "
                              f"{', '.join(f'{v} ({n})' for n, v in GTS_STATES.items())}")
        out["state"] = names[out["state"]]
        return out

    def counters(self):
        """Every statistics counter, by register name."""
        out = {}
        for name, (_, fields) in regs.REGISTERS.items():
            if set(fields) == {"count"}:
                out[name] = yield from self.read(name)
        return out

    # ---- helpers --------------------------------------------------------------------------
    @staticmethod
    def _queue(queue):
        if queue not in QUEUES:
            raise ValueError(f"queue must be one of {', '.join(QUEUES)}, not {queue!r}")
        return queue.upper()

    @staticmethod
    def _mask(names):
        mask = 0
        for name in names:
            if name not in INTERRUPTS:
                raise ValueError(f"interrupt must be one of {', '.join(INTERRUPTS)}, "
                                 f"not {name!r}")
            mask |= 1 << regs.REGISTERS["INT_STATUS"][1][name][0]
        return mask


#: The public operations of ControllerOps, which both drivers expose.
OPERATIONS = tuple(name for name, fn in vars(ControllerOps).items()
                   if not name.startswith("_") and inspect.isgeneratorfunction(fn))


def _sync(name):
    operation = getattr(ControllerOps, name)

    @functools.wraps(operation)
    def method(self, *args, **kwargs):
        return run_sync(operation(self.ops, *args, **kwargs), self.bus)
    return method


def _async(name):
    operation = getattr(ControllerOps, name)

    @functools.wraps(operation)
    async def method(self, *args, **kwargs):
        return await run_async(operation(self.ops, *args, **kwargs), self.bus)
    return method


class ControllerDriver:
    """Register-level access to one controller over a synchronous bus: every operation of
    :class:`ControllerOps` as a plain method.

    Parameters
    ----------
    bus : object
        ``read32(address) -> int`` / ``write32(address, value)`` (see the module docstring).
    check : bool
        Run :meth:`ControllerOps.check` (ID and register-map version) now.
    """

    def __init__(self, bus, *, check=True):
        self.bus = bus
        self.ops = ControllerOps()
        if check:
            self.check()


class AsyncControllerDriver:
    """The same operations over an asynchronous bus (e.g. :class:`AxiLiteMasterBus`), each a
    coroutine; make one with ``await AsyncControllerDriver.open(bus)``."""

    def __init__(self, bus):
        self.bus = bus
        self.ops = ControllerOps()

    @classmethod
    async def open(cls, bus, *, check=True):
        driver = cls(bus)
        if check:
            await driver.check()
        return driver


for _name in OPERATIONS:
    setattr(ControllerDriver, _name, _sync(_name))
    setattr(AsyncControllerDriver, _name, _async(_name))
del _name
