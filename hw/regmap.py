"""The controller's register map, compiled from ``hw/regs.rdl`` with systemrdl-compiler.

:func:`load` turns the SystemRDL source into a :class:`RegisterMap` (plain frozen dataclasses, no
Amaranth) from which everything else is derived: the CSR decoder (:class:`ahasd.hw.csr.CSR`, built
at elaboration), the C header, the Python constants and the Markdown reference
(:mod:`ahasd.firmware.regmap_export`), and the bus-level golden model (:class:`ahasd.sim.blocks.csr.CSRModel`).

Only the field kinds the generated RTL implements are accepted (see the comment at the top of
``regs.rdl``); anything else is rejected with a :class:`ValueError` naming the field, so that the
documentation can never promise a behaviour the hardware lacks.
"""

import functools
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RDL_PATH", "DATA_WIDTH", "KINDS", "Field", "Register", "RegisterMap", "compile_rdl",
           "load", "counter_fields", "narrow_counters"]

#: The register map source shipped with the package.
RDL_PATH = Path(__file__).resolve().parent / "regs.rdl"

#: Bus and register width in bits.
DATA_WIDTH = 32

#: Field kinds the RTL generator implements, with the SystemRDL properties that select them.
KINDS = {
    "const": "sw=r hw=na: a constant, its reset value",
    "status": "sw=r hw=w: read straight from a hardware input",
    "config": "sw=rw hw=r: storage driven to the hardware",
    "storage": "sw=rw hw=na: storage with no hardware connection",
    "pulse": "sw=rw hw=r singlepulse: one-cycle pulse of the written value, reads 0",
    "intr": "sw=rw hw=w intr onwrite=woclr: sticky, set by a hardware pulse, write 1 to clear",
    "counter": "sw=r hw=na counter incrsaturate [hwclr]: saturating event counter",
}


@dataclass(frozen=True)
class Field:
    """One field of a register.

    ``kind`` is a key of :data:`KINDS`; ``reset`` is ``None`` for fields without storage
    (``status``), whose value is whatever the hardware drives.
    """
    name: str
    lsb: int
    width: int
    kind: str
    reset: int | None
    hwclr: bool
    desc: str
    #: The field's SystemRDL ``encode`` enumeration as ``((name, value, desc), ...)``; empty
    #: for a plain number.
    encoding: tuple = ()

    @property
    def msb(self):
        return self.lsb + self.width - 1

    @property
    def mask(self):
        return ((1 << self.width) - 1) << self.lsb

    def extract(self, word):
        """This field's value in the register word ``word``."""
        return (word & self.mask) >> self.lsb

    def insert(self, word, value):
        """The register word ``word`` with this field set to ``value``."""
        if not 0 <= value < 1 << self.width:
            raise ValueError(f"field {self.name} holds {self.width} bits, not {value!r}")
        return word & ~self.mask | value << self.lsb

    @property
    def values(self):
        """``{name: value}`` of the field's enumeration (empty for a plain number)."""
        return {name: value for name, value, _ in self.encoding}

    @property
    def counting(self):
        """``"saturates"`` or ``"wraps"`` for an event counter, ``None`` otherwise.

        ``counter`` fields are the CSR's own saturating counters; a ``status`` field counts
        when its description says so (``(wraps)`` or ``saturating``), which is how
        ``hw/regs.rdl`` documents the counters kept in the blocks.
        """
        if self.kind == "counter":
            return "saturates"
        if self.kind == "status" and "(wraps)" in self.desc:
            return "wraps"
        if self.kind == "status" and "saturating" in self.desc:
            return "saturates"
        return None

    @property
    def writable(self):
        """Software writes change the field (or, for ``pulse`` / ``intr``, act on it)."""
        return self.kind in ("config", "storage", "pulse", "intr")


@dataclass(frozen=True)
class Register:
    """One 32-bit register at byte address ``address``; ``path`` is its hierarchical name."""
    path: tuple
    address: int
    title: str
    desc: str
    fields: tuple

    @property
    def ident(self):
        """Upper-case identifier, e.g. ``DRAFT_Q_STATUS``."""
        return "_".join(self.path).upper()

    @property
    def port_name(self):
        """Lower-case name of the register's port group on :class:`ahasd.hw.csr.CSR`."""
        return self.ident.lower()

    @property
    def reset(self):
        """Value read after reset, counting ``status`` fields as 0."""
        return sum((f.reset or 0) << f.lsb for f in self.fields)

    def field(self, name):
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"register {self.ident} has no field {name!r}")


@dataclass(frozen=True)
class RegisterMap:
    """All registers of an address map, in address order."""
    name: str
    title: str
    registers: tuple

    @property
    def size(self):
        """Bytes spanned by the map (highest register address + 4)."""
        return max(r.address for r in self.registers) + DATA_WIDTH // 8

    def __getitem__(self, ident):
        for r in self.registers:
            if r.ident == ident:
                return r
        raise KeyError(f"no register {ident!r} in {self.name}")

    def at(self, address):
        """The register at byte ``address`` (low two bits ignored), or ``None``."""
        word = address & ~(DATA_WIDTH // 8 - 1)
        for r in self.registers:
            if r.address == word:
                return r
        return None


def _kind(node):
    """Classify a systemrdl FieldNode into a :data:`KINDS` key, or raise ValueError."""
    from systemrdl.rdltypes import AccessType, OnWriteType
    prop = node.get_property
    sw, hw = prop("sw"), prop("hw")
    where = node.get_path()
    if prop("onread") is not None:
        raise ValueError(f"field {where}: read side effects are not supported")
    onwrite = prop("onwrite")
    if prop("counter"):
        if sw != AccessType.r or hw != AccessType.na or not prop("incrsaturate"):
            raise ValueError(f"field {where}: counters must be sw=r hw=na incrsaturate")
        return "counter"
    if prop("intr"):
        if sw != AccessType.rw or hw != AccessType.w or onwrite != OnWriteType.woclr:
            raise ValueError(f"field {where}: interrupts must be sw=rw hw=w onwrite=woclr")
        return "intr"
    if onwrite is not None:
        raise ValueError(f"field {where}: onwrite={onwrite.name} is only supported on intr fields")
    if prop("hwclr") or prop("hwset") or prop("we") or prop("wel") or prop("swmod") or \
            prop("swacc"):
        raise ValueError(f"field {where}: hwclr/hwset/we/wel/swmod/swacc are only supported as "
                         f"listed in ahasd.hw.regmap.KINDS")
    if sw == AccessType.r and hw == AccessType.na:
        return "const"
    if sw == AccessType.r and hw == AccessType.w:
        return "status"
    if sw == AccessType.rw and hw == AccessType.r:
        return "pulse" if prop("singlepulse") else "config"
    if sw == AccessType.rw and hw == AccessType.na:
        return "storage"
    raise ValueError(f"field {where}: sw={sw.name} hw={hw.name} is not supported "
                     f"(supported: {'; '.join(KINDS.values())})")


def compile_rdl(path=RDL_PATH):
    """Compile and elaborate ``path``; return the systemrdl ``RootNode``."""
    from systemrdl import RDLCompiler
    compiler = RDLCompiler()
    compiler.compile_file(str(path))
    return compiler.elaborate()


def _text(node, name):
    value = node.get_property(name)
    return " ".join(value.split()) if value else ""


def _encoding(node):
    """The ``encode`` enumeration of a field node as ``((name, value, desc), ...)``."""
    enum = node.get_property("encode")
    if enum is None:
        return ()
    return tuple((member.name, member.value, " ".join((member.rdl_desc or "").split()))
                 for member in enum)


@functools.lru_cache(maxsize=8)
def load(path=RDL_PATH):
    """Compile ``path`` into a :class:`RegisterMap` (cached per path)."""
    from systemrdl.node import RegNode
    root = compile_rdl(path)
    top = root.top
    registers = []
    for node in top.descendants(unroll=True):
        if not isinstance(node, RegNode):
            continue
        if node.get_property("regwidth") != DATA_WIDTH:
            raise ValueError(f"register {node.get_path()}: regwidth must be {DATA_WIDTH}")
        if node.is_array:
            raise ValueError(f"register {node.get_path()}: register arrays are not supported")
        fields = []
        for f in node.fields():
            kind = _kind(f)
            reset = f.get_property("reset")
            if kind != "status" and not isinstance(reset, int):
                reset = 0
            if kind == "status":
                reset = None
            fields.append(Field(name=f.inst_name, lsb=f.lsb, width=f.width, kind=kind,
                                reset=reset, hwclr=bool(f.get_property("hwclr")),
                                desc=_text(f, "desc"), encoding=_encoding(f)))
        path_parts = tuple(node.get_path_segments()[1:])
        registers.append(Register(path=path_parts, address=node.absolute_address,
                                  title=_text(node, "name"), desc=_text(node, "desc"),
                                  fields=tuple(fields)))
    registers.sort(key=lambda r: r.address)
    idents = [r.ident for r in registers]
    duplicates = sorted({i for i in idents if idents.count(i) > 1})
    if duplicates:
        raise ValueError(f"register identifiers collide: {', '.join(duplicates)}")
    return RegisterMap(name=top.inst_name, title=_text(top, "name"), registers=tuple(registers))


def counter_fields(regmap):
    """Every event counter of ``regmap`` as ``[(register, field), ...]`` in address order."""
    return [(r, f) for r in regmap.registers for f in r.fields if f.counting]


def narrow_counters(regmap, bits):
    """``regmap`` with every counter field narrowed to at most ``bits`` bits (a test build in
    which the counters reach saturation or wrap within a short simulation)."""
    import dataclasses
    registers = []
    for r in regmap.registers:
        fields = tuple(dataclasses.replace(f, width=min(f.width, bits)) if f.counting else f
                       for f in r.fields)
        registers.append(dataclasses.replace(r, fields=fields))
    return dataclasses.replace(regmap, registers=tuple(registers))
