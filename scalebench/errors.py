"""Named errors: every failure a user can cause or meet has its own class and a one-line reason."""


class ScalebenchError(Exception):
    """Base of all errors the CLI reports as one line and a non-zero exit; `details`, when an error has
    several parts each worth its own line (the facts a partition lacks), follow it one per line."""

    def __init__(self, message: str = "", details: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.details = tuple(details)


class InputError(ScalebenchError):
    """A user-supplied value is out of range or unparsable (names the field)."""


class DeckError(ScalebenchError):
    """No valid HPL deck exists for the requested geometry and memory."""


class PeakError(ScalebenchError):
    """Rpeak cannot be derived (unknown microarchitecture, missing clock)."""


class ParseError(ScalebenchError):
    """A benchmark output holds no usable result."""


class ResultsError(ScalebenchError):
    """The results store cannot be read or written."""


class OutputError(ResultsError):
    """A file scalebench writes (a report, references, an index segment, provenance, stdout) cannot be
    written whole: a full disk, no permission, a read-only file system; the message names the file."""
