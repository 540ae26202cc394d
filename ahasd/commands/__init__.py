"""One module per ``ahasd`` verb; see :mod:`ahasd.cli`."""
