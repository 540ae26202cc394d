"""The one error class of every trace format (EDC events, TVC transactions, decoding traces)."""

__all__ = ["TraceError"]


class TraceError(ValueError):
    """A trace that breaks its format; ``line`` is the 1-based number of the offending line.

    The message starts with ``line N:``. Line numbers are physical lines of the file: blank lines
    count, as in an editor or ``wc -l``.

    Parameters
    ----------
    line : int
        1-based line number (for an error about the file as a whole, such as a missing final event,
        the line after the last one).
    message : str
        What is wrong, naming the field and the value.
    """

    def __init__(self, line, message):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.reason = message
