"""The command's output streams, guarded in one place: a reader that goes away (`scalebench accept | head
-1`) costs the rest of the output, never the verdict's exit code; a stdout that cannot be written (a full
disk, /dev/full) is an OutputError naming it (exit 2); stderr failing is let be, having no one to tell.
After either failure the stream's descriptor leads to /dev/null, so that nothing later (Python's own
flush at exit) fails on it again.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Any, Iterator, TextIO

from scalebench.errors import OutputError


def _silence(stream: TextIO) -> None:
    """Point the stream's descriptor at /dev/null: what is still buffered, and what follows, goes there."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


class Guarded:
    """A text stream whose write and flush never raise for a reader gone; see the module."""

    def __init__(self, stream: TextIO, name: str) -> None:
        self._stream, self._name = stream, name
        self.gone = False

    def write(self, text: Any) -> int:
        if not self.gone:
            try:
                return self._stream.write(text)
            except OSError as err:
                self._failed(err)
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except OSError as err:
                self._failed(err)

    def _failed(self, err: OSError) -> None:
        self.gone = True
        _silence(self._stream)
        if self._name == "stdout" and not isinstance(err, BrokenPipeError):
            raise OutputError(f"stdout: cannot write: {err.strerror or err}") from None

    @property
    def buffer(self) -> "Guarded":
        """The binary stream beneath, guarded as this one (bytes written straight to it)."""
        return Guarded(self._stream.buffer, self._name)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """sys.stdout and sys.stderr guarded within the block (flushed at its end), as they were after it."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Guarded(sys.stdout, "stdout"), Guarded(sys.stderr, "stderr")
    try:
        yield
    finally:
        with contextlib.suppress(OutputError):
            sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = streams
