"""Golden model of the AXI4-Lite register file (:class:`ahasd.hw.csr.CSR`) at transaction level.

Pure Python: the register map is given as a :class:`ahasd.hw.regmap.RegisterMap` (or anything
with the same ``registers`` / ``at`` interface), so the scoreboard of the bus tests and the Python
driver's unit tests share one model of what a read or write does. Hardware-side events (an
interrupt set, a counter increment, a new status value) are applied with :meth:`CSRModel.hw_set`,
:meth:`~CSRModel.hw_incr`, :meth:`~CSRModel.hw_clear` and :meth:`~CSRModel.drive` between bus
transactions.
"""

from ahasd.spec.params import check_int

__all__ = ["CSRModel", "OKAY", "SLVERR"]

OKAY = 0b00
SLVERR = 0b10


class CSRModel:
    """Register file state and the effect of each bus transaction.

    Parameters
    ----------
    regmap : RegisterMap
        The registers (:func:`ahasd.hw.regmap.load`).
    """

    def __init__(self, regmap):
        self.regmap = regmap
        self.values = {}     # (ident, field) -> stored value (config/storage/intr/counter)
        self.inputs = {}     # (ident, field) -> value driven on a status input
        self.pulses = []     # (ident, field, value) emitted by writes to pulse fields
        self.reset()

    def reset(self):
        self.values.clear()
        self.inputs.clear()
        self.pulses.clear()
        for reg in self.regmap.registers:
            for f in reg.fields:
                if f.kind in ("config", "storage", "intr", "counter"):
                    self.values[reg.ident, f.name] = f.reset
                elif f.kind == "status":
                    self.inputs[reg.ident, f.name] = 0

    # ---- bus side ---------------------------------------------------------------------------
    def write(self, address, data, strobe=0xF):
        """Apply a write of ``data`` with byte ``strobe``; return the response code."""
        check_int("address", address, 0, 0xFFFF_FFFF)
        check_int("data", data, 0, 0xFFFF_FFFF)
        check_int("strobe", strobe, 0, 0xF)
        reg = self.regmap.at(address)
        if reg is None:
            return SLVERR
        mask = sum(0xFF << (8 * i) for i in range(4) if strobe >> i & 1)
        for f in reg.fields:
            key = (reg.ident, f.name)
            field_mask = (1 << f.width) - 1
            d = (data >> f.lsb) & field_mask
            m = (mask >> f.lsb) & field_mask
            if f.kind in ("config", "storage"):
                self.values[key] = (self.values[key] & ~m) | (d & m)
            elif f.kind == "intr":
                self.values[key] &= ~(d & m) & field_mask
            elif f.kind == "pulse" and d & m:
                self.pulses.append((reg.ident, f.name, d & m))
        return OKAY

    def read(self, address):
        """Return ``(data, response)`` of a read."""
        reg = self.regmap.at(check_int("address", address, 0, 0xFFFF_FFFF))
        if reg is None:
            return 0, SLVERR
        return self.peek(reg.ident), OKAY

    def peek(self, ident):
        """Value a read of register ``ident`` returns now."""
        reg = self.regmap[ident]
        word = 0
        for f in reg.fields:
            key = (reg.ident, f.name)
            if f.kind == "const":
                value = f.reset
            elif f.kind == "status":
                value = self.inputs[key]
            elif f.kind == "pulse":
                value = 0
            else:
                value = self.values[key]
            word |= value << f.lsb
        return word

    # ---- hardware side ----------------------------------------------------------------------
    def _field(self, ident, name, kinds):
        f = self.regmap[ident].field(name)
        if f.kind not in kinds:     # a relation of the register map, not a parameter value
            raise ValueError(f"{ident}.{name} is a {f.kind} field, not {' or '.join(kinds)}")
        return f

    def drive(self, ident, name, value):
        """A status input now carries ``value``."""
        f = self._field(ident, name, ("status",))
        self.inputs[ident, name] = check_int(f"{ident}.{name}", value, 0, (1 << f.width) - 1)

    def hw_set(self, ident, name, bits):
        """An interrupt event pulse with ``bits`` set."""
        f = self._field(ident, name, ("intr",))
        self.values[ident, name] |= check_int("bits", bits, 0, (1 << f.width) - 1)

    def hw_incr(self, ident, name, times=1):
        """``times`` counter increment pulses (saturating)."""
        f = self._field(ident, name, ("counter",))
        check_int("times", times, 0)
        self.values[ident, name] = min(self.values[ident, name] + times, (1 << f.width) - 1)

    def hw_clear(self, ident, name):
        """A counter clear pulse."""
        f = self._field(ident, name, ("counter",))
        if not f.hwclr:
            raise ValueError(f"{ident}.{name} has no hwclr input")
        self.values[ident, name] = 0
