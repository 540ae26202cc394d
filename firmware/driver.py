"""A thin Python driver for the controller's registers (:class:`ahasd.hw.controller.Controller`).

All addresses and field positions come from the generated :mod:`ahasd.firmware.regs` (from
``hw/regs.rdl``); this module only adds names for the common operations. It talks to any bus
object with two methods::

    bus.read32(address) -> int          # byte address relative to the controller's base
    bus.write32(address, value) -> None

and raises :class:`BusError` itself when a bus reports an error through an exception of its own
(the bus decides how SLVERR is surfaced; :class:`ModelBus` raises :class:`BusError`).
"""

from ahasd.firmware import regs

__all__ = ["BusError", "DriverError", "ModelBus", "ControllerDriver", "INTERRUPTS", "QUEUES",
           "EDC_MODES"]

#: Interrupt names, as the fields of INT_STATUS / INT_ENABLE.
INTERRUPTS = tuple(regs.REGISTERS["INT_STATUS"][1])
#: Queue names, the prefixes of their registers.
QUEUES = ("draft_q", "feedback_q", "preverify_q")
#: EDC_CTRL.mode values: the enumeration of the field in hw/regs.rdl.
EDC_MODES = regs.ENUMS["EDC_CTRL"]["mode"]


class BusError(IOError):
    """The bus answered an access with an error response (SLVERR / DECERR)."""


class DriverError(RuntimeError):
    """The device is not what the driver expects (identification or version mismatch)."""


class ModelBus:
    """Adapts :class:`ahasd.sim.blocks.csr.CSRModel` (the golden register model) to the bus interface,
    for driver tests and for host-side code run without hardware."""

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


class ControllerDriver:
    """Register-level access to one controller.

    Parameters
    ----------
    bus : object
        ``read32(address)`` / ``write32(address, value)`` (see the module docstring).
    check : bool
        Read ID and VERSION and raise :class:`DriverError` unless they match the register map
        this driver was generated with (same major version).
    """

    def __init__(self, bus, *, check=True):
        self.bus = bus
        if check:
            magic = self.read("ID")
            if magic != regs.ID_MAGIC_RESET:
                raise DriverError(f"ID reads 0x{magic:08X}, expected 0x{regs.ID_MAGIC_RESET:08X}")
            major = self.field("VERSION", "major")
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
        return self.bus.read32(self._reg(name)[0])

    def write(self, name, value):
        if not 0 <= value <= 0xFFFF_FFFF:
            raise ValueError(f"value must fit in 32 bits, not {value!r}")
        self.bus.write32(self._reg(name)[0], value)

    def field(self, name, field):
        """The value of ``field`` of register ``name``."""
        lsb, width, _, _ = self._field(name, field)
        return (self.read(name) >> lsb) & ((1 << width) - 1)

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
                    current = self.read(name)
                value = (current >> lsb) & ((1 << width) - 1)
            else:
                continue
            word |= value << lsb
        self.write(name, word)

    # ---- operations -----------------------------------------------------------------------
    def enable(self, on=True):
        self.set_fields("CTRL", enable=int(on))

    def soft_reset(self):
        """Reset EDC, TVC and GTS state; TVC reloads its presets."""
        self.set_fields("CTRL", soft_reset=1)

    def clear_counters(self):
        self.set_fields("CTRL", clear_counters=1)

    def set_edc_mode(self, mode):
        """``"predict"`` (EDC decides), ``"always"`` (keep drafting) or ``"never"``."""
        if mode not in EDC_MODES:
            raise ValueError(f"mode must be one of {', '.join(EDC_MODES)}, not {mode!r}")
        self.set_fields("EDC_CTRL", mode=EDC_MODES[mode])

    def configure_tvc(self, *, freq_ratio=None, nvct=None, pdct=None, pvct=None, max_len=None,
                      enabled=None, load_presets=True):
        """Program TVC: frequency ratio (UQ2.14), presets (UQ24.8), largest pre-verify length,
        on/off; then load the presets into the tables (unless ``load_presets`` is false)."""
        if freq_ratio is not None:
            self.set_fields("TVC_FREQ_RATIO", ratio=freq_ratio)
        for table, ratio in (("NVCT", nvct), ("PDCT", pdct), ("PVCT", pvct)):
            if ratio is not None:
                self.set_fields(f"TVC_{table}_PRESET", ratio=ratio)
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
            self.set_fields("TVC_CTRL", **ctrl)

    def set_queue_threshold(self, queue, fill):
        """Raise the queue's interrupt when its fill rises to ``fill`` (0: never)."""
        self.set_fields(f"{self._queue(queue)}_THRESHOLD", threshold=fill)

    def enable_interrupts(self, *names):
        """Enable exactly the interrupts ``names`` (others disabled)."""
        self.write("INT_ENABLE", self._mask(names))

    def pending_interrupts(self):
        """Names of the set INT_STATUS bits."""
        status = self.read("INT_STATUS")
        fields = regs.REGISTERS["INT_STATUS"][1]
        return {n for n in INTERRUPTS if status >> fields[n][0] & 1}

    def acknowledge(self, *names):
        """Clear the interrupts ``names`` (write 1 to clear; others untouched)."""
        self.write("INT_STATUS", self._mask(names))

    def queue_status(self, queue):
        """Fill, empty, full and the push / pop / push-back counters of ``queue``."""
        prefix = self._queue(queue)
        status = self.read(f"{prefix}_STATUS")
        fields = regs.REGISTERS[f"{prefix}_STATUS"][1]
        out = {f: status >> lsb & ((1 << width) - 1) for f, (lsb, width, _, _) in fields.items()}
        for counter in ("PUSHES", "POPS", "PUSHBACKS"):
            out[counter.lower()] = self.read(f"{prefix}_{counter}")
        return out

    def counters(self):
        """Every statistics counter, by register name."""
        return {name: self.read(name) for name, (_, fields) in regs.REGISTERS.items()
                if set(fields) == {"count"}}

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
