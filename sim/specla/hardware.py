"""Hardware figures of the SpecLA cost model, loaded from ``hardware.toml`` (sources there).

One frozen dataclass per device, validated on load, so that a system configuration can later
supply the same fields.
"""

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from ahasd.spec.params import check_instance, check_int, check_positive, check_real

__all__ = ["Hardware", "load_hardware", "measured_commit", "HARDWARE_TOML", "RTL_TIMING_TOML",
           "COMMIT_FIELDS"]

HARDWARE_TOML = Path(__file__).with_name("hardware.toml")
#: The RTL's measured cycle table (``ahasd bench rtl-timing``), shared with the system simulator.
RTL_TIMING_TOML = Path(__file__).parent.parent / "system" / "configs" / "rtl_timing.toml"
#: Fields of :class:`Hardware` taken from that table's ``[state_commit]`` (``commit_`` + key).
COMMIT_FIELDS = ("base_cycles", "cycles_per_burst", "burst_bytes")


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
    commit_units : int
        State-commit units (``hw/state_commit.py``) that apply a factor commit, one head each
        at a time; 0 (default): the commit is a kernel on the roofline like the rest.
    commit_base_cycles, commit_cycles_per_burst, commit_burst_bytes : float, float, int
        One unit's cycles per head, ``base + per_burst * ceil(d_k d_v state_bytes / burst)``,
        measured on the RTL (:func:`measured_commit`; ``load_hardware`` fills them for a table
        with ``commit_units``).
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
    commit_units: int = 0
    commit_base_cycles: float = 0.0
    commit_cycles_per_burst: float = 0.0
    commit_burst_bytes: int = 0

    def __post_init__(self):
        check_int("commit_units", self.commit_units, 0)
        for name in COMMIT_FIELDS:
            value = getattr(self, f"commit_{name}")
            if self.commit_units:
                check_positive(f"commit_{name}", value, integer=name == "burst_bytes")
            else:
                check_real(f"commit_{name}", value, 0.0)
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name.startswith("commit_"):
                continue
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


def measured_commit(path=RTL_TIMING_TOML):
    """``{"commit_base_cycles", "commit_cycles_per_burst", "commit_burst_bytes"}`` from the
    ``[state_commit]`` table of the RTL's measured cycles (``ValueError`` if it is missing)."""
    with open(path, "rb") as f:
        table = tomllib.load(f).get("state_commit", {})
    missing = [k for k in COMMIT_FIELDS if k not in table]
    if missing:
        raise ValueError(f"{path}: [state_commit] lacks {', '.join(missing)} (run `ahasd bench "
                         f"rtl-timing`)")
    return {f"commit_{k}": table[k] for k in COMMIT_FIELDS}


def load_hardware(path=HARDWARE_TOML, timing=RTL_TIMING_TOML):
    """``{key: Hardware}`` from a TOML file of tables (``ValueError`` naming a bad table); a
    table with ``commit_units`` takes its commit cycles from ``timing`` (the RTL's measured
    table) unless it gives them."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    out = {}
    for key, table in data.items():
        if table.get("commit_units"):
            table = {**measured_commit(timing), **table}
        try:
            out[key] = Hardware(**table)
        except TypeError as e:
            raise ValueError(f"[{key}]: {e}") from None
        except ValueError as e:
            raise ValueError(f"[{key}]: {e}") from None
    return out
