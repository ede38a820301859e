"""The signals that end a command, handled in one place: Ctrl-C (SIGINT), SIGTERM and SIGHUP raise
Interrupted in the main thread, once. The signals that follow are counted but interrupt nothing, so
that the cleanup the first one started (temporaries removed, children stopped) runs to its end; a
caller that waits on a child reads `received()` to hurry it. `deferred()` holds an interruption back
over steps that must not be cut in two (a report's files published together).

The command line installs the handlers (`handled()`); a library caller keeps its own.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A signal asked the command to stop; `detail` says what was done about it (for its one line)."""

    def __init__(self, signum: int, detail: str = "") -> None:
        super().__init__(signum)
        self.signum, self.detail = signum, detail

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # the shell's convention: 130 for Ctrl-C, 143 for SIGTERM


_received: list[int] = []  # signals since handled() began
_raised = False  # Interrupted was raised for the first one
_depth = 0  # deferred() blocks entered


def _handler(signum: int, frame: Any) -> None:
    global _raised
    _received.append(signum)
    if not _raised and not _depth:
        _raised = True
        raise Interrupted(signum)


def received() -> tuple[int, ...]:
    return tuple(_received)


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise Interrupted within the block (the main thread only: signal handlers
    can be set nowhere else); the previous handlers afterwards."""
    global _raised, _depth
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _handler) for sig in SIGNALS}
    _received.clear()
    _raised, _depth = False, 0
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """An interruption during the block is raised at its end (in place of an error that ends it)."""
    global _depth, _raised
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _received and not _raised:
            _raised = True
            raise Interrupted(_received[0])
