"""Terminal tables that read at any width, in a terminal or a pipe.

:func:`print_table` prints a rich table when its natural width fits the console (the terminal's
width, ``COLUMNS``, or 80 columns in a pipe) and otherwise switches to a ``key: value`` layout,
one block per row, so that no line is wider than the console and no figure is ever cut or
wrapped inside (a long text value wraps between words). The columns are the caller's, with their
units in the header (``mm²``, ``[MHz]``, ``[s]``, ...); numbers are formatted by the caller in one
style: integers with thousands separators, fixed decimals per column.
"""

import textwrap

__all__ = ["print_table", "print_text", "render_stacked", "integer"]


def integer(value):
    """An integer figure in the tables' one style: ``12,345``; ``-`` for None."""
    return "-" if value is None else f"{int(value):,}"


def render_stacked(title, columns, rows, width):
    """The ``key: value`` layout of ``rows`` (lists of strings, ``columns`` their headers) as
    lines no wider than ``width`` (unless one word is wider): the first cell heads each block."""
    lines = textwrap.wrap(title, width) if title else []
    key_width = max((len(c) for c in columns[1:]), default=0) + 1
    for row in rows:
        lines.append("")
        lines.append(f"{columns[0]} {row[0]}" if columns[0] not in ("", "item") else str(row[0]))
        for column, cell in zip(columns[1:], row[1:]):
            head = f"  {column + ':':<{key_width}} "
            body = textwrap.wrap(str(cell), max(20, width - len(head)), break_long_words=False,
                                 break_on_hyphens=False) or [""]
            lines.append(head + body[0])
            lines.extend(" " * len(head) + more for more in body[1:])
    return lines


def print_table(title, columns, rows, *, console=None, left=("block",)):
    """Print ``rows`` (tuples of strings) under ``columns`` on ``console`` (default: a rich
    Console on standard output): a table when it fits, else :func:`render_stacked`. Columns
    named in ``left`` are left-aligned, the rest right-aligned. Title and cells are plain text
    (no rich markup)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.measure import Measurement
    from rich.table import Table

    console = console or Console()
    table = Table(title=escape(title))          # plain text: "[MHz]" is a unit, not markup
    for column in columns:
        table.add_column(escape(column), justify="left" if column in left else "right",
                         no_wrap=True)
    for row in rows:
        table.add_row(*(escape(str(cell)) for cell in row))
    # measured without the console's limit (a measurement is clamped to the width it is given)
    need = Measurement.get(console, console.options.update_width(1 << 16), table).maximum
    if need <= console.width:
        console.print(table)
        return
    for line in render_stacked(title, columns, rows, console.width):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def print_text(text, *, console=None):
    """Print a sentence or two of plain text (no rich markup) wrapped between words at the
    console's width (a terminal's, ``COLUMNS``, or 80 in a pipe)."""
    from rich.console import Console
    console = console or Console()
    for line in textwrap.wrap(text, console.width, break_long_words=False, break_on_hyphens=False):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
