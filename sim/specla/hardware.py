"""Hardware figures of the SpecLA cost model, loaded from ``hardware.toml`` (sources there).

One frozen dataclass per device, validated on load, so that a system configuration can later
supply the same fields.
"""

import math
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

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
                if not isinstance(value, str) or not value:
                    raise ValueError(f"name must be a non-empty string, not {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0 \
                    or (value == 0 and f.name != "launch_s"):
                raise ValueError(f"{f.name} must be a positive number, not {value!r}")
            if f.name.endswith("_util") and value > 1:
                raise ValueError(f"{f.name} must be at most 1, not {value!r}")
            if f.name.endswith("_bytes") and not isinstance(value, int):
                raise ValueError(f"{f.name} must be an integer, not {value!r}")


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
