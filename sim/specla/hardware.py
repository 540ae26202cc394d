"""Hardware figures of the SpecLA cost model, loaded from ``hardware.toml`` (sources there).

One frozen dataclass per device, validated on load, so that a system configuration can later
supply the same fields.
"""

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from ahasd.spec.params import check_instance, check_positive, check_real

__all__ = ["Hardware", "load_hardware", "HARDWARE_TOML"]

HARDWARE_TOML = Path(__file__).with_name("hardware.toml")


@dataclass(frozen=True, kw_only=True)
class Hardware:
    """A device as the roofline of :mod:`.costs` sees it.

    Parameters
    ----------
    name : str
    matrix_flops_per_s, vector_flops_per_s : float
        Peak for weight GEMMs and for the elementwise / GEMV state work.
    mem_bytes_per_s : float
        Bandwidth to the memory that holds weights and states.
    clock_hz : float
        Clock used to express times in cycles.
    state_bytes, weight_bytes : int
        Bytes per state (and factor) element and per weight.
    launch_s : float
        Fixed cost of one dependent kernel launch / command.
    compute_util, bw_util : float
        Fractions of the peaks reachable (0..1].
    """
    name: str
    matrix_flops_per_s: float
    vector_flops_per_s: float
    mem_bytes_per_s: float
    clock_hz: float
    state_bytes: int
    weight_bytes: int
    launch_s: float
    compute_util: float
    bw_util: float

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "name":
                if check_instance("name", value, str, what="non-empty string") == "":
                    raise ValueError("name must be a non-empty string, not ''")
            elif f.name.endswith("_bytes"):
                check_positive(f.name, value, integer=True)
            elif f.name == "launch_s":
                check_real(f.name, value, 0.0)
            elif f.name.endswith("_util"):
                check_real(f.name, value, 0.0, 1.0, low_open=True)
            else:
                check_positive(f.name, value)


def load_hardware(path=HARDWARE_TOML):
    """``{key: Hardware}`` from a TOML file of tables (``ValueError`` naming a bad table)."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    out = {}
    for key, table in data.items():
        try:
            out[key] = Hardware(**table)
        except TypeError as e:
            raise ValueError(f"[{key}]: {e}") from None
        except ValueError as e:
            raise ValueError(f"[{key}]: {e}") from None
    return out
