"""Markdown tables of the synthesis results (the README's generated sections)."""

__all__ = ["markdown_table"]


def markdown_table(columns, rows):
    """A GitHub Markdown table; the first column left-aligned, the others right-aligned."""
    def cell(value):
        return str(value).replace("|", "\\|")
    lines = ["| " + " | ".join(columns) + " |",
             "|" + "|".join([":---"] + ["---:"] * (len(columns) - 1)) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
