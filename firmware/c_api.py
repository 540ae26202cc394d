"""The C driver's status codes and action bits (``firmware/ahasd_driver.h``) for Python code
that talks to the C firmware (the firmware-in-the-loop tests), read from the header itself so
there is one definition."""

import re

from ahasd.firmware.build import source_dir

__all__ = ["STATUS", "ACTIONS", "status_name"]


def _header():
    return (source_dir() / "ahasd_driver.h").read_text()


#: ``{"AHASD_OK": 0, "AHASD_ERR_BUS": -1, ...}``
STATUS = {m[1]: int(m[2]) for m in re.finditer(r"\b(AHASD_(?:OK|ERR_\w+)) = (-?\d+)", _header())}
#: ``{"EDC_STOP": 1, ...}``: the AHASD_ACT_* bits of ahasd_events.actions.
ACTIONS = {m[1]: 1 << int(m[2]) for m in re.finditer(r"\bAHASD_ACT_(\w+) = 1u << (\d+)", _header())}


def status_name(code):
    """The name of status ``code`` (e.g. ``-2`` -> ``"AHASD_ERR_TIMEOUT"``)."""
    for name, value in STATUS.items():
        if value == code:
            return name
    raise ValueError(f"{code!r} is not a status code of ahasd_driver.h")
